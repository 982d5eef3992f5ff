#include "monitor/top_fields.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "core/strings.hpp"
#include "monitor/clock_words.hpp"
#include "gpu/device/derived_facts.hpp"

namespace gpuvet {

namespace {

FieldValue absent(std::string why) { return FieldValue{std::nullopt, std::nullopt, std::move(why)}; }

// A GPU the library could not open says why for every live field.
FieldValue unopened(const GpuView& v) { return absent(v.gpu.unopened_reason); }

template <class T>
FieldValue number(const GpuView& v, const Fact<T>& f, double scale = 1) {
    if (!v.gpu.unopened_reason.empty()) return unopened(v);
    if (!f) return absent(f.absent_reason);
    return FieldValue{static_cast<double>(*f) * scale, std::nullopt, {}};
}

FieldValue text(const GpuView& v, const Fact<std::string>& f) {
    if (!f) return absent(v.gpu.unopened_reason.empty() ? f.absent_reason : v.gpu.unopened_reason);
    return FieldValue{std::nullopt, *f, {}};
}

FieldValue text_value(std::string s) { return FieldValue{std::nullopt, std::move(s), {}}; }

// How an interval figure was obtained ("interval mean", "counter difference", "point read"); a
// backend that fills only the point field (AMD) reads at the instant. Absent with the figure's own
// reason when it was not read.
template <class T>
FieldValue origin(const GpuView& v, const IntervalFigure& f, const Fact<T>& point) {
    if (!v.gpu.unopened_reason.empty()) return unopened(v);
    if (f.mean) return text_value(figure_source_name(f.origin.source));
    return point ? text_value(figure_source_name(FigureSource::kPointRead)) : absent(point.absent_reason);
}

const DeviceSample& sample_of(const GpuView& v) { return v.reading.sample; }

const TopField kFields[] = {
    {"index", "", FieldKind::Number, 0, "the GPU's NVML index (nvidia-smi's)",
     [](const GpuView& v) {
         return FieldValue{double(v.gpu.index), std::nullopt, {}};
     }},
    {"name", "", FieldKind::Text, 0, "product name as the driver reports it",
     [](const GpuView& v) { return text(v, v.gpu.facts.name); }},
    {"uuid", "", FieldKind::Text, 0, "GPU UUID", [](const GpuView& v) { return text(v, v.gpu.facts.uuid); }},
    {"pci.bus_id", "", FieldKind::Text, 0, "PCI bus id, domain:bus:device.function",
     [](const GpuView& v) { return text(v, v.gpu.facts.pci_bus_id); }},
    {"state", "", FieldKind::Text, 0,
     "\"ok\", \"lost\" (fell off the bus while watched), \"no answer\" (a driver call abandoned at its "
     "deadline) or \"unopened\"",
     [](const GpuView& v) {
         return text_value(!v.gpu.unopened_reason.empty() ? "unopened"
                           : v.reading.lost               ? "lost"
                           : !v.reading.no_answer.empty() ? "no answer"
                                                          : "ok");
     }},
    {"mig.mode.current", "", FieldKind::Text, 0, "\"Enabled\" or \"Disabled\", as nvidia-smi",
     [](const GpuView& v) {
         const auto& m = v.gpu.facts.mig_enabled;
         return m ? text_value(*m ? "Enabled" : "Disabled") : absent(m.absent_reason);
     }},
    {"utilization.gpu", "%", FieldKind::Number, 0,
     "time a kernel was running: the mean of the driver's samples since the previous tick, else its last period",
     [](const GpuView& v) { return number(v, sample_of(v).utilization_gpu_percent); }},
    {"utilization.gpu.min", "%", FieldKind::Number, 0, "the least driver sample since the previous tick",
     [](const GpuView& v) { return number(v, sample_of(v).utilization_gpu.min); }},
    {"utilization.gpu.max", "%", FieldKind::Number, 0, "the greatest driver sample since the previous tick",
     [](const GpuView& v) { return number(v, sample_of(v).utilization_gpu.max); }},
    {"utilization.samples", "", FieldKind::Number, 0,
     "new driver samples averaged into utilization.gpu (0: none new, or a point read: see utilization.origin)",
     [](const GpuView& v) {
         const IntervalFigure& u = sample_of(v).utilization_gpu;
         if (!u.mean) return number(v, u.mean);
         return FieldValue{
             u.origin.source == FigureSource::kIntervalMean ? double(u.origin.samples) : 0.0, std::nullopt, {}};
     }},
    {"utilization.origin", "", FieldKind::Text, 0,
     "how utilization was obtained: \"interval mean\" of the driver's samples, or \"point read\" at the tick",
     [](const GpuView& v) { return origin(v, sample_of(v).utilization_gpu, sample_of(v).utilization_gpu_percent); }},
    {"utilization.memory", "%", FieldKind::Number, 0, "time device memory was being read or written (the same mean)",
     [](const GpuView& v) { return number(v, sample_of(v).utilization_memory_percent); }},
    {"memory.total", "MiB", FieldKind::Number, 0, "total memory the driver reports",
     [](const GpuView& v) { return number(v, v.gpu.facts.memory_total_bytes, 1 / kMiB); }},
    {"memory.reserved", "MiB", FieldKind::Number, 0, "memory the driver keeps for itself",
     [](const GpuView& v) { return number(v, v.gpu.facts.memory_reserved_bytes, 1 / kMiB); }},
    {"memory.used", "MiB", FieldKind::Number, 0, "memory in use, without the driver's reserve",
     [](const GpuView& v) { return number(v, sample_of(v).memory_used_bytes, 1 / kMiB); }},
    {"memory.free", "MiB", FieldKind::Number, 0, "memory free",
     [](const GpuView& v) { return number(v, sample_of(v).memory_free_bytes, 1 / kMiB); }},
    {"power.draw", "W", FieldKind::Number, 1,
     "board power: the energy counter's mean since the previous tick, else the driver's reading",
     [](const GpuView& v) { return number(v, sample_of(v).power_draw_w); }},
    {"power.origin", "", FieldKind::Text, 0,
     "how power.draw was obtained: \"counter difference\" (energy counter) or \"point read\" (the driver's reading)",
     [](const GpuView& v) { return origin(v, sample_of(v).power_w, sample_of(v).power_draw_w); }},
    {"power.limit", "W", FieldKind::Number, 0, "power limit in force (set by an administrator or the default)",
     [](const GpuView& v) { return number(v, sample_of(v).power_limit_w); }},
    {"enforced.power.limit", "W", FieldKind::Number, 0, "power limit the board enforces (the lowest of all limits)",
     [](const GpuView& v) { return number(v, sample_of(v).power_enforced_limit_w); }},
    {"power.default_limit", "W", FieldKind::Number, 0, "the board's default power limit",
     [](const GpuView& v) { return number(v, v.gpu.facts.power_default_limit_w); }},
    {"temperature.gpu", "C", FieldKind::Number, 0, "GPU core temperature, degrees Celsius",
     [](const GpuView& v) { return number(v, sample_of(v).temperature_c); }},
    {"temperature.memory", "C", FieldKind::Number, 0, "memory (HBM) temperature, degrees Celsius",
     [](const GpuView& v) { return number(v, sample_of(v).temperature_memory_c); }},
    {"fan.speed", "%", FieldKind::Number, 0, "fan speed (absent on passively cooled boards)",
     [](const GpuView& v) { return number(v, sample_of(v).fan_percent); }},
    {"clocks.sm", "MHz", FieldKind::Number, 0, "SM clock: the mean of the driver's samples since the previous tick",
     [](const GpuView& v) { return number(v, sample_of(v).clock_sm_mhz); }},
    {"clocks.sm.origin", "", FieldKind::Text, 0,
     "how clocks.sm was obtained: \"interval mean\" of the driver's clock samples or \"point read\"",
     [](const GpuView& v) { return origin(v, sample_of(v).clock_sm, sample_of(v).clock_sm_mhz); }},
    {"clocks.mem", "MHz", FieldKind::Number, 0, "memory clock",
     [](const GpuView& v) { return number(v, sample_of(v).clock_mem_mhz); }},
    {"clocks.max.sm", "MHz", FieldKind::Number, 0, "maximum SM clock",
     [](const GpuView& v) { return number(v, v.gpu.facts.clock_sm_max_mhz); }},
    {"clocks_event_reasons.active", "", FieldKind::Text, 0,
     "bitmask of the reasons clocks are held down, hex as nvidia-smi prints it",
     [](const GpuView& v) {
         const auto& f = sample_of(v).clock_event_reasons;
         if (!v.gpu.unopened_reason.empty()) return unopened(v);
         if (!f) return absent(f.absent_reason);
         char hex[24];
         std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(*f));
         return text_value(hex);
     }},
    {"clocks_event_reasons.words", "", FieldKind::Text, 0, "the same reasons in words (\"power cap, HW slowdown\")",
     [](const GpuView& v) {
         const auto& f = sample_of(v).clock_event_reasons;
         if (!v.gpu.unopened_reason.empty()) return unopened(v);
         return f ? text_value(clock_reasons_text(*f)) : absent(f.absent_reason);
     }},
    {"throttled.power", "%", FieldKind::Number, 0,
     "share of the time since the previous tick the power cap held the clocks down (violation counter)",
     [](const GpuView& v) { return number(v, sample_of(v).throttled_power_percent); }},
    {"throttled.thermal", "%", FieldKind::Number, 0,
     "share of the time since the previous tick a thermal slowdown held the clocks down (violation counter)",
     [](const GpuView& v) { return number(v, sample_of(v).throttled_thermal_percent); }},
    {"throttled.origin", "", FieldKind::Text, 0,
     "how throttling is known: \"counter difference\" (throttled.* from the violation counters) or \"point read\" "
     "(only the reason bits at the tick, which miss a slowdown between ticks)",
     [](const GpuView& v) {
         const DeviceSample& s = sample_of(v);
         if (!v.gpu.unopened_reason.empty()) return unopened(v);
         if (s.throttle_origin.source == FigureSource::kCounterDifference) return text_value("counter difference");
         if (s.clock_event_reasons) return text_value(figure_source_name(FigureSource::kPointRead));
         return absent(s.throttle_origin.note.empty() ? s.clock_event_reasons.absent_reason : s.throttle_origin.note);
     }},
    {"pcie.link.gen.current", "", FieldKind::Number, 0, "PCIe generation in use (idle GPUs lower it)",
     [](const GpuView& v) { return number(v, sample_of(v).pcie_gen_current); }},
    {"pcie.link.gen.max", "", FieldKind::Number, 0, "highest generation both the GPU and the host allow",
     [](const GpuView& v) { return number(v, pcie_gen_max_link(v.gpu.facts)); }},
    {"pcie.link.width.current", "", FieldKind::Number, 0, "PCIe lanes in use",
     [](const GpuView& v) { return number(v, sample_of(v).pcie_width_current); }},
    {"pcie.link.width.max", "", FieldKind::Number, 0, "most lanes the link allows",
     [](const GpuView& v) { return number(v, v.gpu.facts.pcie_width_max); }},
    {"pcie.rx", "MB/s", FieldKind::Number, 1, "PCIe receive throughput (decimal MB/s, NVML's 20 ms window)",
     [](const GpuView& v) { return number(v, sample_of(v).pcie_rx_bytes_per_s, 1 / kMBps); }},
    {"pcie.tx", "MB/s", FieldKind::Number, 1, "PCIe transmit throughput (decimal MB/s)",
     [](const GpuView& v) { return number(v, sample_of(v).pcie_tx_bytes_per_s, 1 / kMBps); }},
    {"nvlink.rx", "MB/s", FieldKind::Number, 1, "NVLink data received over all links, since the previous tick",
     [](const GpuView& v) { return number(v, v.reading.nvlink_rx_bytes_per_s, 1 / kMBps); }},
    {"nvlink.tx", "MB/s", FieldKind::Number, 1, "NVLink data sent over all links, since the previous tick",
     [](const GpuView& v) { return number(v, v.reading.nvlink_tx_bytes_per_s, 1 / kMBps); }},
    {"gpm.sm_active", "%", FieldKind::Number, 1, "GPM: SMs busy, since the previous tick (Hopper and newer)",
     [](const GpuView& v) { return number(v, sample_of(v).gpm_sm_activity_percent); }},
    {"gpm.sm_occupancy", "%", FieldKind::Number, 1, "GPM: warps resident vs the maximum",
     [](const GpuView& v) { return number(v, sample_of(v).gpm_sm_occupancy_percent); }},
    {"gpm.tensor_active", "%", FieldKind::Number, 1, "GPM: SMs doing tensor operations",
     [](const GpuView& v) { return number(v, sample_of(v).gpm_tensor_activity_percent); }},
    {"gpm.dram_bandwidth", "%", FieldKind::Number, 1, "GPM: memory bandwidth used vs the theoretical maximum",
     [](const GpuView& v) { return number(v, sample_of(v).gpm_dram_bandwidth_percent); }},
};

}  // namespace

std::span<const TopField> top_fields() { return kFields; }

const TopField& top_field(std::string_view key) {
    for (const auto& f : kFields)
        if (f.key == key) return f;
    throw std::logic_error(std::string("top: no field '") + std::string(key) + "'");
}

std::string field_text(const TopField& f, const FieldValue& v) {
    if (v.text) return *v.text;
    if (v.number) return format_fixed(*v.number, f.decimals);
    return "";
}

}  // namespace gpuvet
