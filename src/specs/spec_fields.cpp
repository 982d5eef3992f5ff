#include "specs/spec_fields.hpp"

namespace gpuvet {

namespace {
template <class T>
std::optional<double> d(const std::optional<T>& v) {
    return v ? std::optional<double>(double(*v)) : std::nullopt;
}
}  // namespace

#define GPUVET_FIELD(member, label, unit)                                  \
    SpecField {                                                            \
#member, label, unit, [](const GpuSpec& s) { return d(s.member); } \
    }

const std::vector<SpecField>& numeric_spec_fields() {
    static const std::vector<SpecField> fields = {
        SpecField{"memory_size_gib", "Memory", "GiB",
                  [](const GpuSpec& s) { return std::optional<double>(s.memory_size_gib); }},
        GPUVET_FIELD(memory_bandwidth_gbps, "Memory bandwidth", "GB/s"),
        GPUVET_FIELD(memory_bus_width_bits, "Memory bus width", "bits"),
        GPUVET_FIELD(sm_count, "SMs", ""),
        GPUVET_FIELD(compute_units, "Compute units", ""),
        GPUVET_FIELD(boost_clock_mhz, "Boost clock", "MHz"),
        GPUVET_FIELD(fp64_tflops, "FP64", "TFLOPS"),
        GPUVET_FIELD(fp32_tflops, "FP32", "TFLOPS"),
        GPUVET_FIELD(fp16_tflops, "FP16 (non-tensor)", "TFLOPS"),
        GPUVET_FIELD(bf16_tflops, "BF16 (non-tensor)", "TFLOPS"),
        GPUVET_FIELD(fp64_tensor_tflops, "FP64 tensor", "TFLOPS"),
        GPUVET_FIELD(tf32_tensor_tflops, "TF32 tensor", "TFLOPS"),
        GPUVET_FIELD(fp16_tensor_tflops, "FP16 tensor", "TFLOPS"),
        GPUVET_FIELD(bf16_tensor_tflops, "BF16 tensor", "TFLOPS"),
        GPUVET_FIELD(fp8_tensor_tflops, "FP8 tensor", "TFLOPS"),
        GPUVET_FIELD(int8_tensor_tops, "INT8 tensor", "TOPS"),
        GPUVET_FIELD(tdp_w, "TDP", "W"),
        GPUVET_FIELD(pcie_generation, "PCIe generation", ""),
        GPUVET_FIELD(pcie_lanes, "PCIe lanes", ""),
        GPUVET_FIELD(nvlink_generation, "NVLink generation", ""),
        GPUVET_FIELD(nvlink_links, "NVLink links", ""),
        GPUVET_FIELD(nvlink_bandwidth_gbps, "NVLink bandwidth", "GB/s"),
        GPUVET_FIELD(xgmi_links, "xGMI links", ""),
        GPUVET_FIELD(xgmi_link_bandwidth_gbps, "xGMI bandwidth per link", "GB/s"),
    };
    return fields;
}

#undef GPUVET_FIELD

}  // namespace gpuvet
