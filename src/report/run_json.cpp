#include "report/run_json.hpp"

#include <cmath>
#include <type_traits>
#include <variant>

#include "core/error.hpp"
#include "core/run_fields.hpp"

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

// A summary's figures as the report writes them: null when not measured or unknown.
template <class S, std::size_t N>
void figures(Json& out, const S& s, const std::array<SummaryFigure<S>, N>& table) {
    for (const SummaryFigure<S>& f : table)
        std::visit(
            [&](auto m) {
                using T = std::remove_cvref_t<decltype(s.*m)>;
                if constexpr (std::is_same_v<T, double>) out[f.key] = num(s.*m);
                else if constexpr (std::is_same_v<T, std::optional<int>>)
                    out[f.key] = s.*m ? Json(*(s.*m)) : Json(nullptr);
                else out[f.key] = s.*m;
            },
            f.member);
}

template <class P, class S, std::size_t N>
void window_stats(Json& out, const S& s, const std::array<PointSignal<P, S>, N>& table) {
    for (const auto& f : table)
        if (f.window) out[f.key] = stat(s.*f.window);
}

Json gpu(const GpuRunSummary& g) {
    const RunGpuFacts& f = g.facts;
    Json j = {{"index", f.index},
              {"name", f.name},
              {"mig", f.mig},
              {"nvlink_active_links", f.nvlink_active ? Json(*f.nvlink_active) : Json(nullptr)},
              {"memory_total_bytes", num(f.memory_total_bytes)},
              {"sm_clock_max_mhz", num(f.sm_clock_max_mhz)}};
    window_stats(j, g, kGpuSignals);
    figures(j, g, kGpuFigures);
    return j;
}

Json host(const HostRunSummary& h) {
    Json j = Json::object();
    figures(j, h, kHostFigures);
    window_stats(j, h, kHostSignals);
    return j;
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
    for (const HostSignal& f : kHostSignals) {
        if (auto d = std::get_if<double HostPoint::*>(&f.point); d && f.series_unit)
            add_series(v, r, f.chart_key(), f.series_unit, std::nullopt,
                       [d = *d](const RunPoint& p) { return p.host.*d; });
    }
    for (std::size_t k = 0; k < r.gpu_indexes.size(); ++k)
        for (const GpuSignal& f : kGpuSignals)
            if (auto d = std::get_if<double GpuPoint::*>(&f.point); d && f.series_unit)
                add_series(v, r, f.chart_key(), f.series_unit, r.gpu_indexes[k],
                           [k, d = *d](const RunPoint& p) { return k < p.gpus.size() ? p.gpus[k].*d : kUnmeasured; });
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
