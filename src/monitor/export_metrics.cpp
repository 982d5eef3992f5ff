#include "monitor/export_metrics.hpp"

#include <fmt/format.h>

#include <cctype>

#include "core/clock_reasons.hpp"
#include "core/result.hpp"
#include "monitor/export_page.hpp"
#include "monitor/prometheus_text.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

using export_page::Page;
using prom::Family;
using prom::Labels;

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

// A reason's label: nvml.h's nvmlClocksEventReason* name in snake case ("sw_power_cap"), from the
// one list of reason bits (core/clock_reasons.hpp).
std::string reason_label(const clock_reason::Name& n) {
    std::string s = n.nvml;
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The origin label's words for a source.
const char* origin_label(FigureSource s) {
    switch (s) {
        case FigureSource::kIntervalMean: return "interval_mean";
        case FigureSource::kCounterDifference: return "counter_difference";
        case FigureSource::kPointRead: break;
    }
    return "point_read";
}

// How utilization, power, the SM clock and the throttle figures of this sample were obtained, so a
// graph can tell an interval mean from a point read that a periodic job aliases with.
void add_origins(Page& p, const Labels& l, const DeviceSample& s) {
    auto info = [&](const char* figure, const char* origin) {
        p.origin.add(with(with(l, "figure", figure), "origin", origin), 1);
    };
    // A backend that fills only the point fields (AMD) reads at the instant: its origin's default.
    if (s.utilization_gpu_percent) info("utilization", origin_label(s.utilization_gpu.origin.source));
    if (s.power_draw_w) info("power", origin_label(s.power_w.origin.source));
    if (s.clock_sm_mhz) info("sm_clock", origin_label(s.clock_sm.origin.source));
    if (s.throttled_power_percent || s.throttled_thermal_percent) info("throttle", "counter_difference");
    else if (s.clock_event_reasons) info("throttle", "point_read");  // only the reason bits at the instant
    add_if(p.held, with(l, "limiter", "power"), s.throttled_power_percent);
    add_if(p.held, with(l, "limiter", "thermal"), s.throttled_thermal_percent);
}

void add_device(Page& p, const MonitoredGpu& g, const GpuReading& r, const ExportView& v) {
    const Labels l = gpu_labels(g, v);
    p.lost.add(l, r.lost ? 1 : 0);
    if (r.lost) return;                // every other reading is absent: no series, not zeros
    if (!r.no_answer.empty()) return;  // readings from before the hang are not current: no series
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
        for (const clock_reason::Name& reason : clock_reason::kNames)
            p.reason.add(with(l, "reason", reason_label(reason)), (*s.clock_event_reasons & reason.bit) ? 1 : 0);
    add_if(p.mig, l, g.facts.mig_enabled);
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
    add_origins(p, l, s);
}

// Every verdict gets a series (1 for the one that holds), labelled with the report's own word.
constexpr Verdict kCheckVerdicts[] = {Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Skip, Verdict::Error};
constexpr RunVerdict kRunVerdicts[] = {RunVerdict::Go, RunVerdict::GoWithWarnings, RunVerdict::NoGo,
                                       RunVerdict::Incomplete, RunVerdict::CouldNotRun};

void add_report(Page& p, const ExportView& v) {
    p.report_ok.add({}, v.report_problem.empty() ? 1 : 0);
    const CheckReportSummary& r = *v.report;
    for (RunVerdict rv : kRunVerdicts) {
        const char* name = to_string(rv);
        p.run_verdict.add({{"verdict", name}}, r.run_verdict == name ? 1 : 0);
    }
    for (const ReportedCheck& c : r.checks) {
        Labels cl = {{"check", c.key}};
        if (c.gpu) cl.emplace_back("gpu", std::to_string(*c.gpu));
        for (Verdict cv : kCheckVerdicts) {
            const char* name = to_string(cv);
            p.verdict.add(with(cl, "verdict", name), c.verdict == name ? 1 : 0);
        }
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
                        if (g.facts.mig_enabled.value_or(false))
                            notes.push_back("gpuvet: GPU " + std::to_string(g.index) +
                                            " is in MIG mode: its MIG instances are not exported, only what NVML "
                                            "reports for the whole GPU");
                        if (!r.no_answer.empty())
                            notes.push_back("gpuvet: GPU " + std::to_string(g.index) +
                                            ": its series are left out: " + r.no_answer);
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
    for (const Family* f : p.in_order()) prom::write_family(out, *f);
    return out;
}

}  // namespace gpuvet
