#include "monitor/export_metrics.hpp"

#include <fmt/format.h>

#include "gpu/clock_reasons.hpp"
#include "monitor/prometheus_text.hpp"

namespace gpuvet {

namespace {

using prom::Family;
using prom::Labels;

constexpr double kMiB = 1024.0 * 1024.0;

// dcgm-exporter's labels on every GPU series, in its order (internal/pkg/rendermetrics).
Labels gpu_labels(const MonitoredGpu& g, const ExportView& v) {
    Labels l = {{"gpu", std::to_string(g.index)},
                {"UUID", g.facts.uuid.value_or("")},
                {"pci_bus_id", g.facts.pci_bus_id.value_or("")},
                {"device", "nvidia" + std::to_string(g.index)},
                {"modelName", g.facts.name.value_or("")}};
    if (!v.hostname.empty()) l.emplace_back("hostname", v.hostname);
    if (!v.driver_version.empty()) l.emplace_back("DCGM_FI_DRIVER_VERSION", v.driver_version);
    return l;
}

Labels with(Labels l, const std::string& k, const std::string& val) {
    l.emplace_back(k, val);
    return l;
}

template <class T, class F>
void add_if(Family& f, const Labels& l, const Fact<T>& fact, F scale) {
    if (fact) f.add(l, scale(static_cast<double>(*fact)));
}
template <class T>
void add_if(Family& f, const Labels& l, const Fact<T>& fact) {
    add_if(f, l, fact, [](double x) { return x; });
}

// The reasons NVML reports, named as nvml.h's nvmlClocksEventReason* constants in snake case.
constexpr struct {
    std::uint64_t bit;
    const char* name;
} kReasons[] = {
    {clock_reason::kGpuIdle, "gpu_idle"},
    {clock_reason::kApplicationsClocksSetting, "applications_clocks_setting"},
    {clock_reason::kSwPowerCap, "sw_power_cap"},
    {clock_reason::kHwSlowdown, "hw_slowdown"},
    {clock_reason::kSyncBoost, "sync_boost"},
    {clock_reason::kSwThermalSlowdown, "sw_thermal_slowdown"},
    {clock_reason::kHwThermalSlowdown, "hw_thermal_slowdown"},
    {clock_reason::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {clock_reason::kDisplayClockSetting, "display_clock_setting"},
};

// The families in the order they are written. HELP texts and types of the DCGM_* ones are
// dcgm-exporter's (etc/default-counters.csv, etc/dcp-metrics-included.csv).
struct Page {
    Family sm_clock{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", {}};
    Family mem_clock{"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", {}};
    Family mem_temp{"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", {}};
    Family gpu_temp{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", {}};
    Family power{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", {}};
    Family replay{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", {}};
    Family util{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", {}};
    Family mem_util{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", {}};
    Family xid{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", {}};
    Family fb_free{"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", {}};
    Family fb_used{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", {}};
    Family fb_reserved{"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", {}};
    Family sbe_vol{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.", {}};
    Family dbe_vol{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.", {}};
    Family sbe_agg{"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter", "Total number of single-bit persistent ECC errors.", {}};
    Family dbe_agg{"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors.", {}};
    Family retired_sbe{
        "DCGM_FI_DEV_RETIRED_SBE", "counter", "Total number of retired pages due to single-bit errors.", {}};
    Family retired_dbe{
        "DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors.", {}};
    Family retired_pending{"DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement.", {}};
    Family nvlink{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                  "counter",
                  "Total number of NVLink bandwidth counters for all lanes.",
                  {}};
    Family rows_unc{
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors", {}};
    Family rows_cor{
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors", {}};
    Family remap_fail{"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", {}};
    Family sm_active{"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.", {}};
    Family sm_occupancy{"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.", {}};
    Family tensor{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", {}};
    Family dram{"DCGM_FI_PROF_DRAM_ACTIVE",
                "gauge",
                "Ratio of cycles the device memory interface is active sending or receiving data.",
                {}};
    Family pcie_tx{"DCGM_FI_PROF_PCIE_TX_BYTES",
                   "gauge",
                   "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
                   "payloads - in bytes per second.",
                   {}};
    Family pcie_rx{"DCGM_FI_PROF_PCIE_RX_BYTES",
                   "gauge",
                   "The rate of data received over the PCIe bus - including both protocol headers and data "
                   "payloads - in bytes per second.",
                   {}};
    // gpuvet's own.
    Family lost{
        "gpuvet_gpu_lost", "gauge", "1 when the GPU fell off the bus (its other series are dropped), else 0.", {}};
    Family reason{"gpuvet_clock_event_reason_active",
                  "gauge",
                  "1 while NVML reports this clock-event (throttle) reason for the GPU, else 0.",
                  {}};
    Family power_limit{"gpuvet_power_limit_watts", "gauge", "Power management limit now set (in W).", {}};
    Family power_enforced{"gpuvet_power_enforced_limit_watts", "gauge", "Power limit the driver enforces (in W).", {}};
    Family power_default{"gpuvet_power_default_limit_watts", "gauge", "Default power limit of the board (in W).", {}};
    Family power_max{"gpuvet_power_max_limit_watts", "gauge", "Highest power limit the board accepts (in W).", {}};
    Family pcie_gen{"gpuvet_pcie_link_generation", "gauge", "Current PCIe link generation.", {}};
    Family pcie_gen_max{
        "gpuvet_pcie_link_generation_max",
        "gauge",
        "Highest PCIe generation: of the GPU (limit=\"gpu\"), of the GPU and its slot (limit=\"link\").",
        {}};
    Family pcie_width{"gpuvet_pcie_link_width", "gauge", "Current PCIe link width (lanes).", {}};
    Family pcie_width_max{
        "gpuvet_pcie_link_width_max", "gauge", "Widest PCIe link the GPU and its slot allow (lanes).", {}};
    Family nvlink_rx{
        "gpuvet_nvlink_rx_bytes_per_second", "gauge", "NVLink data received over all links (bytes/s).", {}};
    Family nvlink_tx{"gpuvet_nvlink_tx_bytes_per_second", "gauge", "NVLink data sent over all links (bytes/s).", {}};
    Family verdict{"gpuvet_check_verdict",
                   "gauge",
                   "Verdict of the last gpuvet check report per check and GPU: 1 for its verdict, 0 for the others.",
                   {}};
    Family run_verdict{"gpuvet_check_run_verdict",
                       "gauge",
                       "Verdict of the whole last gpuvet check report: 1 for its verdict, 0 for the others.",
                       {}};
    Family measurement{"gpuvet_check_measurement",
                       "gauge",
                       "A figure the last gpuvet check measured, in the unit its label names.",
                       {}};
    Family spec{"gpuvet_check_reference_spec", "gauge", "The spec-sheet value the figure is judged against.", {}};
    Family fail_below{"gpuvet_check_reference_fail_below", "gauge", "The floor below which the figure fails.", {}};
    Family report_ok{"gpuvet_check_report_readable",
                     "gauge",
                     "1 when the last read of --check-report succeeded, 0 when it failed (older figures shown).",
                     {}};
    Family age{"gpuvet_sample_age_seconds", "gauge", "Seconds since the last complete sample of the GPUs ended.", {}};
    Family duration{
        "gpuvet_sample_duration_seconds", "gauge", "How long the last sample of every GPU took (in s).", {}};
    Family stale{"gpuvet_sample_stale",
                 "gauge",
                 "1 when the last sample is older than the bound, so the GPU series are dropped, else 0.",
                 {}};
    Family samples{"gpuvet_samples_total", "counter", "Samples of every GPU completed since export started.", {}};
    Family build{"gpuvet_build_info", "gauge", "gpuvet's version; always 1.", {}};
};

void add_device(Page& p, const MonitoredGpu& g, const GpuReading& r, const ExportView& v) {
    const Labels l = gpu_labels(g, v);
    p.lost.add(l, r.lost ? 1 : 0);
    if (r.lost) return;  // every other reading is absent: no series, not zeros
    const DeviceSample& s = r.sample;
    add_if(p.sm_clock, l, s.clock_sm_mhz);
    add_if(p.mem_clock, l, s.clock_mem_mhz);
    add_if(p.mem_temp, l, s.temperature_memory_c);
    add_if(p.gpu_temp, l, s.temperature_c);
    add_if(p.power, l, s.power_draw_w);
    add_if(p.replay, l, s.pcie_replay_count);
    add_if(p.util, l, s.utilization_gpu_percent);
    add_if(p.mem_util, l, s.utilization_memory_percent);
    if (v.xid_absent_reason.empty()) {
        // Watching: no Xid yet reads 0, as dcgm-exporter shows it (there is no Xid 0).
        auto it = v.last_xid.find(g.index);
        p.xid.add(l, it == v.last_xid.end() ? 0 : static_cast<double>(it->second));
    }
    auto mib = [](double b) { return b / kMiB; };
    add_if(p.fb_free, l, s.memory_free_bytes, mib);
    add_if(p.fb_used, l, s.memory_used_bytes, mib);
    add_if(p.fb_reserved, l, g.facts.memory_reserved_bytes, mib);
    add_if(p.sbe_vol, l, s.ecc.volatile_corrected);
    add_if(p.dbe_vol, l, s.ecc.volatile_uncorrected);
    add_if(p.sbe_agg, l, s.ecc.aggregate_corrected);
    add_if(p.dbe_agg, l, s.ecc.aggregate_uncorrected);
    add_if(p.retired_sbe, l, s.retired_pages_single_bit);
    add_if(p.retired_dbe, l, s.retired_pages_double_bit);
    add_if(p.retired_pending, l, s.retired_pages_pending);
    // DCGM's field 449 is a rate in MB/s over all links, though dcgm-exporter types it a counter.
    if (r.nvlink_rx_bytes_per_s && r.nvlink_tx_bytes_per_s)
        p.nvlink.add(l, (*r.nvlink_rx_bytes_per_s + *r.nvlink_tx_bytes_per_s) / 1e6);
    add_if(p.rows_unc, l, s.remapped_rows_uncorrectable);
    add_if(p.rows_cor, l, s.remapped_rows_correctable);
    add_if(p.remap_fail, l, s.remap_failure);
    // GPM reports percentages; DCGM's profiling fields are ratios from 0 to 1.
    auto ratio = [](double pct) { return pct / 100.0; };
    add_if(p.sm_active, l, s.gpm_sm_activity_percent, ratio);
    add_if(p.sm_occupancy, l, s.gpm_sm_occupancy_percent, ratio);
    add_if(p.tensor, l, s.gpm_tensor_activity_percent, ratio);
    add_if(p.dram, l, s.gpm_dram_bandwidth_percent, ratio);
    add_if(p.pcie_tx, l, s.pcie_tx_bytes_per_s);
    add_if(p.pcie_rx, l, s.pcie_rx_bytes_per_s);

    if (s.clock_event_reasons)
        for (const auto& reason : kReasons)
            p.reason.add(with(l, "reason", reason.name), (*s.clock_event_reasons & reason.bit) ? 1 : 0);
    add_if(p.power_limit, l, s.power_limit_w);
    add_if(p.power_enforced, l, s.power_enforced_limit_w);
    add_if(p.power_default, l, g.facts.power_default_limit_w);
    add_if(p.power_max, l, g.facts.power_max_limit_w);
    add_if(p.pcie_gen, l, s.pcie_gen_current);
    add_if(p.pcie_gen_max, with(l, "limit", "gpu"), g.facts.pcie_gen_max_gpu);
    add_if(p.pcie_gen_max, with(l, "limit", "link"), g.facts.pcie_gen_max_host);
    add_if(p.pcie_width, l, s.pcie_width_current);
    add_if(p.pcie_width_max, l, g.facts.pcie_width_max);
    add_if(p.nvlink_rx, l, r.nvlink_rx_bytes_per_s);
    add_if(p.nvlink_tx, l, r.nvlink_tx_bytes_per_s);
}

const char* const kCheckVerdicts[] = {"PASS", "WARN", "FAIL", "SKIP", "ERROR"};
const char* const kRunVerdicts[] = {"PASS", "WARN", "FAIL", "INCOMPLETE", "COULD_NOT_RUN"};

void add_report(Page& p, const ExportView& v) {
    p.report_ok.add({}, v.report_problem.empty() ? 1 : 0);
    const CheckReportSummary& r = *v.report;
    for (const char* name : kRunVerdicts) p.run_verdict.add({{"verdict", name}}, r.run_verdict == name ? 1 : 0);
    for (const ReportedCheck& c : r.checks) {
        Labels cl = {{"check", c.key}};
        if (c.gpu) cl.emplace_back("gpu", std::to_string(*c.gpu));
        for (const char* name : kCheckVerdicts) p.verdict.add(with(cl, "verdict", name), c.verdict == name ? 1 : 0);
        for (const ReportedMeasurement& m : c.measurements) {
            Labels ml = {{"check", c.key}};
            if (m.gpu) ml.emplace_back("gpu", std::to_string(*m.gpu));
            ml.emplace_back("measurement", m.key);
            ml.emplace_back("unit", m.unit);
            p.measurement.add(ml, m.value);
            if (m.spec) p.spec.add(ml, *m.spec);
            if (m.fail_below) p.fail_below.add(ml, *m.fail_below);
        }
    }
}

}  // namespace

std::chrono::milliseconds stale_after(std::chrono::milliseconds interval) {
    return 3 * interval + std::chrono::seconds(5);
}

std::string render_metrics(const ExportView& v, std::chrono::steady_clock::time_point now,
                           std::chrono::milliseconds interval) {
    Page p;
    std::vector<std::string> notes;
    p.build.add({{"version", GPUVET_VERSION}}, 1);
    if (!v.tick) {
        notes.push_back("gpuvet: no sample of the GPUs has completed yet; GPU series follow after the first");
    } else {
        const double age_s = std::chrono::duration<double>(now - v.tick_done).count();
        const bool stale = now - v.tick_done > stale_after(interval);
        p.age.add({}, age_s);
        p.duration.add({}, v.tick_duration_s);
        p.samples.add({}, static_cast<double>(v.ticks));
        p.stale.add({}, stale ? 1 : 0);
        if (stale) {
            notes.push_back(
                fmt::format("gpuvet: the last sample ended {:.1f} s ago, more than the bound of {:.1f} s: "
                            "the driver is not answering in time, so the GPU series are dropped",
                            age_s, stale_after(interval).count() / 1000.0));
        } else if (v.gpus) {
            for (const GpuReading& r : v.tick->gpus)
                for (const MonitoredGpu& g : *v.gpus)
                    if (g.index == r.index) {
                        if (!g.unopened_reason.empty())
                            notes.push_back("gpuvet: GPU " + std::to_string(g.index) +
                                            " could not be opened: " + g.unopened_reason);
                        add_device(p, g, r, v);
                    }
        }
    }
    if (!v.xid_absent_reason.empty())
        notes.push_back("gpuvet: DCGM_FI_DEV_XID_ERRORS is left out: " + v.xid_absent_reason);
    if (v.report) {
        if (!v.report_problem.empty()) notes.push_back("gpuvet: --check-report: " + v.report_problem);
        add_report(p, v);
    }

    std::string out;
    out.reserve(32 * 1024);
    for (const std::string& n : notes) prom::write_comment(out, n);
    for (const Family* f : {&p.sm_clock,
                            &p.mem_clock,
                            &p.mem_temp,
                            &p.gpu_temp,
                            &p.power,
                            &p.replay,
                            &p.util,
                            &p.mem_util,
                            &p.xid,
                            &p.fb_free,
                            &p.fb_used,
                            &p.fb_reserved,
                            &p.sbe_vol,
                            &p.dbe_vol,
                            &p.sbe_agg,
                            &p.dbe_agg,
                            &p.retired_sbe,
                            &p.retired_dbe,
                            &p.retired_pending,
                            &p.nvlink,
                            &p.rows_unc,
                            &p.rows_cor,
                            &p.remap_fail,
                            &p.sm_active,
                            &p.sm_occupancy,
                            &p.tensor,
                            &p.dram,
                            &p.pcie_tx,
                            &p.pcie_rx,
                            &p.lost,
                            &p.reason,
                            &p.power_limit,
                            &p.power_enforced,
                            &p.power_default,
                            &p.power_max,
                            &p.pcie_gen,
                            &p.pcie_gen_max,
                            &p.pcie_width,
                            &p.pcie_width_max,
                            &p.nvlink_rx,
                            &p.nvlink_tx,
                            &p.verdict,
                            &p.run_verdict,
                            &p.measurement,
                            &p.spec,
                            &p.fail_below,
                            &p.report_ok,
                            &p.age,
                            &p.duration,
                            &p.stale,
                            &p.samples,
                            &p.build})
        prom::write_family(out, *f);
    return out;
}

}  // namespace gpuvet
