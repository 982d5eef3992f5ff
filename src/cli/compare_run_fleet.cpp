#include "cli/compare_run_fleet.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "compare/run_compare.hpp"
#include "report/json.hpp"
#include "core/report_reader.hpp"
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
    std::vector<const RunNode*> done;
    bool failed = false;
    for (auto& n : nodes) {
        failed = failed || !n.problem.empty();
        if (n.problem.empty()) done.push_back(&n);
    }
    if (done.size() < 2)
        throw input_error("--fleet: fewer than two run reports of finished jobs",
                          "put the gpuvet-run.json of each node (gpuvet run --report DIR under srun) into the folder");
    // The centre is a node's own run (the lower median), so that "why" compares two real runs; with
    // two nodes it is the faster one, and the rule is the two-run rule.
    std::vector<const RunNode*> by_time = done;
    std::stable_sort(by_time.begin(), by_time.end(), [](auto* a, auto* b) { return a->wall_s < b->wall_s; });
    const RunNode* centre = by_time[(by_time.size() - 1) / 2];
    const RunNode* slow = by_time.back();
    auto gap = [&](const RunNode& n) { return centre->wall_s > 0 ? n.wall_s / centre->wall_s - 1 : 0.0; };
    auto straggles = [&](const RunNode& n) { return n.problem.empty() && gap(n) > kRunSameWithin; };
    std::vector<std::string> stragglers;
    for (auto& n : nodes)
        if (straggles(n)) stragglers.push_back(n.name);
    RunComparison c = compare_runs(reread(*centre), reread(*slow), centre->name, slow->name);
    std::string head;
    for (auto& n : nodes) {
        std::string line = n.name + " | ";
        if (!n.problem.empty()) line += "ERROR: " + n.problem;
        else {
            line += format_number(n.wall_s, 4) + " s";
            if (&n == centre) line += ", the median";
            else
                line += ", " + std::string(gap(n) >= 0 ? "+" : "") + format_number(gap(n) * 100, 3) +
                        "% against the median";
            if (straggles(n)) line += &n == slow ? " (straggler, slowest)" : " (straggler)";
        }
        head += line + "\n";
    }
    head += !stragglers.empty()
                ? "slowest node: " + slow->name + ", " + format_number(slow->wall_s / centre->wall_s, 3) +
                      "x the time of the median node " + centre->name + "; " + std::to_string(stragglers.size()) +
                      " of " + std::to_string(done.size()) + " nodes more than 3% slower than the median\n\n"
                : "the nodes took about the same time (within 3% of the median)\n\n";
    if (json) {
        Json j = nlohmann::ordered_json::parse(render_run_comparison_json(c, finished_envelope(g)));
        Json list = Json::array();
        for (auto& n : nodes)
            list.push_back(Json{{"name", n.name},
                                {"report", n.path},
                                {"wall_s", n.problem.empty() ? Json(n.wall_s) : Json(nullptr)},
                                {"gap_fraction", n.problem.empty() ? Json(gap(n)) : Json(nullptr)},
                                {"straggler", straggles(n)},
                                {"problem", n.problem.empty() ? Json(nullptr) : Json(n.problem)}});
        j["nodes"] = list;
        j["median_node"] = centre->name;
        j["median_wall_s"] = centre->wall_s;
        j["stragglers"] = stragglers;
        j["slowest"] = !stragglers.empty() ? Json(slow->name) : Json(nullptr);
        std::cout << j.dump(2) << "\n";
    } else {
        // Node names are the reports' folder or file names, tags come from the reports.
        std::cout << terminal_safe(head + render_run_comparison(c, detect_style(g.no_color)));
    }
    return failed || !stragglers.empty() ? exit_code::check_failed : exit_code::ok;
}

}  // namespace gpuvet
