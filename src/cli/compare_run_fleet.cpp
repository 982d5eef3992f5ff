#include "cli/compare_run_fleet.hpp"

#include <filesystem>
#include <iostream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "monitor/run_compare.hpp"
#include "report/json.hpp"
#include "report/report_reader.hpp"
#include "report/run_compare_view.hpp"
#include "report/run_report_reader.hpp"
#include "report/style.hpp"

namespace gpuvet {

namespace {

struct RunNode {
    std::string name, path, problem;
    double wall_s = 0;
    int exit_code = 0;
};

// A run report's node: its --tag, else its folder (every run writes gpuvet-run.json), else the stem.
std::string node_name(const RunResult& r, const std::string& path) {
    std::string folder = std::filesystem::path(path).parent_path().filename().string();
    std::string stem = std::filesystem::path(path).stem().string();
    if (!r.tag.empty()) return r.tag;
    return stem == "gpuvet-run" && !folder.empty() ? folder : stem;
}

RunNode read_node(const std::string& path) {
    // The name labels every output, JSON included: a file name's control characters are shown.
    RunNode n{visible_text(std::filesystem::path(path).stem().string(), false), path, {}};
    try {
        std::string text = read_input_file(path, "report", kReportFileLimitBytes);
        if (document_kind(text, path) != "run") return n.problem = "not a run report", n;
        RunResult r = read_run_report(text, path);
        n.name = visible_text(node_name(r, path), false), n.wall_s = r.wall_s, n.exit_code = r.exit_code;
        if (r.exit_code != 0) n.problem = "its job exited " + std::to_string(r.exit_code);
        else if (r.stop_signal != 0) n.problem = "its job was stopped by signal " + std::to_string(r.stop_signal);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Runtime) throw;
        n.problem = std::string("report unusable: ") + e.what();
    }
    return n;
}

RunResult reread(const RunNode& n) {
    return read_run_report(read_input_file(n.path, "report", kReportFileLimitBytes), n.path);
}

}  // namespace

int compare_run_fleet(const GlobalOptions& g, const std::vector<std::string>& files, bool json) {
    std::vector<RunNode> nodes;
    for (auto& f : files) nodes.push_back(read_node(f));
    const RunNode *slow = nullptr, *fast = nullptr;
    bool failed = false;
    for (auto& n : nodes) {
        failed = failed || !n.problem.empty();
        if (!n.problem.empty()) continue;
        if (!slow || n.wall_s > slow->wall_s) slow = &n;
        if (!fast || n.wall_s < fast->wall_s) fast = &n;
    }
    if (!slow || slow == fast)
        throw input_error("--fleet: fewer than two run reports of finished jobs",
                          "put the gpuvet-run.json of each node (gpuvet run --report DIR under srun) into the folder");
    RunComparison c = compare_runs(reread(*fast), reread(*slow), fast->name, slow->name);
    bool straggler = slow->wall_s > fast->wall_s * (1 + kRunSameWithin);
    std::string head;
    for (auto& n : nodes)
        head += n.name + " | " +
                (n.problem.empty() ? format_number(n.wall_s, 4) + " s" + (&n == slow && straggler ? " (slowest)" : "")
                                   : "ERROR: " + n.problem) +
                "\n";
    head += straggler ? "slowest node: " + slow->name + ", " + format_number(slow->wall_s / fast->wall_s, 3) +
                            "x the time of " + fast->name + "\n\n"
                      : "the nodes took about the same time (within 3%)\n\n";
    if (json) {
        Json j = nlohmann::ordered_json::parse(render_run_comparison_json(c, finished_envelope(g)));
        Json list = Json::array();
        for (auto& n : nodes)
            list.push_back(Json{{"name", n.name},
                                {"report", n.path},
                                {"wall_s", n.problem.empty() ? Json(n.wall_s) : Json(nullptr)},
                                {"problem", n.problem.empty() ? Json(nullptr) : Json(n.problem)}});
        j["nodes"] = list;
        j["slowest"] = straggler ? Json(slow->name) : Json(nullptr);
        std::cout << j.dump(2) << "\n";
    } else {
        // Node names are the reports' file names, tags come from the reports.
        std::cout << terminal_safe(head + render_run_comparison(c, detect_style(g.no_color)));
    }
    return failed || straggler ? exit_code::check_failed : exit_code::ok;
}

}  // namespace gpuvet
