// One GPU SKU as its datasheet describes it. Units are in the names; absent = the datasheet
// gives no figure (or the hardware has no such unit), never 0. Throughputs are dense figures.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

struct GpuSpec {
    std::string key;   // stable id: "h100-sxm5-80gb"
    std::string name;  // display: "H100 SXM5 80GB"
    std::string vendor = "NVIDIA";
    std::vector<std::string> aliases;           // extra ways people write it: "h100 sxm", "h100-80g"
    std::vector<std::string> driver_names;      // what NVML/nvidia-smi report: "NVIDIA H100 80GB HBM3"
    std::vector<std::uint32_t> pci_device_ids;  // PCI device ids of the vendor's PCI id (pci_vendor_id()), e.g. 0x2330

    std::string architecture;          // "Hopper", "CDNA 3"
    std::string compute_capability;    // "9.0" (NVIDIA)
    std::optional<int> sm_count;       // NVIDIA
    std::string gfx_target;            // "gfx942" (AMD): what code objects are built for
    std::optional<int> compute_units;  // AMD, per board (all dies)
    // GPUs the driver lists per board: 2 for an MI250X (two dies, each its own GPU with half the
    // memory and compute units). Memory and compute units are per board; per listed GPU they divide.
    int devices_per_board = 1;

    double memory_size_gib = 0;  // as sold (GPU memory "GB" are binary)
    // Total memory the driver reports (nvidia-smi / NVML), MiB: with ECC on (HBM parts: always), and
    // with ECC off (GDDR parts, whose in-band ECC costs capacity). Absent: no published figure, so
    // the rule in specs/driver_memory.hpp applies. driver_memory_source says where each comes from.
    std::optional<int> driver_memory_ecc_on_mib;
    std::optional<int> driver_memory_ecc_off_mib;
    std::string driver_memory_source;
    std::string memory_type;  // "HBM3", "GDDR6X"
    std::optional<int> memory_bus_width_bits;
    std::optional<double> memory_bandwidth_gbps;  // decimal GB/s
    std::optional<int> boost_clock_mhz;

    // Non-tensor (vector) FMA throughput.
    std::optional<double> fp64_tflops;
    std::optional<double> fp32_tflops;
    std::optional<double> fp16_tflops;  // half2 FMA on CUDA cores
    std::optional<double> bf16_tflops;  // bf162 FMA on CUDA cores
    // Tensor-core throughput, dense (without sparsity). FP16/BF16 with FP32 accumulate.
    std::optional<double> fp64_tensor_tflops;
    std::optional<double> tf32_tensor_tflops;
    std::optional<double> fp16_tensor_tflops;
    std::optional<double> bf16_tensor_tflops;
    std::optional<double> fp8_tensor_tflops;
    std::optional<double> int8_tensor_tops;

    std::optional<double> tdp_w;
    std::optional<int> pcie_generation;
    std::optional<int> pcie_lanes;
    std::optional<int> nvlink_generation;  // absent: no NVLink
    std::optional<int> nvlink_links;
    std::optional<double> nvlink_bandwidth_gbps;     // total bidirectional per GPU, as NVIDIA quotes
    std::optional<int> xgmi_links;                   // AMD Infinity Fabric (xGMI) links per board; absent: none
    std::optional<double> xgmi_link_bandwidth_gbps;  // peak per link, as AMD quotes it
    bool ecc = false;
    int mig_instances_max = 0;  // 0: no MIG
    std::string form_factor;    // "SXM5", "PCIe", "NVL", "Superchip"
    std::string source;         // datasheet(s) the figures come from
    std::string notes;

    bool amd() const { return vendor == "AMD"; }
    // The PCI vendor id of pci_device_ids: 0x10de NVIDIA, 0x1002 AMD (0 for another vendor's file).
    std::uint32_t pci_vendor_id() const { return vendor == "NVIDIA" ? 0x10de : vendor == "AMD" ? 0x1002 : 0; }
    // Memory and compute units of one GPU as the driver lists it (a die of a multi-die board).
    double memory_per_device_gib() const { return memory_size_gib / devices_per_board; }
    std::optional<int> compute_units_per_device() const {
        return compute_units ? std::optional<int>(*compute_units / devices_per_board) : std::nullopt;
    }
};

inline constexpr std::uint32_t kPciVendorNvidia = 0x10de;
inline constexpr std::uint32_t kPciVendorAmd = 0x1002;

}  // namespace gpuvet
