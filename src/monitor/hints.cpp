#include "monitor/hints.hpp"

#include <algorithm>
#include <cmath>

#include "core/strings.hpp"
#include "monitor/clock_words.hpp"
#include "gpu/device/derived_facts.hpp"

namespace gpuvet {

namespace {

std::string watts(double w) { return std::to_string(static_cast<long>(std::lround(w))) + " W"; }

std::string link(int gen, int width) { return std::string("Gen") + std::to_string(gen) + " x" + std::to_string(width); }

void power_cap(const DeviceFacts& f, const DeviceSample& s, const GpuSpec* spec, std::vector<Hint>& out) {
    if (!s.power_limit_w) return;
    double limit = *s.power_limit_w;
    if (f.power_default_limit_w && limit < kHintPowerCapFraction * *f.power_default_limit_w)
        out.push_back({HintLevel::Warn,
                       std::string("power-capped at ") + watts(limit) + " of " + watts(*f.power_default_limit_w),
                       "the board's default power limit (NVML)"});
    else if (!f.power_default_limit_w && spec && spec->tdp_w && limit < kHintPowerCapFraction * *spec->tdp_w)
        out.push_back({HintLevel::Warn, std::string("power-capped at ") + watts(limit) + " of " + watts(*spec->tdp_w),
                       "datasheet TDP (data/gpus.toml)"});
}

void pcie(const DeviceFacts& f, const DeviceSample& s, const GpuSpec* spec, std::vector<Hint>& out) {
    if (!s.pcie_gen_current || !s.pcie_width_current) return;
    // The most this slot and card can train to: the GPU's and the host's maxima, else the datasheet.
    int gen_max = pcie_gen_max_link(f).value_or(spec && spec->pcie_generation ? *spec->pcie_generation : 0);
    if (!f.pcie_gen_max_gpu && f.pcie_gen_max_host) gen_max = std::min(gen_max, *f.pcie_gen_max_host);
    int width_max = f.pcie_width_max.value_or(spec && spec->pcie_lanes ? *spec->pcie_lanes : 0);
    if (gen_max <= 0 || width_max <= 0) return;
    int gen = *s.pcie_gen_current, width = *s.pcie_width_current;
    // Idle GPUs lower the link generation to save power; a narrow link is wrong at any load.
    bool busy = s.utilization_gpu_percent.value_or(0) >= kHintBusyUtilizationPercent;
    if (width < width_max || (busy && gen < gen_max)) {
        std::string src = "NVML maximum link of the GPU and the host";
        std::string text =
            std::string("PCIe ") + link(gen, width) + " where " + link(gen_max, width_max) + " is possible";
        if (spec && spec->pcie_generation && *spec->pcie_generation > gen_max)
            text += std::string(" (the card does Gen") + std::to_string(*spec->pcie_generation) +
                    ": the slot holds it back)";
        out.push_back({HintLevel::Warn, text, src});
    }
}

void memory_idle(const DeviceFacts& f, const DeviceSample& s, std::vector<Hint>& out) {
    if (!f.memory_total_bytes || !s.memory_used_bytes || !s.utilization_gpu_percent || *f.memory_total_bytes == 0)
        return;
    double frac = static_cast<double>(*s.memory_used_bytes) / static_cast<double>(*f.memory_total_bytes);
    if (frac >= kMemoryFullFraction && *s.utilization_gpu_percent <= kHintIdleUtilizationPercent)
        out.push_back({HintLevel::Warn,
                       std::string("memory ") + std::to_string(static_cast<int>(std::floor(frac * 100))) +
                           "% full, utilization " + std::to_string(*s.utilization_gpu_percent) +
                           "%: the job is not feeding the GPU",
                       "memory in use is not compute in use (watch GPU-Util)"});
}

void hbm(const DeviceSample& s, const GpuSpec* spec, std::vector<Hint>& out) {
    if (!s.gpm_dram_bandwidth_percent) return;
    double pct = *s.gpm_dram_bandwidth_percent;
    if (pct < 1) return;  // an idle memory says nothing
    std::string text = std::string(spec && spec->memory_type.rfind("HBM", 0) == 0 ? "HBM" : "memory") + " at " +
                       std::to_string(static_cast<int>(std::lround(pct))) + "% of its bandwidth";
    if (spec && spec->memory_bandwidth_gbps)
        text += std::string(" (") + format_fixed(pct / 100 * *spec->memory_bandwidth_gbps / 1000, 2) + " of " +
                format_fixed(*spec->memory_bandwidth_gbps / 1000, 2) + " TB/s)";
    out.push_back({HintLevel::Info, text, "NVML GPM DRAM bandwidth %, datasheet bandwidth (data/gpus.toml)"});
}

void launch_bound(const DeviceSample& s, std::vector<Hint>& out) {
    if (!s.utilization_gpu_percent || !s.gpm_sm_activity_percent) return;
    if (*s.utilization_gpu_percent >= kLaunchBoundBusyPercent && *s.gpm_sm_activity_percent < kSmIneffectivePercent)
        out.push_back({HintLevel::Warn,
                       std::string("busy ") + std::to_string(*s.utilization_gpu_percent) + "% but only " +
                           std::to_string(static_cast<int>(std::lround(*s.gpm_sm_activity_percent))) +
                           "% of SMs active: small kernels or launch overhead",
                       "DCGM SM-activity guidance (GPU-Util counts time, not SMs)"});
}

void thermal(const DeviceFacts& f, const DeviceSample& s, std::vector<Hint>& out) {
    if (s.temperature_c && f.temperature_slowdown_c && *s.temperature_c >= *f.temperature_slowdown_c - kHintHotMarginC)
        out.push_back({HintLevel::Alert,
                       std::string("GPU at ") + std::to_string(*s.temperature_c) + " °C, slowdown at " +
                           std::to_string(*f.temperature_slowdown_c) + " °C",
                       "NVML slowdown threshold"});
    if (s.temperature_memory_c && f.temperature_memory_max_c &&
        *s.temperature_memory_c >= *f.temperature_memory_max_c - kHintHotMarginC)
        out.push_back({HintLevel::Alert,
                       std::string("memory at ") + std::to_string(*s.temperature_memory_c) + " °C, its maximum " +
                           std::to_string(*f.temperature_memory_max_c) + " °C",
                       "NVML memory maximum threshold"});
}

void clocks(const DeviceSample& s, std::vector<Hint>& out) {
    if (s.clock_event_reasons && clock_reasons_alarming(*s.clock_event_reasons))
        out.push_back({HintLevel::Alert, std::string("clocks held down: ") + clock_reasons_text(*s.clock_event_reasons),
                       "NVML clock-event reasons (DCGM fails on these)"});
}

}  // namespace

std::vector<Hint> gpu_hints(const DeviceFacts& facts, const DeviceSample& s, const GpuSpec* spec) {
    std::vector<Hint> out;
    clocks(s, out);
    thermal(facts, s, out);
    power_cap(facts, s, spec, out);
    pcie(facts, s, spec, out);
    memory_idle(facts, s, out);
    launch_bound(s, out);
    hbm(s, spec, out);
    return out;
}

}  // namespace gpuvet
