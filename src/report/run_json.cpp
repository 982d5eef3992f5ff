#include "report/run_json.hpp"

#include <cmath>

#include "core/error.hpp"

namespace gpuvet {

namespace {

Json num(double v) { return measured(v) && std::isfinite(v) ? Json(v) : Json(nullptr); }

Json stat(const Stat& s) {
    return Json{
        {"mean", num(s.mean)}, {"p5", num(s.p5)}, {"p50", num(s.p50)}, {"p95", num(s.p95)}, {"max", num(s.max)}};
}

Json finding(const RuleFinding& f) {
    return Json{{"id", f.id},
                {"title", f.title},
                {"severity", to_string(f.severity)},
                {"party", to_string(f.party)},
                {"message", f.message},
                {"action", f.action},
                {"source", f.source}};
}

Json gpu(const GpuRunSummary& g) {
    const RunGpuFacts& f = g.facts;
    return Json{{"index", f.index},
                {"name", f.name},
                {"mig", f.mig},
                {"lost", g.lost},
                {"lost_at_s", num(g.lost_at_s)},
                {"nvlink_active_links", f.nvlink_active >= 0 ? Json(f.nvlink_active) : Json(nullptr)},
                {"utilization_percent", stat(g.utilization_percent)},
                {"utilization_peak_percent", num(g.utilization_peak_percent)},
                {"sm_activity_percent", stat(g.sm_activity_percent)},
                {"sm_occupancy_percent", stat(g.sm_occupancy_percent)},
                {"tensor_activity_percent", stat(g.tensor_activity_percent)},
                {"dram_bandwidth_percent", stat(g.dram_bandwidth_percent)},
                {"memory_used_bytes", stat(g.memory_used_bytes)},
                {"memory_total_bytes", num(f.memory_total_bytes)},
                {"power_w", stat(g.power_w)},
                {"power_limit_w", num(g.power_limit_w)},
                {"sm_clock_mhz", stat(g.sm_clock_mhz)},
                {"sm_clock_max_mhz", num(f.sm_clock_max_mhz)},
                {"temperature_c", stat(g.temperature_c)},
                {"pcie_rx_bytes_per_s", stat(g.pcie_rx_bytes_per_s)},
                {"pcie_tx_bytes_per_s", stat(g.pcie_tx_bytes_per_s)},
                {"pcie_replays", num(g.pcie_replays)},
                {"nvlink_rx_bytes_per_s", stat(g.nvlink_rx_bytes_per_s)},
                {"nvlink_tx_bytes_per_s", stat(g.nvlink_tx_bytes_per_s)},
                {"power_cap_fraction", num(g.power_cap_fraction)},
                {"thermal_fraction", num(g.thermal_fraction)},
                {"power_brake_fraction", num(g.power_brake_fraction)},
                {"utilization_interval_share", num(g.utilization_interval_share)},
                {"utilization_samples_per_tick", num(g.utilization_samples_per_tick)},
                {"sm_clock_interval_share", num(g.sm_clock_interval_share)},
                {"power_counter_share", num(g.power_counter_share)},
                {"throttle_counter_share", num(g.throttle_counter_share)},
                {"job_processes_max", g.job_processes_max >= 0 ? Json(g.job_processes_max) : Json(nullptr)}};
}

Json host(const HostRunSummary& h) {
    return Json{{"cpus", h.cpus},
                {"processes_max", h.processes_max},
                {"workers_max", h.workers_max},
                {"named_workers_max", h.named_workers_max},
                {"tree_cpu_cores", stat(h.tree_cpu_cores)},
                {"main_cpu_cores", stat(h.main_cpu_cores)},
                {"workers_cpu_cores", stat(h.workers_cpu_cores)},
                {"runnable", stat(h.runnable)},
                {"blocked", stat(h.blocked)},
                {"rq_wait_fraction", stat(h.rq_wait_fraction)},
                {"host_busy_percent", stat(h.host_busy_percent)},
                {"steal_percent", stat(h.steal_percent)},
                {"psi_cpu_percent", stat(h.psi_cpu_percent)},
                {"psi_io_percent", stat(h.psi_io_percent)},
                {"psi_memory_percent", stat(h.psi_memory_percent)},
                {"disk_read_bytes_per_s", stat(h.disk_read_bytes_per_s)},
                {"rchar_bytes_per_s", stat(h.rchar_bytes_per_s)},
                {"disk_write_bytes_per_s", stat(h.disk_write_bytes_per_s)},
                {"net_rx_bytes_per_s", stat(h.net_rx_bytes_per_s)},
                {"net_tx_bytes_per_s", stat(h.net_tx_bytes_per_s)},
                {"memory_used_bytes", stat(h.memory_used_bytes)},
                {"swap_used_bytes", stat(h.swap_used_bytes)}};
}

void add_series(std::vector<TimeSeries>& out, const RunResult& r, const char* key, const char* unit,
                std::optional<int> gpu, const std::function<double(const RunPoint&)>& f) {
    TimeSeries s;
    s.key = key;
    s.unit = unit;
    s.gpu = gpu;
    bool any = false;
    for (const RunPoint& p : r.timeline) {
        s.t_s.push_back(p.t_s);
        double v = f(p);
        any = any || measured(v);
        s.values.push_back(v);
    }
    if (any) out.push_back(std::move(s));  // a signal never measured is absent, not a line of nulls
}

}  // namespace

std::vector<TimeSeries> run_series(const RunResult& r) {
    std::vector<TimeSeries> v;
    auto h = [&](const char* key, const char* unit, double HostPoint::*m) {
        add_series(v, r, key, unit, std::nullopt, [m](const RunPoint& p) { return p.host.*m; });
    };
    h("host_tree_cpu_cores", "cores", &HostPoint::tree_cpu_cores);
    h("host_main_cpu_cores", "cores", &HostPoint::main_cpu_cores);
    h("host_workers_cpu_cores", "cores", &HostPoint::workers_cpu_cores);
    h("host_busy_percent", "%", &HostPoint::host_busy_percent);
    h("host_psi_io_percent", "%", &HostPoint::psi_io_percent);
    h("host_psi_cpu_percent", "%", &HostPoint::psi_cpu_percent);
    h("host_disk_read_bytes_per_s", "B/s", &HostPoint::disk_read_bytes_per_s);
    h("host_rchar_bytes_per_s", "B/s", &HostPoint::rchar_bytes_per_s);
    h("host_net_rx_bytes_per_s", "B/s", &HostPoint::net_rx_bytes_per_s);
    h("host_memory_used_bytes", "B", &HostPoint::memory_used_bytes);
    for (std::size_t k = 0; k < r.gpu_indexes.size(); ++k) {
        auto g = [&](const char* key, const char* unit, double GpuPoint::*m) {
            add_series(v, r, key, unit, r.gpu_indexes[k],
                       [k, m](const RunPoint& p) { return k < p.gpus.size() ? p.gpus[k].*m : kUnmeasured; });
        };
        g("utilization_percent", "%", &GpuPoint::utilization_percent);
        g("sm_activity_percent", "%", &GpuPoint::sm_activity_percent);
        g("tensor_activity_percent", "%", &GpuPoint::tensor_activity_percent);
        g("dram_bandwidth_percent", "%", &GpuPoint::dram_bandwidth_percent);
        g("memory_used_bytes", "B", &GpuPoint::memory_used_bytes);
        g("power_w", "W", &GpuPoint::power_w);
        g("power_limit_w", "W", &GpuPoint::power_limit_w);
        g("temperature_c", "C", &GpuPoint::temperature_c);
        g("sm_clock_mhz", "MHz", &GpuPoint::sm_clock_mhz);
        g("pcie_rx_bytes_per_s", "B/s", &GpuPoint::pcie_rx_bytes_per_s);
        g("pcie_tx_bytes_per_s", "B/s", &GpuPoint::pcie_tx_bytes_per_s);
        g("nvlink_rx_bytes_per_s", "B/s", &GpuPoint::nvlink_rx_bytes_per_s);
        g("nvlink_tx_bytes_per_s", "B/s", &GpuPoint::nvlink_tx_bytes_per_s);
    }
    return v;
}

Json run_body(const RunResult& r) {
    Json j;
    Json run;
    run["command"] = r.command;
    run["tag"] = r.tag.empty() ? Json(nullptr) : Json(r.tag);
    run["note"] = r.note.empty() ? Json(nullptr) : Json(r.note);
    run["exit_code"] = r.exit_code;
    run["killed_by_signal"] = r.end && r.end->signaled ? Json(r.end->code) : Json(nullptr);
    run["stop_signal"] = r.stop_signal ? Json(r.stop_signal) : Json(nullptr);
    run["main_exited_at_s"] = r.end ? num(r.end->at_s) : Json(nullptr);
    run["wall_s"] = num(r.wall_s);
    run["orphans_reaped"] = r.orphans_reaped;
    run["interval_s"] = r.interval_s;
    run["window"] = {{"start_s", num(r.window_start_s)}, {"end_s", num(r.window_end_s)}, {"rule", r.window_rule}};
    run["no_gpu_reason"] = r.no_gpu_reason.empty() ? Json(nullptr) : Json(r.no_gpu_reason);
    run["notes"] = r.notes;
    const Diagnosis& d = r.diagnosis;
    Json diag;
    diag["primary"] = d.primary ? finding(*d.primary) : Json(nullptr);
    diag["others"] = Json::array();
    for (const RuleFinding& f : d.others) diag["others"].push_back(finding(f));
    diag["not_judged"] = d.not_judged;
    diag["gpu_used"] = d.gpu_used;
    diag["seed_peak_utilization_percent"] = num(d.seed_peak_percent);
    diag["seed_peak_reached"] = d.seed_peak_reached ? Json(*d.seed_peak_reached) : Json(nullptr);
    run["diagnosis"] = diag;
    run["gpus"] = Json::array();
    for (const GpuRunSummary& g : r.gpus) run["gpus"].push_back(gpu(g));
    run["host"] = host(r.host);
    run["processes"] = Json::array();
    for (const TreeProcess& p : r.processes)
        run["processes"].push_back({{"pid", p.pid},
                                    {"ppid", p.ppid},
                                    {"comm", p.comm},
                                    {"cmdline", p.cmdline},
                                    {"role", p.role},
                                    {"cpu_s", num(p.cpu_s)},
                                    {"read_bytes", num(p.read_bytes)},
                                    {"rchar", num(p.rchar)},
                                    {"write_bytes", num(p.write_bytes)}});
    run["absent"] = r.absent;
    run["record"] = r.record_path ? Json(*r.record_path) : Json(nullptr);
    run["timeline_points"] = r.timeline.size();
    run["timeline_thinned"] = r.timeline_thinned;
    run["timeline_bytes"] = r.timeline_bytes;
    j["run"] = run;
    j["series"] = Json::array();
    for (const TimeSeries& s : run_series(r)) {
        Json vals = Json::array();
        for (double x : s.values) vals.push_back(num(x));
        j["series"].push_back(Json{{"key", s.key},
                                   {"unit", s.unit},
                                   {"gpu", s.gpu ? Json(*s.gpu) : Json(nullptr)},
                                   {"t_s", s.t_s},
                                   {"values", vals}});
    }
    return j;
}

std::string render_run_json(const Envelope& e, const RunResult& r) { return render_document(e, run_body(r)); }

}  // namespace gpuvet
