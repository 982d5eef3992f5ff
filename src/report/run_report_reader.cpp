#include "report/run_report_reader.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text_limits.hpp"

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
    f.severity = j.value("severity", "");
    f.party = j.value("party", "");
    f.message = j.value("message", "");
    f.action = j.value("action", "");
    f.source = j.value("source", "");
    return f;
}

}  // namespace

RunResult read_run_report(const std::string& text, const std::string& name) {
    check_json_nesting(text, name);
    Json j = Json::parse(text, nullptr, false);
    const std::string fix = "give the gpuvet-run.json that `gpuvet run --report DIR` wrote";
    if (j.is_discarded()) throw input_error(name + ": not JSON", fix);
    // Any key may hold any type in a user's file: every read checks the type first.
    auto command = j.is_object() ? j.find("command") : j.end();
    bool is_run = command != j.end() && command->is_string() && command->get<std::string>() == "run";
    if (!is_run || !j.contains("run") || !j["run"].is_object())
        throw input_error(name + ": not a gpuvet run report (no \"command\": \"run\" with a \"run\" object)", fix);
    const Json& run = j["run"];
    RunResult r;
    try {
        if (run.contains("command") && run["command"].is_array())
            for (const Json& a : run["command"])
                if (a.is_string()) r.command.push_back(a.get<std::string>());
        if (run.contains("tag") && run["tag"].is_string()) r.tag = run["tag"].get<std::string>();
        if (run.contains("note") && run["note"].is_string()) r.note = run["note"].get<std::string>();
        if (run.contains("exit_code") && run["exit_code"].is_number_integer())
            r.exit_code = run["exit_code"].get<int>();
        r.wall_s = rd(run, "wall_s");
        if (run.contains("window") && run["window"].is_object()) {
            r.window_start_s = rd(run["window"], "start_s");
            r.window_end_s = rd(run["window"], "end_s");
        }
        if (run.contains("no_gpu_reason") && run["no_gpu_reason"].is_string())
            r.no_gpu_reason = run["no_gpu_reason"].get<std::string>();
        if (run.contains("diagnosis") && run["diagnosis"].is_object()) {
            const Json& d = run["diagnosis"];
            if (d.contains("primary") && d["primary"].is_object()) r.diagnosis.primary = rd_finding(d["primary"]);
            if (d.contains("others") && d["others"].is_array())
                for (const Json& f : d["others"])
                    if (f.is_object()) r.diagnosis.others.push_back(rd_finding(f));
            r.diagnosis.seed_peak_percent = rd(d, "seed_peak_utilization_percent");
        }
        if (run.contains("gpus") && run["gpus"].is_array())
            for (const Json& g : run["gpus"]) {
                if (!g.is_object()) continue;
                GpuRunSummary s;
                s.facts.index = g.value("index", 0);
                s.facts.name = g.value("name", "");
                s.utilization_percent = rd_stat(g, "utilization_percent");
                s.sm_activity_percent = rd_stat(g, "sm_activity_percent");
                s.power_w = rd_stat(g, "power_w");
                s.memory_used_bytes = rd_stat(g, "memory_used_bytes");
                s.sm_clock_mhz = rd_stat(g, "sm_clock_mhz");
                r.gpus.push_back(s);
            }
        if (run.contains("host") && run["host"].is_object()) {
            const Json& h = run["host"];
            r.host.cpus = h.value("cpus", 0);
            r.host.tree_cpu_cores = rd_stat(h, "tree_cpu_cores");
            r.host.host_busy_percent = rd_stat(h, "host_busy_percent");
            r.host.disk_read_bytes_per_s = rd_stat(h, "disk_read_bytes_per_s");
            r.host.steal_percent = rd_stat(h, "steal_percent");
        }
    } catch (const Json::exception& e) {
        throw input_error(name + ": malformed run report (" + e.what() + ")", fix);
    }
    return r;
}

}  // namespace gpuvet
