#include "monitor/export_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
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

bool is_amd(const MonitoredGpu& g) { return g.facts.vendor.value_or("") == "AMD"; }

// The AMD Device Metrics Exporter's labels (pkg/exporter/proto/exporterconfig.proto: GPU_ID,
// SERIAL_NUMBER, CARD_MODEL, the partition types, HOSTNAME, DRIVER_VERSION), lower case as it writes them.
Labels amd_labels(const MonitoredGpu& g, const ExportView& v, bool amd_only) {
    Labels l = {{"gpu_id", std::to_string(g.index)},
                {"serial_number", g.facts.serial.value_or("")},
                {"card_model", g.facts.name.value_or("")},
                {"gpu_compute_partition_type", g.facts.compute_partition.value_or("")},
                {"gpu_memory_partition_type", g.facts.memory_partition.value_or("")}};
    if (!v.hostname.empty()) l.emplace_back("hostname", v.hostname);
    // The view's driver version is AMD's only when every GPU is AMD's.
    if (amd_only && !v.driver_version.empty()) l.emplace_back("driver_version", v.driver_version);
    return l;
}

// "PCIE_BIF" is "bif" in the exporter's family names (gpu_ecc_correct_bif).
std::string block_word(std::string b) {
    if (b == "PCIE_BIF") b = "BIF";
    for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return b;
}

Family& block_family(Page& p, const std::string& name, const std::string& help) {
    for (Family& f : p.amd_ecc_blocks)
        if (f.name == name) return f;
    p.amd_ecc_blocks.push_back(Family{name, "gauge", help, {}});
    return p.amd_ecc_blocks.back();
}

double gt_per_s(int gen) {
    static const double rates[] = {0, 2.5, 5, 8, 16, 32, 64};
    return gen >= 1 && gen <= 6 ? rates[gen] : 0;
}

void add_amd_device(Page& p, const MonitoredGpu& g, const DeviceSample& s, const ExportView& v, bool amd_only) {
    const Labels l = amd_labels(g, v, amd_only);
    add_if(p.amd_gfx, l, s.utilization_gpu_percent);
    add_if(p.amd_umc, l, s.utilization_memory_percent);
    add_if(p.amd_edge, l, s.temperature_edge_c);
    add_if(p.amd_junction, l, s.temperature_c);
    add_if(p.amd_mem_temp, l, s.temperature_memory_c);
    add_if(p.amd_power, l, s.power_draw_w);
    auto clock = [&](const char* type) { return with(with(l, "clock_index", "0"), "clock_type", type); };
    add_if(p.amd_clock, clock("system"), s.clock_sm_mhz);
    add_if(p.amd_clock, clock("memory"), s.clock_mem_mhz);
    auto mib = [](double b) { return b / kMiB; };
    add_if(p.amd_vram_total, l, g.facts.memory_total_bytes, mib);
    add_if(p.amd_vram_used, l, s.memory_used_bytes, mib);
    add_if(p.amd_vram_free, l, s.memory_free_bytes, mib);
    add_if(p.amd_ecc_cor, l, s.ecc.volatile_corrected);
    add_if(p.amd_ecc_unc, l, s.ecc.volatile_uncorrected);
    for (const RasBlockCount& b : s.ras_blocks) {
        const std::string w = block_word(b.block);
        add_if(block_family(p, "gpu_ecc_correct_" + w, "Correctable ECC error in " + b.block + "."), l, b.correctable);
        add_if(block_family(p, "gpu_ecc_uncorrect_" + w, "Uncorrectable ECC error in " + b.block + "."), l,
               b.uncorrectable);
        add_if(block_family(p, "gpu_ecc_deferred_" + w, "Deferred ECC error in " + b.block + "."), l, b.deferred);
    }
    add_if(p.amd_replay, l, s.pcie_replay_count);
    if (s.pcie_gen_current && gt_per_s(*s.pcie_gen_current) > 0) p.amd_pcie_speed.add(l, gt_per_s(*s.pcie_gen_current));
    if (g.facts.pcie_gen_max_gpu && gt_per_s(*g.facts.pcie_gen_max_gpu) > 0)
        p.amd_pcie_max_speed.add(l, gt_per_s(*g.facts.pcie_gen_max_gpu));
    auto kb = [](double b) { return b / 1024; };
    add_if(p.amd_xgmi_rx, l, s.xgmi_read_bytes_total, kb);
    add_if(p.amd_xgmi_tx, l, s.xgmi_write_bytes_total, kb);
    add_if(p.amd_ppt, l, s.throttled_power_percent);
}

void add_dcgm_device(Page& p, const MonitoredGpu& g, const GpuReading& r, const ExportView& v) {
    const Labels l = gpu_labels(g, v);
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
}

// gpuvet's own series, for both vendors, under the labels of the vendor's exporter.
void add_own(Page& p, const MonitoredGpu& g, const GpuReading& r, const Labels& l) {
    const DeviceSample& s = r.sample;
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

void add_device(Page& p, const MonitoredGpu& g, const GpuReading& r, const ExportView& v, bool amd_only) {
    const Labels l = is_amd(g) ? amd_labels(g, v, amd_only) : gpu_labels(g, v);
    p.lost.add(l, r.lost ? 1 : 0);
    if (r.lost) return;                // every other reading is absent: no series, not zeros
    if (!r.no_answer.empty()) return;  // readings from before the hang are not current: no series
    if (is_amd(g)) add_amd_device(p, g, r.sample, v, amd_only);
    else add_dcgm_device(p, g, r, v);
    add_own(p, g, r, l);
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
            const bool amd_only = std::all_of(v.gpus->begin(), v.gpus->end(), is_amd);
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
                        add_device(p, g, r, v, amd_only);
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
    for (const Family* f : p.all()) prom::write_family(out, *f);
    return out;
}

}  // namespace gpuvet
