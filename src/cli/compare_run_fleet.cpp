#include "cli/compare_run_fleet.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "compare/run_compare.hpp"
#include "compare/run_fleet.hpp"
#include "report/run_fleet_view.hpp"
#include "report/run_report_reader.hpp"
#include "report/style.hpp"

namespace gpuvet {

namespace {

// A run report's node: its --tag, else its folder (every run writes gpuvet-run.json), else the stem.
std::string node_name(const RunResult& r, const std::string& path) {
    std::string folder = std::filesystem::path(path).parent_path().filename().string();
    std::string stem = std::filesystem::path(path).stem().string();
    if (!r.tag.empty()) return r.tag;
    return stem == "gpuvet-run" && !folder.empty() ? folder : stem;
}

RunFleetNode read_node(const std::string& path) {
    // The name labels every output, JSON included: a file name's control characters are shown.
    RunFleetNode n;
    n.name = visible_text(std::filesystem::path(path).stem().string(), false);
    n.path = path;
    try {
        RunResult r = read_run_report(read_input_file(path, "report", kReportFileLimitBytes), path);
        n.name = visible_text(node_name(r, path), false), n.wall_s = r.wall_s;
        if (r.exit_code != 0) n.problem = "its job exited " + std::to_string(r.exit_code);
        else if (r.stop_signal != 0) n.problem = "its job was stopped by signal " + std::to_string(r.stop_signal);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Runtime) throw;
        n.problem = std::string("report unusable: ") + e.what();
    }
    return n;
}

// The two runs compared are read again rather than every node's timeline kept in memory.
RunResult reread(const RunFleetNode& n) {
    return read_run_report(read_input_file(n.path, "report", kReportFileLimitBytes), n.path);
}

}  // namespace

int compare_run_fleet(const GlobalOptions& g, const std::vector<std::string>& files, bool json) {
    std::vector<RunFleetNode> nodes;
    for (auto& f : files) nodes.push_back(read_node(f));
    RunFleetAnalysis a = analyse_run_fleet(std::move(nodes));
    const RunFleetNode &centre = a.nodes[a.centre], &slow = a.nodes[a.slowest];
    RunComparison c = compare_runs(reread(centre), reread(slow), centre.name, slow.name);
    // Node names are the reports' folder or file names, tags come from the reports.
    if (json) std::cout << render_run_fleet_json(a, c, finished_envelope(g));
    else std::cout << terminal_safe(render_run_fleet(a, c, detect_style(g.no_color)));
    return a.any_problem || !a.stragglers.empty() ? exit_code::check_failed : exit_code::ok;
}

}  // namespace gpuvet
