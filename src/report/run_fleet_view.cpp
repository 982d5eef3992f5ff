#include "report/run_fleet_view.hpp"

#include "core/strings.hpp"
#include "report/json.hpp"
#include "report/run_compare_view.hpp"

namespace gpuvet {

namespace {

std::string percent(double fraction) { return format_number(fraction * 100, 3) + "%"; }

}  // namespace

std::string render_run_fleet(const RunFleetAnalysis& a, const RunComparison& c, const Style& st) {
    const RunFleetNode& centre = a.nodes[a.centre];
    const RunFleetNode& slow = a.nodes[a.slowest];
    std::string head;
    for (std::size_t i = 0; i < a.nodes.size(); ++i) {
        const RunFleetNode& n = a.nodes[i];
        std::string line = n.name + " | ";
        if (!n.problem.empty()) line += "ERROR: " + n.problem;
        else {
            line += format_number(n.wall_s, 4) + " s";
            if (i == a.centre) line += ", the median";
            else
                line += ", " + std::string(*n.gap_fraction >= 0 ? "+" : "") + percent(*n.gap_fraction) +
                        " against the median";
            if (n.straggler) line += i == a.slowest ? " (straggler, slowest)" : " (straggler)";
        }
        head += line + "\n";
    }
    const std::string within = percent(kRunSameWithin);
    head += !a.stragglers.empty()
                ? "slowest node: " + slow.name + ", " + format_number(slow.wall_s / centre.wall_s, 3) +
                      "x the time of the median node " + centre.name + "; " + std::to_string(a.stragglers.size()) +
                      " of " + std::to_string(a.finished) + " nodes more than " + within + " slower than the median\n\n"
                : "the nodes took about the same time (within " + within + " of the median)\n\n";
    return head + render_run_comparison(c, st);
}

std::string render_run_fleet_json(const RunFleetAnalysis& a, const RunComparison& c, const Envelope& env) {
    Json j = nlohmann::ordered_json::parse(render_run_comparison_json(c, env));
    Json list = Json::array();
    for (const RunFleetNode& n : a.nodes)
        list.push_back(Json{{"name", n.name},
                            {"report", n.path},
                            {"wall_s", n.problem.empty() ? Json(n.wall_s) : Json(nullptr)},
                            {"gap_fraction", n.gap_fraction ? Json(*n.gap_fraction) : Json(nullptr)},
                            {"straggler", n.straggler},
                            {"problem", n.problem.empty() ? Json(nullptr) : Json(n.problem)}});
    j["nodes"] = list;
    j["median_node"] = a.nodes[a.centre].name;
    j["median_wall_s"] = a.nodes[a.centre].wall_s;
    j["stragglers"] = a.stragglers;
    j["slowest"] = !a.stragglers.empty() ? Json(a.nodes[a.slowest].name) : Json(nullptr);
    return j.dump(2) + "\n";
}

}  // namespace gpuvet
