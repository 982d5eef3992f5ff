#include "report/fleet_reader.hpp"

#include <filesystem>
#include <functional>
#include <map>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/report_reader.hpp"

namespace gpuvet {

FleetNodeInput read_fleet_node(const std::string& name, const std::string& path, const std::string& text,
                               const std::function<void(Report&)>& amend) {
    try {
        ReportDocument d = read_document(text, path);
        if (d.kind == "run") return failed_node(name, path, "a run report among check reports");
        if (d.kind != "check" && d.kind != "burn" && d.kind != "bench")
            return failed_node(name, path, "a '" + d.kind + "' document, not a check report");
        if (!d.report) return failed_node(name, path, "a '" + d.kind + "' document without its checks");
        Report& r = *d.report;
        if (amend) amend(r);
        FleetNodeInput n = summarise_node(name, path, r);
        n.slurm = r.slurm;
        return n;
    } catch (const Error& e) {
        return failed_node(name, path, std::string("report unusable: ") + e.what());
    }
}

std::vector<FleetNodeInput> read_fleet_files(const std::vector<std::string>& files) {
    std::vector<FleetNodeInput> out;
    // A hash of each text, not the text: the same report twice is caught without keeping every report.
    std::map<std::pair<std::size_t, std::size_t>, std::string> seen;
    for (auto& f : files) {
        // A node's folder (--report DIR under Slurm) names the node; a loose file its stem.
        std::filesystem::path path(f);
        std::string name = path.stem() == "gpuvet-report" && path.has_parent_path()
                               ? path.parent_path().filename().string()
                               : path.stem().string();
        std::string text;
        try {
            text = read_input_file(f, "report", kReportFileLimitBytes);
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::Runtime) throw;  // an interrupt ends the read: not the node's fault
            out.push_back(failed_node(name, f, std::string("report unreadable: ") + e.what()));
            continue;
        }
        auto [it, fresh] = seen.emplace(std::make_pair(std::hash<std::string>{}(text), text.size()), f);
        if (!fresh) {
            out.push_back(failed_node(name, f, "the same report as " + it->second));
            continue;
        }
        out.push_back(read_fleet_node(name, f, text));
    }
    return out;
}

}  // namespace gpuvet
