#include "report/run_report_reader.hpp"

#include <optional>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/report_reader.hpp"
#include "core/result.hpp"
#include "core/run_fields.hpp"
#include "core/text_limits.hpp"
#include "core/text_safety.hpp"

namespace gpuvet {

using Json = nlohmann::ordered_json;

namespace {

double rd(const Json& j, const char* key) {
    auto it = j.find(key);
    return (it != j.end() && it->is_number()) ? it->get<double>() : kUnmeasured;
}
Stat rd_stat(const Json& j, const char* key) {
    Stat s;
    auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return s;
    s.mean = rd(*it, "mean");
    s.p5 = rd(*it, "p5");
    s.p50 = rd(*it, "p50");
    s.p95 = rd(*it, "p95");
    s.max = rd(*it, "max");
    return s;
}
RuleFinding rd_finding(const Json& j) {
    RuleFinding f;
    f.id = j.value("id", "");
    f.title = j.value("title", "");
    f.severity = rule_severity_of(j.value("severity", ""));
    f.party = rule_party_of(j.value("party", ""));
    f.message = j.value("message", "");
    f.action = j.value("action", "");
    f.source = j.value("source", "");
    return f;
}

std::string rd_str(const Json& j, const char* key) {
    auto it = j.find(key);
    return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
}

void read_diagnosis(const Json& d, Diagnosis& out) {
    if (d.contains("primary") && d["primary"].is_object()) out.primary = rd_finding(d["primary"]);
    if (d.contains("others") && d["others"].is_array())
        for (const Json& f : d["others"])
            if (f.is_object()) out.others.push_back(rd_finding(f));
    if (d.contains("not_judged") && d["not_judged"].is_array())
        for (const Json& n : d["not_judged"])
            if (n.is_string()) out.not_judged.push_back(n.get<std::string>());
    out.seed_peak_percent = rd(d, "seed_peak_utilization_percent");
    if (d.contains("seed_peak_reached") && d["seed_peak_reached"].is_boolean())
        out.seed_peak_reached = d["seed_peak_reached"].get<bool>();
    if (d.contains("gpu_used") && d["gpu_used"].is_boolean()) out.gpu_used = d["gpu_used"].get<bool>();
}

// The figures run_json wrote from the same tables; a figure that is null or of another type stays
// unmeasured (NaN, or an empty count).
template <class S, std::size_t N>
void read_figures(const Json& j, S& out, const std::array<SummaryFigure<S>, N>& table) {
    for (const SummaryFigure<S>& f : table)
        std::visit(
            [&](auto m) {
                using T = std::remove_cvref_t<decltype(out.*m)>;
                auto it = j.find(f.key);
                if constexpr (std::is_same_v<T, double>) out.*m = rd(j, f.key);
                else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::optional<int>>) {
                    if (it != j.end() && it->is_number_integer()) out.*m = it->template get<int>();
                } else if (it != j.end() && it->is_boolean()) out.*m = it->template get<bool>();
            },
            f.member);
}

template <class P, class S, std::size_t N>
void read_window_stats(const Json& j, S& out, const std::array<PointSignal<P, S>, N>& table) {
    for (const auto& f : table)
        if (f.window) out.*f.window = rd_stat(j, f.key);
}

GpuRunSummary read_gpu(const Json& g) {
    GpuRunSummary s;
    RunGpuFacts& f = s.facts;
    if (g.contains("index") && g["index"].is_number_integer()) f.index = g["index"].get<int>();
    f.name = rd_str(g, "name");
    if (g.contains("mig") && g["mig"].is_boolean()) f.mig = g["mig"].get<bool>();
    if (g.contains("nvlink_active_links") && g["nvlink_active_links"].is_number_integer())
        f.nvlink_active = g["nvlink_active_links"].get<int>();
    f.memory_total_bytes = rd(g, "memory_total_bytes");
    f.sm_clock_max_mhz = rd(g, "sm_clock_max_mhz");
    read_window_stats(g, s, kGpuSignals);
    read_figures(g, s, kGpuFigures);
    return s;
}

void read_host(const Json& h, HostRunSummary& out) {
    read_figures(h, out, kHostFigures);
    read_window_stats(h, out, kHostSignals);
}

std::optional<long long> integer_at(const Json& j, const char* key) {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_number_integer()) throw input_error(std::string("\"") + key + "\" is not an integer", "");
    return j[key].get<long long>();
}

// How the job ended, as run_json wrote it; a combination gpuvet never writes (a negative wall
// time, a kill by signal N whose exit code is not 128+N) is an edit, refused as check reports are.
void read_job_end(const Json& run, RunResult& r) {
    auto killed = integer_at(run, "killed_by_signal"), stop = integer_at(run, "stop_signal");
    auto code = integer_at(run, "exit_code");
    const std::string edited = "the file was edited: ";
    if (measured(r.wall_s) && r.wall_s < 0) throw input_error(edited + "wall_s is negative", "");
    if (code && (*code < 0 || *code > 255)) throw input_error(edited + "exit_code is outside 0-255", "");
    if (killed && (*killed < 1 || *killed > 64 || !code || *code != 128 + *killed))
        throw input_error(edited + "killed_by_signal " + std::to_string(*killed) + " with exit_code " +
                              (code ? std::to_string(*code) : "null") + " (a kill by signal N is exit 128+N)",
                          "");
    if (stop && (*stop < 1 || *stop > 64)) throw input_error(edited + "stop_signal is not a signal number", "");
    r.stop_signal = stop ? int(*stop) : 0;
    if (run.contains("main_exited_at_s") && run["main_exited_at_s"].is_number()) {
        JobEnd e;
        e.signaled = killed.has_value();
        e.code = killed ? int(*killed) : int(code.value_or(0));
        e.at_s = run["main_exited_at_s"].get<double>();
        r.end = e;
    }
}

void read_run_fields(const Json& run, RunResult& r) {
    if (run.contains("command") && run["command"].is_array())
        for (const Json& a : run["command"])
            if (a.is_string()) r.command.push_back(a.get<std::string>());
    r.tag = rd_str(run, "tag");
    r.note = rd_str(run, "note");
    if (run.contains("exit_code") && run["exit_code"].is_number_integer()) r.exit_code = run["exit_code"].get<int>();
    r.wall_s = rd(run, "wall_s");
    read_job_end(run, r);
    if (run.contains("window") && run["window"].is_object()) {
        r.window_start_s = rd(run["window"], "start_s");
        r.window_end_s = rd(run["window"], "end_s");
        r.window_rule = rd_str(run["window"], "rule");
    }
    r.no_gpu_reason = rd_str(run, "no_gpu_reason");
    if (run.contains("notes") && run["notes"].is_array())
        for (const Json& n : run["notes"])
            if (n.is_string()) r.notes.push_back(n.get<std::string>());
    if (run.contains("absent") && run["absent"].is_object())
        for (auto it = run["absent"].begin(); it != run["absent"].end(); ++it)
            if (it->is_string()) r.absent[it.key()] = it->get<std::string>();
    if (run.contains("diagnosis") && run["diagnosis"].is_object()) read_diagnosis(run["diagnosis"], r.diagnosis);
    if (run.contains("gpus") && run["gpus"].is_array())
        for (const Json& g : run["gpus"])
            if (g.is_object()) r.gpus.push_back(read_gpu(g));
    if (run.contains("host") && run["host"].is_object()) read_host(run["host"], r.host);
}

// One entry of `series`; values that are not numbers (null: not measured) become gaps.
std::optional<TimeSeries> read_series(const Json& s) {
    if (!s.is_object() || !s.contains("key") || !s["key"].is_string()) return std::nullopt;
    if (!s.contains("t_s") || !s["t_s"].is_array() || !s.contains("values") || !s["values"].is_array())
        return std::nullopt;
    TimeSeries out;
    out.key = s["key"].get<std::string>();
    out.unit = rd_str(s, "unit");
    if (s.contains("gpu") && s["gpu"].is_number_integer()) out.gpu = s["gpu"].get<int>();
    const Json& t = s["t_s"];
    const Json& v = s["values"];
    for (std::size_t i = 0; i < t.size() && i < v.size(); ++i) {
        if (!t[i].is_number()) continue;  // a point without a time cannot be placed
        out.t_s.push_back(t[i].get<double>());
        out.values.push_back(v[i].is_number() ? v[i].get<double>() : kUnmeasured);
    }
    return out;
}

}  // namespace

RunReportDoc read_run_report_doc(const std::string& text, const std::string& name) {
    check_json_nesting(text, name);
    Json j = Json::parse(text, nullptr, false);
    const std::string fix = "give the gpuvet-run.json that `gpuvet run --report DIR` wrote";
    if (j.is_discarded()) throw input_error(name + ": not JSON", fix);
    // Any key may hold any type in a user's file: every read checks the type first.
    auto command = j.is_object() ? j.find("command") : j.end();
    bool is_run = command != j.end() && command->is_string() && command->get<std::string>() == "run";
    if (!is_run || !j.contains("run") || !j["run"].is_object())
        throw input_error(name + ": not a gpuvet run report (no \"command\": \"run\" with a \"run\" object)", fix);
    // Control characters in a crafted file stay inert in every printer; a job's arguments may hold
    // line breaks (python -c "..."), which the printers lay out themselves.
    Json argv = j["run"].contains("command") ? j["run"]["command"] : Json();
    make_strings_visible(j);
    if (!argv.is_null()) {
        make_strings_visible(argv, true);
        j["run"]["command"] = argv;
    }
    // The same range as a check report: a file from a newer gpuvet may mean other things.
    auto v = j.find("schema_version");
    if (v == j.end() || !v->is_number_integer())
        throw input_error(name + ": no schema_version: not a run report gpuvet wrote", fix);
    const long long version = v->get<long long>();
    if (version < kOldestReadableSchema || version > kSchemaVersion)
        throw input_error(name + ": schema_version " + std::to_string(version) + " is not one this build reads (" +
                              std::to_string(kOldestReadableSchema) + " to " + std::to_string(kSchemaVersion) + ")",
                          version > kSchemaVersion ? "use the gpuvet version that wrote it, or a newer one"
                                                   : "record the run again with this gpuvet");
    RunReportDoc doc;
    try {
        doc.envelope.command = "run";
        doc.envelope.tool_version = rd_str(j, "tool_version");
        doc.envelope.started_at = rd_str(j, "started_at");
        doc.envelope.finished_at = rd_str(j, "finished_at");
        doc.envelope.schema_version = static_cast<int>(version);
        read_run_fields(j["run"], doc.run);
        if (j.contains("series") && j["series"].is_array())
            for (const Json& s : j["series"])
                if (auto ts = read_series(s)) doc.series.push_back(std::move(*ts));
    } catch (const Json::exception& e) {
        throw input_error(name + ": malformed run report (" + e.what() + ")", fix);
    } catch (const Error& e) {
        throw input_error(name + ": " + e.what(), fix);
    }
    return doc;
}

RunResult read_run_report(const std::string& text, const std::string& name) {
    return read_run_report_doc(text, name).run;
}

}  // namespace gpuvet
