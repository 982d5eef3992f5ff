// gpuvet fleet allreduce: the all-reduce between the nodes of a Slurm allocation. One srun step
// starts a rank per GPU on every node (fleet agent + fleet allreduce-rank); this process serves the
// ranks' rendezvous board (rank 0 puts the NCCL ids there), reads every rank's report back over the
// step's output, and judges the figures against the fabric the nodes found
// (checks/fabric_allreduce_plan.hpp, checks/fabric_allreduce_judge.hpp). Printed and written like
// fleet check; fleet check --allreduce adds the same section to its own run.
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <map>
#include <thread>

#include "checks/fabric_allreduce_plan.hpp"
#include "checks/fabric_allreduce_rank.hpp"
#include "checks/fabric_allreduce_judge.hpp"
#include "checks/fabric_rdma.hpp"
#include "cli/fleet_run.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/numbers.hpp"
#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "gpu/burn.hpp"
#include "host/rendezvous.hpp"
#include "report/fleet_view.hpp"
#include "report/style.hpp"

namespace gpuvet {

namespace fs = std::filesystem;
using namespace fabric_allreduce;

namespace {

const NumberRule kMaxSizeRule{.min = 1 << 20,
                              .max = double(std::uint64_t(1) << 40),
                              .whole = true,
                              .unit = NumberUnit::Bytes,
                              .what = "a message size",
                              .example = "8G"};

std::uint64_t max_bytes_of(const std::optional<std::string>& text, const char* option) {
    return text ? std::uint64_t(parse_number_option(option, *text, kMaxSizeRule)) : kDefaultMaxBytes;
}

std::string random_token() {
    unsigned char b[16] = {};
    if (::getrandom(b, sizeof b, 0) != ssize_t(sizeof b))
        throw runtime_error("no random bytes for the rendezvous token", "check the kernel's getrandom");
    std::string s;
    for (unsigned char x : b) s += "0123456789abcdef"[x >> 4], s += "0123456789abcdef"[x & 15];
    return s;
}

// "2", "h100:8", "gpu:h100:8": the count after the last colon.
std::optional<int> gpu_count(const std::string& text) {
    std::string t = text.substr(text.rfind(':') == std::string::npos ? 0 : text.rfind(':') + 1);
    char* end = nullptr;
    long v = std::strtol(t.c_str(), &end, 10);
    if (t.empty() || *end || v < 1 || v > 64) return std::nullopt;
    return int(v);
}

int gpus_per_node(const FleetCheckArgs& a) {
    if (a.gpus_per_node) {
        if (auto g = gpu_count(*a.gpus_per_node)) return *g;
        throw usage_error("--gpus-per-node " + *a.gpus_per_node + " is not a GPU count",
                          "give the GPUs of each node, e.g. --gpus-per-node 8");
    }
    if (const char* e = std::getenv("SLURM_GPUS_PER_NODE"); e && *e)
        if (auto g = gpu_count(e)) return *g;
    throw usage_error("the all-reduce runs one rank per GPU and does not know how many GPUs each node has",
                      "give --gpus-per-node N (or run inside an allocation made with --gpus-per-node)");
}

std::vector<std::string> rank_command(const FleetCheckArgs& a, int port, const std::string& token) {
    std::vector<std::string> c{"fleet",        "allreduce-rank",
                               "--board-port", std::to_string(port),
                               "--token",      token,
                               "--max-size",   std::to_string(max_bytes_of(a.max_size, "--max-size"))};
    if (a.rendezvous_host) c.insert(c.end(), {"--board-host", *a.rendezvous_host});
    if (a.allow_fallback) c.push_back("--allow-fallback");
    if (a.no_rdma_write) c.push_back("--no-rdma-write");
    return c;
}

struct TaskReport {
    std::string node;
    std::optional<RankReport> report;
    std::string problem;  // why there is none
};

TaskReport take_task(NodeOutput& n) {
    TaskReport t{n.node, std::nullopt, ""};
    if (n.refused == "version" || (!n.version.empty() && n.version != GPUVET_VERSION))
        t.problem = "runs gpuvet " + (n.version.empty() ? std::string("(unknown version)") : n.version) +
                    ", this fleet is gpuvet " + GPUVET_VERSION + ": install the same gpuvet on every node";
    else if (trim(n.out).empty())
        t.problem = "its rank exited " + (n.exit_code ? std::to_string(*n.exit_code) : std::string("?")) +
                    " without a report" + (n.err.empty() ? "" : ": " + last_line(n.err));
    else {
        // srun --label breaks a long line where its read of the task's output ends, and labels the
        // rest as a line of its own: the report is one JSON document whose own text has no line
        // break (JSON escapes them in strings), so every line break is one of those.
        std::string text;
        for (char ch : n.out)
            if (ch != '\n' && ch != '\r') text += ch;
        auto j = nlohmann::json::parse(text, nullptr, false);
        try {
            if (j.is_discarded())
                throw input_error("its rank printed no JSON document" +
                                      (n.err.empty() ? ": " + visible_text(last_line(n.out), false).substr(0, 300)
                                                     : ": " + visible_text(last_line(n.err), false).substr(0, 300)),
                                  "");
            t.report = rank_report_from_json(j);
        } catch (const Error& e) {
            t.problem = std::string("its rank's report is unusable: ") + e.what();
        }
    }
    n.out.clear(), n.out.shrink_to_fit();
    return t;
}

// The nodes by index: the ranks say which index their node has; a node no rank of which reported
// fills a free index in name order.
std::vector<std::string> node_order(const std::vector<TaskReport>& tasks, const std::vector<std::string>& named) {
    std::map<int, std::string> by_index;
    for (const TaskReport& t : tasks)
        if (t.report && t.report->node_index >= 0) by_index.emplace(t.report->node_index, t.report->node);
    std::vector<std::string> rest;
    for (const std::string& n : named)
        if (std::none_of(by_index.begin(), by_index.end(), [&](auto& x) { return x.second == n; })) rest.push_back(n);
    std::sort(rest.begin(), rest.end(), node_name_less);
    std::vector<std::string> out;
    std::size_t next = 0;
    const int total = int(by_index.size() + rest.size());
    for (int i = 0; i < total; ++i) {
        if (by_index.count(i)) out.push_back(by_index[i]);
        else if (next < rest.size()) out.push_back(rest[next++]);
    }
    return out;
}

FleetFabricNode fabric_node(const NodeFabric& n, const std::vector<const RankReport*>& ranks) {
    FleetFabricNode out;
    out.node = n.node;
    out.gpus = n.gpus;
    out.rdma_nics = n.rdma_nics;
    out.nic_gbitps = n.nic_gbitps;
    out.hints = n.hints;
    for (const RankReport* r : ranks) {
        if (r->nccl_net) out.nccl_net = *r->nccl_net;
        if (r->log.network) out.network = *r->log.network;
        else if (r->log.no_net_plugin) out.network = "not initialised";
        for (const NcclNic& nic : r->log.nics)
            if (std::find(out.nics.begin(), out.nics.end(), nic.name) == out.nics.end()) out.nics.push_back(nic.name);
        for (const NcclChannel& c : r->log.channels)
            if (c.network()) ++out.net_channels, out.gdr_channels += c.gdr();
    }
    return out;
}

// A node's figure: the best busbw of the pairs it is in (the whole job's with two nodes).
std::vector<std::pair<std::string, double>> node_figures(const FabricRun& run) {
    std::vector<std::pair<std::string, double>> out;
    for (const NodeFabric& n : run.nodes) {
        std::optional<double> best;
        for (const Measured& p : run.pairs)
            if (std::find(p.nodes.begin(), p.nodes.end(), n.node) != p.nodes.end())
                best = std::max(best.value_or(0), p.busbw_gbps);
        if (!best && run.all && run.all->nodes.size() == 2) best = run.all->busbw_gbps;
        if (best) out.emplace_back(n.node, *best);
    }
    return out;
}

// The per-node summaries of a fleet allreduce run alone: GO unless the fabric names the node (the
// fleet applies that), ERROR when none of its ranks reported.
std::vector<FleetNodeInput> node_inputs(const std::vector<std::string>& nodes, const std::vector<TaskReport>& tasks) {
    std::vector<FleetNodeInput> out;
    for (const std::string& name : nodes) {
        std::vector<const TaskReport*> mine;
        for (const TaskReport& t : tasks)
            if ((t.report ? t.report->node : t.node) == name) mine.push_back(&t);
        FleetNodeInput in = failed_node(name, "", "");
        std::string problem;
        for (const TaskReport* t : mine) {
            if (!t->report) {
                problem = t->problem;
                continue;
            }
            const RankReport& r = *t->report;
            in.gpu_ids.push_back("GPU " + std::to_string(r.local_rank) + " " + r.gpu_name + " " + r.gpu_bus_id);
            in.gpu_models.push_back(r.gpu_name.empty() ? "unknown GPU" : r.gpu_name);
            if (!r.error.empty()) problem = "GPU " + std::to_string(r.local_rank) + ": " + r.error;
        }
        if (mine.empty()) problem = "no rank reported from it";
        in.gpu_model = in.gpu_models.empty() ? "no GPU" : in.gpu_models.front();
        in.tool_version = GPUVET_VERSION;
        in.problem = visible_text(problem, false);
        in.verdict = problem.empty() ? RunVerdict::Go : RunVerdict::CouldNotRun;
        in.exit_code = problem.empty() ? 0 : 3;
        out.push_back(std::move(in));
    }
    return out;
}

void write_rank_reports(const fs::path& out, const std::vector<std::string>& nodes,
                        const std::vector<TaskReport>& tasks) {
    fs::create_directories(out / "ranks");
    for (const std::string& name : nodes) {
        nlohmann::ordered_json arr = nlohmann::ordered_json::array();
        for (const TaskReport& t : tasks)
            if (t.report && t.report->node == name) arr.push_back(to_json(*t.report));
        write_file_atomically(out / "ranks" / (file_stem(name) + ".json"), arr.dump(2) + "\n");
    }
}

// The RDMA write links the ranks measured, judged and folded into the fabric's result.
void add_rdma(FleetFabric& fab, const std::vector<RankReport>& reports, bool asked) {
    if (!asked) {
        fab.notes.push_back("RDMA write per NIC: left out (--no-rdma-write)");
        return;
    }
    std::vector<fabric_rdma::RdmaLink> links;
    for (const RankReport& r : reports)
        if (r.rdma) links.push_back(*r.rdma);
    if (links.empty()) return;
    fabric_rdma::Judged j = fabric_rdma::judge_links(links);
    for (const fabric_rdma::RdmaLink& l : links) {
        FleetRdmaLink row{l.rail,       l.from_node,      l.from_nic,    l.to_node,
                          l.to_nic,     l.gbps,           std::nullopt,  l.memory,
                          l.memory_why, l.verified_bytes, l.wrong_bytes, l.error.empty() ? l.skipped : l.error};
        if (l.from_gbitps && l.to_gbitps)
            row.expected_gbps = std::min(fabric_rdma::data_rate_gbitps(*l.from_gbitps, l.from_speed),
                                         fabric_rdma::data_rate_gbitps(*l.to_gbitps, l.to_speed)) /
                                8;
        fab.rdma.push_back(std::move(row));
    }
    CheckResult& res = fab.result;
    res.measurements.insert(res.measurements.end(), j.measurements.begin(), j.measurements.end());
    res.findings.insert(res.findings.end(), j.findings.begin(), j.findings.end());
    fab.blamed.insert(fab.blamed.end(), j.blamed.begin(), j.blamed.end());
    fab.notes.insert(fab.notes.end(), j.notes.begin(), j.notes.end());
    if (j.verdict == Verdict::Skip) return;
    if (severity(j.verdict) > severity(res.verdict) || res.verdict == Verdict::Skip) res.verdict = j.verdict;
    int measured = 0;
    for (const auto& m : j.measurements) measured += m.value.has_value();
    res.summary +=
        std::string(res.summary.empty() ? "" : " ") + "RDMA write: " + std::to_string(measured) + " link(s) measured" +
        (j.verdict == Verdict::Pass ? ", each at 90% of its ports' data rate or more."
                                    : ", " + std::to_string(j.findings.size()) + " rail(s) with a bad link.");
}

}  // namespace

void check_allreduce_args(const FleetCheckArgs& a, const char* size_option) {
    max_bytes_of(a.max_size, size_option);
    gpus_per_node(a);
}

// The fabric section from the ranks' reports: the run judged, each node's transport, the sweep.
FleetFabric judged_fabric(const std::vector<TaskReport>& tasks, const std::vector<std::string>& nodes, int per_node,
                          bool rdma_write) {
    std::vector<RankReport> reports;
    for (const TaskReport& t : tasks)
        if (t.report) reports.push_back(*t.report);
    Collected c = collect_ranks(reports, nodes, per_node);
    Judged j = judge_run(c.run);
    FleetFabric fab;
    fab.result = j.result;
    fab.blamed = j.blamed;
    for (const SweepRow& r : c.sweep) fab.sweep.push_back({r.bytes, r.busbw_gbps, r.algbw_gbps, r.checked, r.wrong});
    for (const NodeFabric& n : c.run.nodes) {
        std::vector<const RankReport*> mine;
        for (const RankReport& r : reports)
            if (r.node == n.node) mine.push_back(&r);
        fab.nodes.push_back(fabric_node(n, mine));
    }
    fab.node_busbw_gbps = node_figures(c.run);
    fab.notes = c.notes;
    add_rdma(fab, reports, rdma_write);
    for (const TaskReport& t : tasks)
        if (!t.report) fab.notes.push_back(t.node + ": " + t.problem);
    if (!reports.empty()) fab.nccl = reports.front().nccl_path + " " + reports.front().nccl_version;
    return fab;
}

FabricStep run_fabric_step(const FleetCheckArgs& a, const std::string& self, const std::vector<std::string>& nodelist,
                           const std::optional<fs::path>& out) {
    FleetCheckArgs alloc = a;
    if (!nodelist.empty() && !std::getenv("SLURM_JOB_ID")) {  // the nodes the check step had, once more
        std::string list;
        for (const std::string& n : nodelist) list += (list.empty() ? "" : ",") + n;
        alloc.nodelist = list, alloc.nodes = std::to_string(nodelist.size()), alloc.partition.reset();
    }
    const int per_node = gpus_per_node(alloc);
    const std::string token = random_token();
    RendezvousBoard board("", 0, token);
    std::atomic<bool> board_done{false};
    std::thread serving([&] { board.serve_until(board_done); });
    struct Join {
        std::atomic<bool>& done;
        std::thread& t;
        ~Join() {
            done = true;
            t.join();
        }
    } join{board_done, serving};

    StepRequest req;
    req.command = rank_command(alloc, board.port(), token);
    req.srun_options = srun_options(alloc);
    if (!alloc.gpus_per_node) req.srun_options.push_back("--gpus-per-node=" + std::to_string(per_node));
    req.tasks_per_node = per_node;
    req.deadline_s =
        alloc.node_timeout ? parse_duration_s(*alloc.node_timeout, "--node-timeout") : kDefaultNodeTimeoutS;
    req.gpuvet = alloc.gpuvet.value_or(self);
    req.version = GPUVET_VERSION;
    req.expected_nodes = expected_nodes(alloc);

    std::vector<TaskReport> tasks;
    StepOutcome o = run_step(req, stop_flag(), [&](NodeOutput& n) { tasks.push_back(take_task(n)); });
    FabricStep step;
    step.stopped = o.stopped;
    std::vector<std::string> named;
    for (auto& n : o.nodes) {
        if (!n.node.empty() && std::find(named.begin(), named.end(), n.node) == named.end()) named.push_back(n.node);
        if (!n.finished) tasks.push_back({n.node, std::nullopt, unfinished_problem(o, n, req.deadline_s)});
    }
    if (o.nodes.empty() && !o.stopped)
        throw runtime_error("the all-reduce step ran on no node: " + trim(o.srun_messages),
                            "check the allocation options (-N, --partition, --nodelist) against sinfo");
    // Tasks report in the order they finish; the documents list a node's GPUs in order.
    std::stable_sort(tasks.begin(), tasks.end(), [](const TaskReport& a, const TaskReport& b) {
        auto key = [](const TaskReport& t) {
            return t.report ? std::pair(t.report->node_index, t.report->local_rank) : std::pair(INT_MAX, INT_MAX);
        };
        return key(a) < key(b);
    });
    const std::vector<std::string> nodes = node_order(tasks, named);
    if (!o.job_id.empty()) step.notes.push_back("all-reduce: Slurm job " + o.job_id + ", step " + o.step_id);
    if (o.stopped) step.notes.push_back("interrupted: the all-reduce step was cancelled");
    step.nodes = node_inputs(nodes, tasks);
    if (nodes.size() < 2 && !o.stopped)
        throw usage_error(
            "the all-reduce between nodes needs at least 2 nodes, the step ran on " + std::to_string(nodes.size()),
            "ask for 2 nodes or more (-N 2)");
    step.fabric = judged_fabric(tasks, nodes, per_node, !a.no_rdma_write);
    if (out) write_rank_reports(*out, nodes, tasks);
    return step;
}

int run_fleet_allreduce(const GlobalOptions& g, const FleetCheckArgs& a, const std::string& self) {
    std::optional<fs::path> out;
    if (a.out) out = report_folder(*a.out);
    check_allreduce_args(a, "--max-size");  // exit 2 before anything starts
    FabricStep step = run_fabric_step(a, self, {}, out);
    Fleet f = analyse_fleet(std::move(step.nodes), std::move(step.fabric));
    f.notes.insert(f.notes.end(), step.notes.begin(), step.notes.end());
    Envelope env = finished_envelope(g);
    if (out) write_fleet_files(f, *out, env);
    if (g.json) std::cout << render_fleet_json(f, env);
    else std::cout << terminal_safe(render_fleet_terminal(f, detect_style(g.no_color)));
    std::cout.flush();
    return fleet_exit_code(f);
}

int run_fleet_rank(const FleetRankArgs& a) {
    auto env = [](const char* name) -> std::optional<std::string> {
        const char* v = std::getenv(name);
        return v ? std::optional<std::string>(v) : std::nullopt;
    };
    RankSettings s;
    s.place = rank_place({}, env);
    if (s.place.world % s.place.nodes != 0)
        throw input_error(std::to_string(s.place.world) + " ranks on " + std::to_string(s.place.nodes) +
                              " nodes are not the same number on every node",
                          "start the step with --ntasks-per-node");
    s.node = env("SLURMD_NODENAME").value_or("");
    if (s.node.empty()) {
        char h[256] = "";
        ::gethostname(h, sizeof h - 1);
        s.node = h;
    }
    s.board_host = a.board_host.value_or(env("SLURM_LAUNCH_NODE_IPADDR").value_or(""));
    if (s.board_host.empty())
        throw usage_error("no address for the rendezvous: SLURM_LAUNCH_NODE_IPADDR is not set",
                          "give --board-host (gpuvet fleet allreduce --rendezvous-host)");
    s.board_port = a.board_port;
    s.token = a.token;
    s.max_bytes = max_bytes_of(a.max_size, "--max-size");
    s.allow_fallback = a.allow_fallback;
    s.rdma_write = !a.no_rdma_write;
    s.root = env("GPUVET_ROOT").value_or("/");
    if (s.root.empty()) s.root = "/";
    s.log_dir = env("TMPDIR").value_or("/tmp");
    if (s.log_dir.empty()) s.log_dir = "/tmp";
    s.job_tag = env("SLURM_JOB_ID").value_or("0") + "." + env("SLURM_STEP_ID").value_or("0");
    RankReport r = run_rank(s, &stop_flag());
    std::cout << to_json(r).dump() << "\n";
    std::cout.flush();
    return r.error.empty() ? 0 : 3;
}

}  // namespace gpuvet
