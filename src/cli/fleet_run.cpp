#include "cli/fleet_run.hpp"

#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cli/registry.hpp"
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

// The health check's whole run, its Slurm calls included: Slurm 22.05 kills HealthCheckProgram at a
// fixed 60 s, and a killed health check drains nothing and resumes nothing.
constexpr double kHealthCheckBudgetS = 50;
constexpr double kSlurmCallS = 8;  // sinfo, then scontrol: each at most this, inside the budget
constexpr double kPrologTimeoutS = 40;
constexpr double kNodeModeChecksMinS = 5;

}  // namespace

// A node name as a file name: Slurm's names are [A-Za-z0-9._-] in practice; anything else becomes _.
std::string file_stem(const std::string& node) {
    std::string s = node.empty() ? "unnamed" : node;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    return s == "." || s == ".." ? "_" + s : s;
}

namespace {

std::vector<std::string> check_command(const FleetCheckArgs& a) {
    // The nodes record nothing: the fleet's history is kept where fleet check runs (one file, one
    // writer), and each node's drift is judged there against that node's own past.
    std::vector<std::string> c{"check", "--json", "--no-history"};
    if (a.quick) c.push_back("--quick");
    if (a.full) c.push_back("--full");
    if (!a.only.empty()) c.insert(c.end(), {"--only", a.only});
    if (a.expect) c.insert(c.end(), {"--expect", *a.expect});
    if (a.order) c.insert(c.end(), {"--order", *a.order});
    if (a.burn_duration) c.insert(c.end(), {"--burn-duration", *a.burn_duration});
    return c;
}

}  // namespace

std::vector<std::string> expected_nodes(const FleetCheckArgs& a) {
    if (a.nodelist) return expand_hostlist(*a.nodelist);
    if (const char* list = std::getenv("SLURM_JOB_NODELIST"); list && *list && !a.nodes && !a.partition)
        return expand_hostlist(list);
    return {};
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

namespace {

// One finished node: its report written under --out, its summary kept, its text released.
// A node's report against its own history (history.drift, as check adds it, when --only selects it),
// then recorded there. The history never changes the node's status by failing: see history_drift.
void node_history(Report& r, const std::string& node, const FleetCheckArgs& a) {
    if (a.history.off) return;
    history::LiveIdentity live;  // the node's other ids travel in its report (host.identity, gpu.identity)
    live.slurm_node = node;
    if (selects_report_check(split_commas(a.only), "history.drift"))
        if (auto drift = history_drift(r, a.history, live)) r.checks.push_back(std::move(*drift));
    record_in_history(r, a.history, live);
}

FleetNodeInput take_node(NodeOutput& n, const std::optional<fs::path>& out, const FleetCheckArgs& a) {
    // The agent refuses another version itself; an agent that says another version and did not
    // refuse (one that predates the check) is held to the same rule here.
    if (n.refused == "version" || (!n.version.empty() && n.version != GPUVET_VERSION))
        return failed_node(n.node, "",
                           "runs gpuvet " + (n.version.empty() ? std::string("(unknown version)") : n.version) +
                               ", this fleet check is gpuvet " + GPUVET_VERSION +
                               ": install the same gpuvet on every node");
    if (trim(n.out).empty())
        return failed_node(n.node, "",
                           "its gpuvet exited " + (n.exit_code ? std::to_string(*n.exit_code) : std::string("?")) +
                               " without a report" + (n.err.empty() ? "" : ": " + last_line(n.err)));
    std::string path = out ? (*out / (file_stem(n.node) + ".json")).string() : "";
    if (out && nlohmann::json::accept(n.out)) write_file_atomically(path, n.out);
    FleetNodeInput in = read_fleet_node(n.node, path, n.out, [&](Report& r) { node_history(r, n.node, a); });
    if (in.problem.empty() && in.slurm && in.slurm->node && *in.slurm->node != n.node)
        in.problem = "its report says node " + *in.slurm->node;
    n.out.clear(), n.out.shrink_to_fit();
    return in;
}

}  // namespace

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

namespace {

// argv as a shell would take it back: words with a space quoted.
std::string shell_words(const std::vector<std::string>& argv) {
    std::string cmd;
    for (auto& x : argv) cmd += (cmd.empty() ? "" : " ") + (x.find(' ') != std::string::npos ? "'" + x + "'" : x);
    return cmd;
}

// What to do with a judged node in Slurm: drain a NO-GO one (the reason records what caused it),
// resume a GO one that gpuvet drained for causes this run has cleared.
NodeAction plan_node(const Fleet& f, const FleetNode& n, const SlurmNodeState& state) {
    std::vector<std::string> cleared = node_cleared(f, n);
    if (n.status != NodeStatus::NoGo) return plan_resume(state, cleared);
    // The reason's text: the first hardware finding, not a check that could not run ("... ERROR: ...").
    auto why = node_problems(f, n);
    auto first = std::find_if(why.begin(), why.end(), [](const std::string& w) {
        auto colon = w.find(": ");
        return colon == std::string::npos || !w.substr(0, colon).ends_with(" ERROR");
    });
    std::string text = first != why.end() ? *first : why.empty() ? "NO-GO" : why.front();
    return plan_drain(state, text, node_causes(f, n), cleared);
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
        NodeAction act = plan_node(f, n, *it);
        if (act.note.empty()) continue;
        // The name went through visible_text (failed_node, summarise_node); a note may quote sinfo.
        act.note = visible_text(act.note, false);
        bool run = !act.argv.empty() && (failing ? drain : resume);
        if (act.argv.empty()) os << n.in.name << ": " << act.note << "\n";
        else if (!run)
            os << n.in.name << ": " << act.note << " (not done without " << (failing ? "--drain" : "--resume")
               << "): " << shell_words(act.argv) << "\n";
        else if (std::string err = apply_action(act); !err.empty()) os << n.in.name << ": " << err << "\n";
        else os << n.in.name << ": " << act.note << "\n";
    }
}

}  // namespace

int run_fleet_check(const GlobalOptions& g, const FleetCheckArgs& a, const std::string& self) {
    if (a.allreduce) check_allreduce_args(a, "--allreduce-max-size");  // exit 2 before any step starts
    require_usable_history(a.history);  // an unusable --history-db is exit 2 before any step
    StepRequest req;
    req.command = check_command(a);
    req.srun_options = srun_options(a);
    req.deadline_s = a.node_timeout ? parse_duration_s(*a.node_timeout, "--node-timeout") : kDefaultNodeTimeoutS;
    req.gpuvet = a.gpuvet.value_or(self);
    req.version = GPUVET_VERSION;
    req.expected_nodes = expected_nodes(a);
    std::optional<fs::path> out;
    if (a.out) out = report_folder(*a.out);
    std::vector<FleetNodeInput> inputs;
    StepOutcome o = run_step(req, stop_flag(), [&](NodeOutput& n) { inputs.push_back(take_node(n, out, a)); });
    for (auto& n : o.nodes)
        if (!n.finished) inputs.push_back(failed_node(n.node, "", unfinished_problem(o, n, req.deadline_s)));
    if (o.nodes.empty() && !o.stopped)
        throw runtime_error("the step ran on no node: " + trim(o.srun_messages),
                            "check the allocation options (-N, --partition, --nodelist) against sinfo");
    std::sort(inputs.begin(), inputs.end(),
              [](const FleetNodeInput& x, const FleetNodeInput& y) { return node_name_less(x.name, y.name); });
    // The all-reduce between the same nodes, after their own checks.
    std::optional<FabricStep> fabric;
    if (a.allreduce && !o.stopped) {
        std::vector<std::string> names;
        for (auto& in : inputs) names.push_back(in.name);
        fabric = run_fabric_step(a, self, names, out);
    }
    Fleet f = analyse_fleet(std::move(inputs), fabric ? std::move(fabric->fabric) : std::nullopt);
    if (!o.job_id.empty()) f.notes.push_back("Slurm job " + o.job_id + ", step " + o.step_id);
    if (o.stopped) f.notes.push_back("interrupted: the step was cancelled, finished nodes are kept");
    if (fabric) f.notes.insert(f.notes.end(), fabric->notes.begin(), fabric->notes.end());
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

using Clock = std::chrono::steady_clock;

// The node modes' words: on stderr, and in syslog, since Slurm keeps neither a health check's nor a
// prolog's output.
void log_line(const std::string& text) {
    std::cerr << "gpuvet: " << text << "\n";
    ::syslog(LOG_WARNING, "%s", text.c_str());
}

int node_mode_body(const NodeModeArgs& a, NodeMode mode, const std::string& self, const Clock::time_point start) {
    const bool hc = mode == NodeMode::HealthCheck;
    const char* option = "--node-timeout";
    double budget_s = a.timeout ? parse_duration_s(*a.timeout, option) : hc ? kHealthCheckBudgetS : kPrologTimeoutS;
    // The checks get what the Slurm calls (health check only) and reaping a killed child leave.
    double reserve_s = hc ? 2 * kSlurmCallS + 2 * kReapWaitS : kReapWaitS;
    double checks_s = budget_s - reserve_s;
    if (checks_s < kNodeModeChecksMinS)
        throw usage_error(
            std::string(option) + " " + *a.timeout + " is too short: " +
                (hc ? "sinfo, scontrol and ending a stuck child take up to " : "ending a stuck check takes ") +
                format_number(reserve_s, 3) + " s of it, and the checks need " + format_number(kNodeModeChecksMinS, 3) +
                " s",
            "give at least " + format_number(reserve_s + kNodeModeChecksMinS, 3) + "s");
    auto left_s = [&] { return budget_s - std::chrono::duration<double>(Clock::now() - start).count(); };
    std::string node = this_node();
    std::optional<fs::path> details;
    if (a.details) {
        try {
            details = report_folder(*a.details);
        } catch (const Error& e) {  // the checks still run: the folder is for the details, not the verdict
            log_line(std::string("fleet prolog: no details file: ") + e.what());
        }
    }
    // A wedged driver is named inside the checks' time: their driver calls get a quarter of it at
    // most, so the report saying which call hung arrives before the checks are stopped.
    if (double fit_s = checks_s / 4; driver_timeout_s() > fit_s) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3f", fit_s);
        ::setenv(kEnvDriverTimeout, text, 1);
    }
    // A health check every few minutes and a prolog per job would fill the history with passive
    // checks: the history is for deliberate vetting runs (check, fleet check), so these record nothing.
    CommandResult r =
        run_command({self, "check", "--quick", "--only", kPassiveChecks, "--json", "--no-history"}, checks_s);
    FleetNodeInput in = trim(r.out).empty()
                            ? failed_node(node, "",
                                          "the checks gave no report within " + format_number(checks_s, 3) + " s" +
                                              (r.err.empty() ? "" : ": " + last_line(r.err)))
                            : read_fleet_node(node, "", r.out);
    if (details && nlohmann::json::accept(r.out)) {
        try {
            write_file_atomically(*details / (file_stem(node) + ".json"), r.out);
        } catch (const Error& e) {
            log_line(std::string("fleet prolog: no details file: ") + e.what());
        }
    }
    Fleet f = analyse_fleet({std::move(in)});
    const FleetNode& n = f.nodes.front();
    std::cout << terminal_safe(nhc_line(f, n)) << "\n";
    std::cout.flush();
    if (n.status == NodeStatus::Error) {
        log_line(std::string(hc ? "fleet health-check" : "fleet prolog") + ": the checks could not run on " + node +
                 ", nothing drained: " + node_problems(f, n).front());
        return hc ? exit_code::could_not_run : exit_code::ok;  // a broken tool never drains a node
    }
    if (!hc) return n.status == NodeStatus::NoGo ? exit_code::check_failed : exit_code::ok;
    const int verdict_code = n.status == NodeStatus::NoGo ? exit_code::check_failed : exit_code::ok;
    std::vector<SlurmNodeState> states = query_node_states({node}, std::clamp(left_s() - kReapWaitS, 1.0, kSlurmCallS));
    if (states.empty()) throw runtime_error("sinfo does not know node " + node, "run it on a node of the cluster");
    NodeAction act = plan_node(f, n, states.front());
    if (act.argv.empty()) {
        if (!act.note.empty()) std::cout << terminal_safe(node + ": " + act.note) << "\n";
    } else if (a.dry_run) {
        std::cout << terminal_safe(node + ": " + act.note + " (not done with --dry-run): " + shell_words(act.argv))
                  << "\n";
    } else if (std::string err = apply_action(act, std::max(1.0, left_s() - kReapWaitS)); !err.empty()) {
        log_line("fleet health-check: " + err);
        return exit_code::could_not_run;
    } else {
        std::cout << terminal_safe(node + ": " + act.note) << "\n";
    }
    return verdict_code;
}

}  // namespace

int run_node_mode(const GlobalOptions&, const NodeModeArgs& a, NodeMode mode, const std::string& self) {
    const auto start = Clock::now();
    if (mode == NodeMode::HealthCheck) return node_mode_body(a, mode, self, start);
    try {
        return node_mode_body(a, mode, self, start);
    } catch (const std::exception& e) {
        return prolog_tool_error(e.what());
    }
}

bool is_prolog_invocation(int argc, char** argv) {
    return argc >= 3 && std::string_view(argv[1]) == "fleet" && std::string_view(argv[2]) == "prolog";
}

int prolog_tool_error(const std::string& what) {
    log_line("fleet prolog: the checks could not run (" + what +
             "); exit 0: a tool that cannot run never drains a node");
    return exit_code::ok;
}

}  // namespace gpuvet
