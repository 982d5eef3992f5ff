#include "compare/fleet_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "core/stats.hpp"
#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "compare/offer_figures.hpp"

namespace gpuvet {

namespace {

double median_of(std::vector<double> v) { return median(std::move(v)).value_or(0); }

std::string gpu_word(const std::optional<int>& gpu) { return gpu ? " GPU " + std::to_string(*gpu) : ""; }

// The node's worst GPU (the lowest value) of each figure, with that GPU's floor.
std::vector<FleetFigure> worst_figures(const Report& r) {
    std::vector<FleetFigure> out;
    for (const MetricDef& def : offer_metrics()) {
        std::optional<FleetFigure> worst;
        for (auto& s : metric_samples(r, def))
            if (!worst || s.value < worst->value)
                worst = FleetFigure{def.id, def.label, def.unit, s.gpu, s.value, s.healthy_floor};
        if (worst) out.push_back(*worst);
    }
    return out;
}

struct Centre {
    double median = 0, mad = 0, mad_used = 0;
};

Centre centre_of(const std::vector<double>& v) {
    Centre c;
    c.median = median_of(v);
    std::vector<double> dev;
    for (double x : v) dev.push_back(std::fabs(x - c.median));
    c.mad = median_of(dev);
    c.mad_used = std::max(c.mad, kOutlierMadFloor * std::fabs(c.median));
    return c;
}

double modified_z(double x, const Centre& c) { return c.mad_used > 0 ? 0.6745 * (x - c.median) / c.mad_used : 0; }

bool is_outlier(double x, const Centre& c) {
    double dev = std::fabs(x - c.median);
    if (dev <= kOutlierMinDeviation * std::fabs(c.median)) return false;
    return std::fabs(modified_z(x, c)) > kOutlierModifiedZ;
}

struct Point {
    std::size_t node;
    const FleetFigure* fig;
};

// The SuperBench-style baseline: passing nodes first, then its own outliers dropped round by round.
Centre baseline(const std::vector<Point>& pts, const std::vector<FleetNode>& nodes, FleetMetric& m) {
    std::vector<double> base;
    for (auto& p : pts)
        if (nodes[p.node].in.verdict != RunVerdict::NoGo) base.push_back(p.fig->value);
    if (base.size() < kOutlierMinNodes) {
        base.clear();
        for (auto& p : pts) base.push_back(p.fig->value);
    }
    Centre c = centre_of(base);
    for (m.rounds = 1; m.rounds < 20; ++m.rounds) {
        std::vector<double> kept;
        for (double x : base)
            if (!is_outlier(x, c)) kept.push_back(x);
        if (kept.size() == base.size() || kept.size() < kOutlierMinNodes) break;
        base = std::move(kept);
        c = centre_of(base);
    }
    m.baseline_nodes = base.size();
    return c;
}

void judge_metric(const MetricDef& def, std::vector<FleetNode>& nodes, Fleet& f) {
    std::vector<Point> pts;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].status == NodeStatus::Error || nodes[i].in.gpu_model != f.gpu_model) continue;
        for (auto& fig : nodes[i].in.worst)
            if (fig.metric == def.id) pts.push_back({i, &fig});
    }
    if (pts.size() < kOutlierMinNodes) return;
    FleetMetric m{def.id, def.label, def.unit, pts.size()};
    Centre c = baseline(pts, nodes, m);
    m.median = c.median, m.mad = c.mad, m.mad_used = c.mad_used;
    m.min = m.max = pts.front().fig->value;
    for (auto& p : pts) {
        m.min = std::min(m.min, p.fig->value), m.max = std::max(m.max, p.fig->value);
        if (!is_outlier(p.fig->value, c)) continue;
        double gap = c.median != 0 ? (p.fig->value - c.median) / c.median : 0;
        f.outliers.push_back({nodes[p.node].in.name, p.fig->gpu, def.id, def.label, def.unit, p.fig->value, c.median,
                              gap, modified_z(p.fig->value, c), p.fig->value < c.median});
        if (p.fig->value < c.median) nodes[p.node].status = NodeStatus::NoGo;
    }
    f.metrics.push_back(m);
}

std::string most_common_model(const std::vector<FleetNode>& nodes) {
    std::map<std::string, std::size_t> count;
    for (auto& n : nodes)
        if (n.status != NodeStatus::Error) ++count[n.in.gpu_model];
    std::string best;
    std::size_t most = 0;
    for (auto& [model, k] : count)
        if (k > most) best = model, most = k;
    return best;
}

// "GPU 4 is h800-sxm5-80gb" for each GPU of another model than the fleet's.
std::string model_difference(const FleetNodeInput& n, const std::string& fleet_model) {
    std::string out;
    for (std::size_t i = 0; i < n.gpu_models.size(); ++i)
        if (n.gpu_models[i] != fleet_model)
            out += (out.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(i) + " is " + n.gpu_models[i];
    if (out.empty()) out = "its GPUs are " + n.gpu_model;
    return out + ", the fleet is " + fleet_model;
}

// A UUID on two nodes: both are NO-GO and say which GPU of which other node it is.
void flag_shared_gpus(Fleet& f) {
    std::unordered_map<std::string, std::pair<std::size_t, std::size_t>> first;  // uuid -> node, GPU
    std::set<std::string> shared;
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
        if (f.nodes[i].status == NodeStatus::Error) continue;
        const auto& uuids = f.nodes[i].in.gpu_uuids;
        for (std::size_t g = 0; g < uuids.size(); ++g) {
            if (uuids[g].empty()) continue;
            auto [it, fresh] = first.emplace(uuids[g], std::make_pair(i, g));
            if (fresh || it->second.first == i) continue;
            auto [j, h] = it->second;
            auto say = [&](FleetNode& n, std::size_t gpu, const FleetNode& other, std::size_t other_gpu) {
                n.status = NodeStatus::NoGo;
                n.shared_gpus.push_back("GPU " + std::to_string(gpu) + " " + uuids[g] + " is also GPU " +
                                        std::to_string(other_gpu) + " of " + other.in.name);
            };
            say(f.nodes[i], g, f.nodes[j], h);
            if (!shared.insert(uuids[g]).second) continue;  // the first node and the note: once per UUID
            say(f.nodes[j], h, f.nodes[i], g);
            f.notes.push_back("GPU " + uuids[g] + " is reported by " + f.nodes[j].in.name + " and " +
                              f.nodes[i].in.name +
                              ": two Slurm nodes give out the same GPU (gres.conf of two slurmd on one host), or "
                              "a report was copied under another node's name");
        }
    }
}

}  // namespace

const char* to_string(NodeStatus s) {
    switch (s) {
        case NodeStatus::Go: return "GO";
        case NodeStatus::NoGo: return "NO-GO";
        case NodeStatus::Error: return "ERROR";
    }
    return "ERROR";
}

FleetNodeInput summarise_node(std::string name, std::string path, const Report& r) {
    FleetNodeInput n;
    n.name = visible_text(name, false), n.path = std::move(path);
    n.hostname = r.machine.hostname.value_or("");
    n.tool_version = r.tool_version;
    n.gpu_model = gpu_model_of(r);
    for (auto& g : r.gpus) {
        n.gpu_ids.push_back("GPU " + std::to_string(g.index) + " " + g.uuid.value_or("(no UUID)"));
        n.gpu_models.push_back(g.sku.value_or(g.name.value_or("unknown GPU")));
    }
    for (auto& g : r.gpus) {
        if (!g.uuid || g.uuid->empty() || g.index < 0 || g.index > 4096) continue;
        if (n.gpu_uuids.size() <= std::size_t(g.index)) n.gpu_uuids.resize(std::size_t(g.index) + 1);
        n.gpu_uuids[std::size_t(g.index)] = *g.uuid;
    }
    n.verdict = r.verdict, n.exit_code = r.exit_code;
    std::map<std::string, Verdict> by_key;  // each key's worst verdict over its GPUs
    for (auto& c : r.checks) {
        if (c.verdict == Verdict::Fail || c.verdict == Verdict::Error)
            n.failed.push_back(c.key + gpu_word(c.gpu) + " " + to_string(c.verdict) + ": " + c.summary);
        if (c.key == "history.drift" && c.verdict == Verdict::Warn) {
            for (auto& x : c.findings)
                if (x.verdict == Verdict::Warn) n.drift.push_back(visible_text(x.text, false));
            if (n.drift.empty()) n.drift.push_back(visible_text(c.summary, false));
        }
        auto [it, fresh] = by_key.emplace(c.key, c.verdict);
        if (!fresh) it->second = worst(it->second, c.verdict);
    }
    for (auto& [key, v] : by_key) {
        // A FAIL on any GPU is a hardware cause; an ERROR alone (the check could not run) is not.
        if (std::any_of(r.checks.begin(), r.checks.end(),
                        [&](const CheckResult& c) { return c.key == key && c.verdict == Verdict::Fail; }))
            n.failed_checks.push_back(key);
        if (v == Verdict::Pass || v == Verdict::Warn) n.passed_checks.push_back(key);
    }
    if (r.fatal) n.problem = r.fatal->message;
    else if (r.verdict == RunVerdict::CouldNotRun || r.verdict == RunVerdict::Incomplete)
        if (n.failed.empty()) n.problem = std::string("its check run was ") + to_string(r.verdict);
    n.worst = worst_figures(r);
    return n;
}

FleetNodeInput failed_node(std::string name, std::string path, std::string problem) {
    FleetNodeInput n;
    n.name = visible_text(name, false), n.path = std::move(path), n.problem = visible_text(problem, false);
    return n;
}

namespace {

// The fabric's verdict on each node, before the figures are judged (its figure is one of them).
void apply_fabric(std::vector<FleetNodeInput>& inputs, const FleetFabric& fab) {
    for (auto& in : inputs) {
        for (auto& [node, busbw] : fab.node_busbw_gbps)
            if (node == in.name)
                in.worst.push_back({kFabricMetric, "All-reduce busbw across nodes, best pair", "GB/s", std::nullopt,
                                    busbw, std::nullopt});
        bool blamed = false;
        for (auto& [node, text] : fab.blamed)
            if (node == in.name) {
                blamed = true;
                in.failed.push_back(std::string(kFabricCheck) + " FAIL: " + text);
            }
        if (blamed) {
            in.failed_checks.push_back(kFabricCheck);
            if (in.verdict == RunVerdict::Go || in.verdict == RunVerdict::GoWithWarnings) in.verdict = RunVerdict::NoGo;
        } else if (fab.result.verdict == Verdict::Pass || fab.result.verdict == Verdict::Warn) {
            in.passed_checks.push_back(kFabricCheck);
        }
    }
}

}  // namespace

Fleet analyse_fleet(std::vector<FleetNodeInput> inputs, std::optional<FleetFabric> fabric) {
    if (fabric) apply_fabric(inputs, *fabric);
    Fleet f;
    f.fabric = std::move(fabric);
    for (auto& in : inputs) {
        FleetNode n{std::move(in), NodeStatus::Error, std::nullopt, false, {}};
        bool passed = n.in.verdict == RunVerdict::Go || n.in.verdict == RunVerdict::GoWithWarnings;
        n.status = n.in.verdict == RunVerdict::NoGo ? NodeStatus::NoGo
                   : passed && n.in.problem.empty() ? NodeStatus::Go
                                                    : NodeStatus::Error;
        f.nodes.push_back(std::move(n));
    }
    f.gpu_model = most_common_model(f.nodes);
    for (auto& n : f.nodes)
        if (n.status != NodeStatus::Error && n.in.gpu_model != f.gpu_model) {
            n.status = NodeStatus::NoGo;
            n.other_model = true;
            n.in.failed.push_back("GPU model: " + model_difference(n.in, f.gpu_model));
        }
    flag_shared_gpus(f);
    for (const MetricDef& def : offer_metrics()) judge_metric(def, f.nodes, f);
    for (auto& n : f.nodes)
        for (auto& fig : n.in.worst)
            if (fig.floor && *fig.floor > 0 &&
                (!n.worst_vs_floor || fig.value / *fig.floor < n.worst_vs_floor->value / *n.worst_vs_floor->floor))
                n.worst_vs_floor = fig;
    return f;
}

int fleet_exit_code(const Fleet& f) {
    bool nogo = false, error = f.nodes.empty();
    for (auto& n : f.nodes) nogo = nogo || n.status == NodeStatus::NoGo, error = error || n.status == NodeStatus::Error;
    if (f.fabric) {
        nogo = nogo || f.fabric->result.verdict == Verdict::Fail;
        error = error || f.fabric->result.verdict == Verdict::Error || f.fabric->result.verdict == Verdict::Skip;
    }
    return nogo ? 1 : error ? 3 : 0;
}

std::vector<std::string> node_problems(const Fleet& f, const FleetNode& n) {
    std::vector<std::string> why;
    if (!n.in.problem.empty()) why.push_back(n.in.problem);
    for (auto& x : n.in.failed) why.push_back(x);
    for (auto& x : n.shared_gpus) why.push_back("GPU identity: " + x);
    for (auto& o : f.outliers)
        if (o.node == n.in.name && o.low)
            why.push_back("low outlier: " + o.label + gpu_word(o.gpu) + " " + format_number(o.value, 4) + " " + o.unit +
                          " (fleet median " + format_number(o.median, 4) + ")");
    if (why.empty() && n.status != NodeStatus::Go) why.push_back(std::string("run verdict ") + to_string(n.in.verdict));
    return why;
}

std::string nhc_line(const Fleet& f, const FleetNode& n) {
    std::vector<std::string> why = node_problems(f, n);
    if (why.empty()) return n.in.name + " | Healthy";
    std::string out = n.in.name + " | ERROR: gpuvet: ";
    for (std::size_t i = 0; i < why.size(); ++i) out += (i ? "; " : "") + why[i];
    return out;
}

namespace {

void add_once(std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::size_t comparable_nodes(const Fleet& f) {
    std::size_t k = 0;
    for (auto& n : f.nodes) k += n.status != NodeStatus::Error ? 1 : 0;
    return k;
}

}  // namespace

std::vector<std::string> node_causes(const Fleet& f, const FleetNode& n) {
    std::vector<std::string> out;
    for (auto& k : n.in.failed_checks) add_once(out, k);
    for (auto& o : f.outliers)
        if (o.node == n.in.name && o.low) add_once(out, "fleet." + o.metric);
    if (n.other_model) add_once(out, kCauseGpuModel);
    if (!n.shared_gpus.empty()) add_once(out, kCauseGpuUuid);
    return out;
}

std::vector<std::string> node_cleared(const Fleet& f, const FleetNode& n) {
    std::vector<std::string> out = n.in.passed_checks;
    for (auto& m : f.metrics) {
        bool measured = std::any_of(n.in.worst.begin(), n.in.worst.end(), [&](auto& w) { return w.metric == m.id; });
        bool low = std::any_of(f.outliers.begin(), f.outliers.end(),
                               [&](auto& o) { return o.node == n.in.name && o.metric == m.id && o.low; });
        if (measured && !low && n.in.gpu_model == f.gpu_model) out.push_back("fleet." + m.id);
    }
    std::size_t others = comparable_nodes(f);
    if (n.status != NodeStatus::Error && !n.other_model && others >= kOutlierMinNodes) out.push_back(kCauseGpuModel);
    if (n.status != NodeStatus::Error && n.shared_gpus.empty() && others >= 2 && !n.in.gpu_uuids.empty())
        out.push_back(kCauseGpuUuid);
    return out;
}

}  // namespace gpuvet
