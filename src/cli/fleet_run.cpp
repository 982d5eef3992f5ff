#include "cli/fleet_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "fleet/child_process.hpp"
#include "fleet/drain.hpp"
#include "fleet/step.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "gpu/burn.hpp"
#include "report/fleet_reader.hpp"
#include "report/fleet_view.hpp"
#include "report/style.hpp"

namespace gpuvet {

namespace fs = std::filesystem;

namespace {

constexpr double kDefaultNodeTimeoutS = 1800;
constexpr double kNodeModeTimeoutS = 40;  // Slurm 22.05 kills a health check at 60 s

// A node name as a file name: Slurm's names are [A-Za-z0-9._-] in practice; anything else becomes _.
std::string file_stem(const std::string& node) {
    std::string s = node.empty() ? "unnamed" : node;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    return s == "." || s == ".." ? "_" + s : s;
}

std::vector<std::string> check_command(const FleetCheckArgs& a) {
    std::vector<std::string> c{"check", "--json"};
    if (a.quick) c.push_back("--quick");
    if (a.full) c.push_back("--full");
    if (!a.only.empty()) c.insert(c.end(), {"--only", a.only});
    if (a.expect) c.insert(c.end(), {"--expect", *a.expect});
    if (a.order) c.insert(c.end(), {"--order", *a.order});
    if (a.burn_duration) c.insert(c.end(), {"--burn-duration", *a.burn_duration});
    return c;
}

std::vector<std::string> srun_options(const FleetCheckArgs& a) {
    std::vector<std::string> o;
    bool asks = a.nodes || a.partition || a.nodelist || a.reservation;
    const char* job = std::getenv("SLURM_JOB_ID");
    if (!asks && !(job && *job))
        throw usage_error("not inside a Slurm allocation, and no nodes asked for",
                          "run inside salloc/sbatch, or give -N COUNT, --partition or --nodelist");
    if (a.nodes) o.push_back("--nodes=" + *a.nodes);
    else if (const char* n = std::getenv("SLURM_JOB_NUM_NODES"); !asks && n && *n)
        o.push_back("--nodes=" + std::string(n));
    if (a.partition) o.push_back("--partition=" + *a.partition);
    if (a.nodelist) o.push_back("--nodelist=" + *a.nodelist);
    if (a.reservation) o.push_back("--reservation=" + *a.reservation);
    if (a.time) o.push_back("--time=" + *a.time);
    if (a.gpus_per_node) o.push_back("--gpus-per-node=" + *a.gpus_per_node);
    if (asks && !job) o.push_back("--job-name=gpuvet-fleet");
    return o;
}

std::string last_line(const std::string& text) {
    std::string t = trim(text);
    auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

// One finished node: its report written under --out, its summary kept, its text released.
FleetNodeInput take_node(NodeOutput& n, const std::optional<fs::path>& out) {
    if (n.refused == "version")
        return failed_node(n.node, "",
                           "runs gpuvet " + n.version + ", this fleet check is gpuvet " + GPUVET_VERSION +
                               ": install the same gpuvet on every node");
    if (trim(n.out).empty())
        return failed_node(n.node, "",
                           "its gpuvet exited " + (n.exit_code ? std::to_string(*n.exit_code) : std::string("?")) +
                               " without a report" + (n.err.empty() ? "" : ": " + last_line(n.err)));
    std::string path = out ? (*out / (file_stem(n.node) + ".json")).string() : "";
    if (out && nlohmann::json::accept(n.out)) write_file_atomically(path, n.out);
    FleetNodeInput in = read_fleet_node(n.node, path, n.out);
    if (in.problem.empty() && in.slurm && in.slurm->node && *in.slurm->node != n.node)
        in.problem = "its report says node " + *in.slurm->node;
    n.out.clear(), n.out.shrink_to_fit();
    return in;
}

std::string unfinished_problem(const StepOutcome& o, const NodeOutput& n, double deadline_s) {
    if (o.stopped)
        return std::string("not finished when the fleet check was interrupted") +
               (n.version.empty() ? " (it had not started)" : "");
    if (o.deadline_passed)
        return "did not finish within the node deadline of " + format_number(deadline_s, 4) +
               " s (hung or dead): its step was cancelled";
    std::string why = !n.err.empty() ? last_line(n.err) : last_line(o.srun_messages);
    if (n.version.empty())
        return "gpuvet fleet agent did not start there (srun exit " + std::to_string(o.srun_status.value_or(-1)) + ")" +
               (why.empty() ? "" : ": " + why);
    return "its task ended without a report (srun exit " + std::to_string(o.srun_status.value_or(-1)) + ")" +
           (why.empty() ? "" : ": " + why);
}

void write_fleet_files(const Fleet& f, const fs::path& dir, const Envelope& env) {
    write_file_atomically(dir / "fleet.json", render_fleet_json(f, env));
    write_file_atomically(dir / "fleet.md", render_fleet_markdown(f));
    write_file_atomically(dir / "fleet.html", render_fleet_html(f));
}

// The drain and resume commands for the fleet's nodes: run with the flag, else printed.
void keep_bad_nodes_out(const Fleet& f, bool drain, bool resume, std::ostream& os) {
    std::vector<std::string> names;
    for (auto& n : f.nodes)
        if (n.status != NodeStatus::Error) names.push_back(n.in.name);
    if (names.empty()) return;
    std::vector<SlurmNodeState> states = query_node_states(names);
    for (auto& n : f.nodes) {
        auto it = std::find_if(states.begin(), states.end(), [&](auto& s) { return s.node == n.in.name; });
        if (it == states.end() || n.status == NodeStatus::Error) continue;
        bool failing = n.status == NodeStatus::NoGo;
        auto why = node_problems(f, n);
        NodeAction act =
            failing ? plan_drain(*it, drain_reason(why.empty() ? "NO-GO" : why.front())) : plan_resume(*it);
        if (act.note.empty()) continue;
        bool run = !act.argv.empty() && (failing ? drain : resume);
        std::string cmd;
        for (auto& x : act.argv)
            cmd += (cmd.empty() ? "" : " ") + (x.find(' ') != std::string::npos ? "'" + x + "'" : x);
        // The name went through visible_text (failed_node, summarise_node); a note may quote sinfo.
        act.note = visible_text(act.note, false);
        if (act.argv.empty()) os << n.in.name << ": " << act.note << "\n";
        else if (!run)
            os << n.in.name << ": " << act.note << " (not done without " << (failing ? "--drain" : "--resume")
               << "): " << cmd << "\n";
        else if (std::string err = apply_action(act); !err.empty()) os << n.in.name << ": " << err << "\n";
        else os << n.in.name << ": " << act.note << "\n";
    }
}

}  // namespace

int run_fleet_check(const GlobalOptions& g, const FleetCheckArgs& a, const std::string& self) {
    StepRequest req;
    req.command = check_command(a);
    req.srun_options = srun_options(a);
    req.deadline_s = a.node_timeout ? parse_duration_s(*a.node_timeout, "--node-timeout") : kDefaultNodeTimeoutS;
    req.gpuvet = a.gpuvet.value_or(self);
    req.version = GPUVET_VERSION;
    // The nodes, when known before the step starts: a node that never starts is still named.
    if (a.nodelist) req.expected_nodes = expand_hostlist(*a.nodelist);
    else if (const char* list = std::getenv("SLURM_JOB_NODELIST"); list && *list && !a.nodes && !a.partition)
        req.expected_nodes = expand_hostlist(list);
    std::optional<fs::path> out;
    if (a.out) out = report_folder(*a.out);
    std::vector<FleetNodeInput> inputs;
    StepOutcome o = run_step(req, stop_flag(), [&](NodeOutput& n) { inputs.push_back(take_node(n, out)); });
    for (auto& n : o.nodes)
        if (!n.finished) inputs.push_back(failed_node(n.node, "", unfinished_problem(o, n, req.deadline_s)));
    if (o.nodes.empty() && !o.stopped)
        throw runtime_error("the step ran on no node: " + trim(o.srun_messages),
                            "check the allocation options (-N, --partition, --nodelist) against sinfo");
    std::sort(inputs.begin(), inputs.end(),
              [](const FleetNodeInput& x, const FleetNodeInput& y) { return node_name_less(x.name, y.name); });
    Fleet f = analyse_fleet(std::move(inputs));
    if (!o.job_id.empty()) f.notes.push_back("Slurm job " + o.job_id + ", step " + o.step_id);
    if (o.stopped) f.notes.push_back("interrupted: the step was cancelled, finished nodes are kept");
    Envelope env = finished_envelope(g);
    if (out) write_fleet_files(f, *out, env);
    if (g.json) std::cout << render_fleet_json(f, env);
    else if (a.nhc) std::cout << terminal_safe(render_fleet_nhc(f));  // node names and texts come from the nodes
    else std::cout << terminal_safe(render_fleet_terminal(f, detect_style(g.no_color)));
    std::cout.flush();
    if (!o.stopped) keep_bad_nodes_out(f, a.drain, a.resume, (g.json || a.nhc) ? std::cerr : std::cout);
    return fleet_exit_code(f);
}

namespace {

std::string this_node() {
    if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
    char host[256] = "";
    ::gethostname(host, sizeof host - 1);
    return host;
}

}  // namespace

int run_node_mode(const GlobalOptions& g, const NodeModeArgs& a, NodeMode mode, const std::string& self) {
    double timeout_s = a.timeout ? parse_duration_s(*a.timeout, "--node-timeout") : kNodeModeTimeoutS;
    std::string node = this_node();
    std::optional<fs::path> details;
    if (a.details) details = report_folder(*a.details);
    // A wedged driver is named inside the node's budget: the checks' driver calls get a quarter of
    // it at most, so the report saying which call hung arrives before the checks are stopped.
    if (double fit_s = timeout_s / 4; driver_timeout_s() > fit_s) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3f", fit_s);
        ::setenv(kEnvDriverTimeout, text, 1);
    }
    CommandResult r = run_command({self, "check", "--quick", "--only", kPassiveChecks, "--json"}, timeout_s);
    FleetNodeInput in = trim(r.out).empty()
                            ? failed_node(node, "",
                                          "the checks gave no report within " + format_number(timeout_s, 3) + " s" +
                                              (r.err.empty() ? "" : ": " + last_line(r.err)))
                            : read_fleet_node(node, "", r.out);
    if (details && nlohmann::json::accept(r.out)) write_file_atomically(*details / (file_stem(node) + ".json"), r.out);
    Fleet f = analyse_fleet({std::move(in)});
    const FleetNode& n = f.nodes.front();
    std::cout << terminal_safe(nhc_line(f, n)) << "\n";
    if (mode == NodeMode::Prolog || n.status == NodeStatus::Error)
        return n.status == NodeStatus::NoGo ? exit_code::check_failed
               : n.status == NodeStatus::Go ? exit_code::ok
               : mode == NodeMode::Prolog   ? exit_code::ok  // a broken tool never drains a node
                                            : exit_code::could_not_run;
    std::vector<SlurmNodeState> states = query_node_states({node});
    if (states.empty()) throw runtime_error("sinfo does not know node " + node, "run it on a node of the cluster");
    auto why = node_problems(f, n);
    NodeAction act = n.status == NodeStatus::NoGo ? plan_drain(states.front(), drain_reason(why.front()))
                                                  : plan_resume(states.front());
    // The note names the node (SLURMD_NODENAME, the host's name) and quotes Slurm's words.
    if (!act.argv.empty() && a.dry_run)
        std::cout << terminal_safe("would run: " + act.argv[0] + " ... " + act.note) << "\n";
    else if (!act.argv.empty())
        if (std::string err = apply_action(act); !err.empty()) std::cerr << "gpuvet: " << terminal_safe(err) << "\n";
    (void)g;
    return n.status == NodeStatus::NoGo ? exit_code::check_failed : exit_code::ok;
}

}  // namespace gpuvet
