#include "monitor/run_session.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <variant>

#include "core/error.hpp"
#include "core/run_fields.hpp"
#include "monitor/run_rules.hpp"
#include "monitor/run_summary.hpp"
#include "monitor/top_model.hpp"
#include "specs/spec_db.hpp"
#include "gpu/device/derived_facts.hpp"

namespace gpuvet {

namespace {

// The readings a trial run takes each tick: everything the rules and the timeline use.
constexpr unsigned kRunReadings = kReadUtilization | kReadMemory | kReadPower | kReadClocks | kReadThermal |
                                  kReadPcieLink | kReadPcieThroughput | kReadNvLinkThroughput | kReadProcesses |
                                  kReadGpm;

template <class T>
double num(const Fact<T>& f, RunTimeline& tl, int gpu, const char* key) {
    if (f) return static_cast<double>(*f);
    tl.note_absent("gpu" + std::to_string(gpu) + "." + key, f.absent_reason);
    return kUnmeasured;
}

// The point's numbers that are the sample's facts as they are (the rest need a choice between two
// readings, an origin or the job's tree: run_gpu_point sets them); each key is the field table's.
struct PlainCopy {
    double GpuPoint::*point;
    std::variant<Fact<double> DeviceSample::*, Fact<int> DeviceSample::*, Fact<std::uint32_t> DeviceSample::*,
                 Fact<std::uint64_t> DeviceSample::*>
        sample;
};

const PlainCopy kPlainCopies[] = {
    {&GpuPoint::memory_used_bytes, &DeviceSample::memory_used_bytes},
    {&GpuPoint::power_w, &DeviceSample::power_draw_w},
    {&GpuPoint::sm_clock_mhz, &DeviceSample::clock_sm_mhz},
    {&GpuPoint::temperature_c, &DeviceSample::temperature_c},
    {&GpuPoint::pcie_rx_bytes_per_s, &DeviceSample::pcie_rx_bytes_per_s},
    {&GpuPoint::pcie_tx_bytes_per_s, &DeviceSample::pcie_tx_bytes_per_s},
    {&GpuPoint::pcie_gen, &DeviceSample::pcie_gen_current},
    {&GpuPoint::pcie_width, &DeviceSample::pcie_width_current},
    {&GpuPoint::pcie_replay_count, &DeviceSample::pcie_replay_count},
    {&GpuPoint::sm_activity_percent, &DeviceSample::gpm_sm_activity_percent},
    {&GpuPoint::sm_occupancy_percent, &DeviceSample::gpm_sm_occupancy_percent},
    {&GpuPoint::tensor_activity_percent, &DeviceSample::gpm_tensor_activity_percent},
    {&GpuPoint::dram_bandwidth_percent, &DeviceSample::gpm_dram_bandwidth_percent},
};

const char* key_of(double GpuPoint::*m) {
    for (const GpuSignal& f : kGpuSignals)
        if (auto d = std::get_if<double GpuPoint::*>(&f.point); d && *d == m) return f.key;
    throw std::logic_error("a sampled GpuPoint field has no row in kGpuSignals");
}

TickOrigin tick_origin(FigureSource s) {
    switch (s) {
        case FigureSource::kIntervalMean: return TickOrigin::kIntervalMean;
        case FigureSource::kCounterDifference: return TickOrigin::kCounterDifference;
        case FigureSource::kPointRead: break;
    }
    return TickOrigin::kPointRead;
}

}  // namespace

RunGpuFacts run_gpu_facts(const MonitoredGpu& g, const GpuSpec* spec) {
    RunGpuFacts f;
    f.index = g.index;
    f.unopened_reason = g.unopened_reason;
    f.name = g.facts.name.value_or("GPU " + std::to_string(g.index));
    const std::string& why = g.facts.nvlink_absent_reason;
    f.amd = g.facts.vendor.value_or("") == "AMD";
    if (f.amd && g.facts.xgmi_absent_reason.empty() &&
        std::all_of(g.facts.xgmi_links.begin(), g.facts.xgmi_links.end(),
                    [](const XgmiLinkInfo& l) { return l.active.has_value(); })) {
        // xGMI joins AMD GPUs as NVLink joins NVIDIA's: a GPU with none talks over PCIe
        f.nvlink_active = active_xgmi_links(g.facts);
    } else if (why.empty()) {
        f.nvlink_active = active_nvlinks(g.facts);
    } else if (g.facts.nvlinks.empty() && g.facts.nvlink_none) {
        f.nvlink_active = 0;  // the driver says the GPU has none, as on PCIe cards without a bridge
    } else {
        f.nvlink_active =
            Fact<int>::absent(f.amd && !g.facts.xgmi_absent_reason.empty() ? g.facts.xgmi_absent_reason : why);
    }
    f.pcie_gen_max = pcie_gen_max_link(g.facts);
    f.pcie_width_max = g.facts.pcie_width_max;
    if (g.facts.clock_sm_max_mhz) f.sm_clock_max_mhz = *g.facts.clock_sm_max_mhz;
    if (g.facts.power_default_limit_w) f.power_default_limit_w = *g.facts.power_default_limit_w;
    if (g.facts.memory_total_bytes) f.memory_total_bytes = static_cast<double>(*g.facts.memory_total_bytes);
    f.temperature_slowdown_c = g.facts.temperature_slowdown_c;
    f.mig = g.facts.mig_enabled.value_or(false);
    // The spec's figure counts both directions of all the GPU's links; the active share of them.
    if (spec && spec->nvlink_bandwidth_gbps && f.nvlink_active.value_or(0) > 0) {
        double links = spec->nvlink_links ? *spec->nvlink_links : double(g.facts.nvlinks.size());
        if (links > 0)
            f.nvlink_capacity_bytes_per_s =
                *spec->nvlink_bandwidth_gbps * 1e9 / 2 * std::min(1.0, *f.nvlink_active / links);
    }
    return f;
}

GpuPoint run_gpu_point(const GpuReading& r, const std::set<int>& tree, RunTimeline& tl) {
    const DeviceSample& s = r.sample;
    const int i = r.index;
    GpuPoint g;
    g.lost = r.lost;
    // The interval mean where the driver buffers samples, unrounded; else the point read.
    g.utilization_percent =
        s.utilization_gpu.mean ? *s.utilization_gpu.mean : num(s.utilization_gpu_percent, tl, i, "utilization_percent");
    if (measured(g.utilization_percent)) {
        g.utilization_origin = tick_origin(s.utilization_gpu.origin.source);
        g.utilization_samples =
            s.utilization_gpu.origin.source == FigureSource::kIntervalMean ? s.utilization_gpu.origin.samples : 0;
    }
    // Absent on the first tick (a counter needs two reads): not a signal the GPU lacks.
    g.throttled_power_percent = s.throttled_power_percent.value_or(kUnmeasured);
    g.throttled_thermal_percent = s.throttled_thermal_percent.value_or(kUnmeasured);
    if (s.throttled_power_percent || s.throttled_thermal_percent) g.throttle_origin = TickOrigin::kCounterDifference;
    else if (s.clock_event_reasons) g.throttle_origin = TickOrigin::kPointRead;
    for (const PlainCopy& c : kPlainCopies)
        g.*c.point = std::visit([&](auto m) { return num(s.*m, tl, i, key_of(c.point)); }, c.sample);
    if (measured(g.power_w)) g.power_origin = tick_origin(s.power_w.origin.source);
    g.power_limit_w =
        s.power_enforced_limit_w ? *s.power_enforced_limit_w : num(s.power_limit_w, tl, i, "power_limit_w");
    if (measured(g.sm_clock_mhz)) g.sm_clock_origin = tick_origin(s.clock_sm.origin.source);
    if (s.clock_event_reasons) {
        g.reasons_known = true;
        g.clock_event_reasons = *s.clock_event_reasons;
    } else {
        tl.note_absent("gpu" + std::to_string(i) + ".clock_event_reasons", s.clock_event_reasons.absent_reason);
    }
    g.nvlink_rx_bytes_per_s = num(r.nvlink_rx_bytes_per_s, tl, i, "nvlink_rx_bytes_per_s");
    g.nvlink_tx_bytes_per_s = num(r.nvlink_tx_bytes_per_s, tl, i, "nvlink_tx_bytes_per_s");
    if (s.processes_absent_reason.empty()) {
        // NVML gives host pids: inside a container they do not match the tree (then 0 here, and
        // attribution falls back to the GPUs that did work).
        int job = 0;
        g.gpu_processes = static_cast<int>(s.processes.size());
        double bytes = 0;
        for (const GpuProcess& p : s.processes)
            if (tree.count(static_cast<int>(p.pid))) {
                ++job;
                bytes += static_cast<double>(p.used_memory_bytes.value_or(0));
            }
        g.job_processes = job;
        g.job_memory_bytes = bytes;
    } else {
        tl.note_absent("gpu" + std::to_string(i) + ".processes", s.processes_absent_reason);
    }
    return g;
}

RunSampler::RunSampler(const DeviceBackend* backend, const std::vector<int>& gpus, int root, std::size_t capacity)
    : host_(HostFs{}, root, -1), timeline_(capacity) {
    if (!backend || !backend->usable()) {
        no_gpu_ = backend ? backend->absent_reason() : "no GPU backend";
        return;
    }
    Fact<int> n = backend->device_count();
    if (!n || *n == 0) {
        no_gpu_ = n ? "the driver reports no GPU" : n.absent_reason;
        return;
    }
    monitor_ = std::make_unique<GpuMonitor>(*backend, gpus, kRunReadings);
    const SpecDb specs = SpecDb::embedded();
    for (const MonitoredGpu& g : monitor_->gpus()) {
        facts_.push_back(run_gpu_facts(g, spec_for(g.facts, specs)));
        timeline_.gpu_indexes.push_back(g.index);
        if (facts_.back().mig)
            news_.push_back("GPU " + std::to_string(g.index) +
                            " is in MIG mode: its utilization and GPM metrics are per instance or not readable; "
                            "the run goes on with what the driver gives");
        if (!g.unopened_reason.empty())
            news_.push_back("GPU " + std::to_string(g.index) + " could not be opened: " + g.unopened_reason);
    }
}

RunSampler::RunSampler(std::string no_gpu_reason, int root, std::size_t capacity)
    : host_(HostFs{}, root, -1), timeline_(capacity), no_gpu_(std::move(no_gpu_reason)) {}

const RunPoint& RunSampler::tick(double t_s) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point entered = Clock::now();
    RunPoint p;
    p.t_s = t_s;
    p.host = host_.sample(gpu_pids_);
    if (monitor_) {
        const Clock::time_point before = Clock::now();
        MonitorTick t = monitor_->sample();
        // The GPUs are read one after the other: their figures end about the middle of the sample.
        p.gpu_t_s = t_s + std::chrono::duration<double>(before - entered + (Clock::now() - before) / 2).count();
        gpu_pids_.clear();
        for (const GpuReading& r : t.gpus) {
            p.gpus.push_back(run_gpu_point(r, host_.tree(), timeline_));
            for (const GpuProcess& proc : r.sample.processes)
                if (host_.tree().count(static_cast<int>(proc.pid))) gpu_pids_.insert(static_cast<int>(proc.pid));
            if (r.lost && lost_told_.insert(r.index).second)
                news_.push_back("GPU " + std::to_string(r.index) + " was lost (fell off the bus) at " +
                                std::to_string(static_cast<int>(t_s)) + " s; the run goes on with the others");
        }
    }
    for (auto& [k, why] : host_.absent()) timeline_.note_absent("host." + k, why);
    timeline_.push(p);
    last_ = std::move(p);
    return last_;
}

std::vector<std::string> RunSampler::take_news() {
    std::vector<std::string> v;
    v.swap(news_);
    return v;
}

}  // namespace gpuvet
