#include "fleet/step.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/interrupt.hpp"
#include "fleet/child_process.hpp"

extern char** environ;

namespace gpuvet {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kErrKeepBytes = 64 * 1024;
// How long a cancelled step may take to end before srun is killed: Slurm's KillWait (30 s by default)
// between SIGTERM and SIGKILL, and a margin.
constexpr double kCancelWaitS = 45;

std::optional<long> parse_int(const std::string& s) {
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0') return std::nullopt;
    return v;
}

}  // namespace

bool node_name_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit((unsigned char)a[i]) && std::isdigit((unsigned char)b[j])) {
            std::size_t i2 = i, j2 = j;
            while (i2 < a.size() && std::isdigit((unsigned char)a[i2])) ++i2;
            while (j2 < b.size() && std::isdigit((unsigned char)b[j2])) ++j2;
            std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
            x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
            y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
            if (x.size() != y.size()) return x.size() < y.size();
            if (x != y) return x < y;
            i = i2, j = j2;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i, ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

namespace {

// "key=value key=value" after the mark.
std::map<std::string, std::string> fields_of(const std::string& text) {
    std::map<std::string, std::string> out;
    for (auto& tok : split(text, ' ')) {
        auto eq = tok.find('=');
        if (eq != std::string::npos) out[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
    return out;
}

// srun --label: "0: text", with the task id padded by spaces when there are ten or more tasks.
bool split_label(const std::string& line, std::string& task, std::string& text) {
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t d = i;
    while (d < line.size() && line[d] >= '0' && line[d] <= '9') ++d;
    if (d == i || d + 1 >= line.size() + 1 || line.compare(d, 1, ":") != 0) return false;
    task = line.substr(i, d - i);
    text = line.substr(std::min(line.size(), d + 2));
    return true;
}

// srun -v's line for each node as the step starts: "srun: launching StepId=42.0 on host n1, 1 tasks: 0".
struct Launch {
    std::string job_id, step_id, node;
    std::vector<std::string> tasks;
};

// "0", "0-2", "0,3": the task ids of a launch line.
std::vector<std::string> task_ids(const std::string& list) {
    std::vector<std::string> out;
    for (auto& part : split(list, ',')) {
        auto dash = part.find('-');
        auto lo = parse_int(trim(part.substr(0, dash)));
        auto hi = dash == std::string::npos ? lo : parse_int(trim(part.substr(dash + 1)));
        if (!lo || !hi || *hi < *lo || *hi - *lo > 100000) continue;
        for (long t = *lo; t <= *hi; ++t) out.push_back(std::to_string(t));
    }
    return out;
}

std::optional<Launch> parse_launch(const std::string& line) {
    static const std::string kHead = "srun: launching StepId=";
    if (line.rfind(kHead, 0) != 0) return std::nullopt;
    std::string rest = line.substr(kHead.size());
    auto dot = rest.find('.'), on = rest.find(" on host "), comma = rest.find(", "), colon = rest.find("tasks: ");
    if (dot == std::string::npos || on == std::string::npos || comma == std::string::npos ||
        colon == std::string::npos || dot > on || on > comma)
        return std::nullopt;
    Launch l{rest.substr(0, dot), rest.substr(dot + 1, on - dot - 1), rest.substr(on + 9, comma - on - 9),
             task_ids(rest.substr(colon + 7))};
    if (l.job_id.empty() || l.node.empty() || l.tasks.empty()) return std::nullopt;
    return l;
}

// What srun -v says about itself (its options, plugins, the launch and end of each task): not kept
// among srun's messages, which name what went wrong.
bool srun_chatter(const std::string& line, bool& in_options) {
    if (line == "srun: defined options") return in_options = true;
    if (line == "srun: end of defined options") return !(in_options = false);
    if (in_options) return true;
    for (const char* p : {"srun: launching ", "srun: jobid ", "srun: launch/", "srun: route/", "srun: CpuBindType"})
        if (line.rfind(p, 0) == 0) return true;
    return false;
}

class StepRun {
public:
    StepRun(const StepRequest& req, const std::function<void(NodeOutput&)>& on_done)
        : req_(req), on_done_(on_done), step_nodes_(req.expected_nodes) {}

    // After a cancel, an end line no longer counts: the node did not finish in time.
    bool cancelled = false;

    void out_line(const std::string& line) {
        std::string task, text;
        if (!split_label(line, task, text)) {
            outcome_.srun_messages += line + "\n";
            return;
        }
        NodeOutput& n = tasks_[task];
        n.task = task;
        if (text.rfind(kStepMark, 0) != 0) {
            if (!n.finished) n.out += text + "\n";
            return;
        }
        auto f = fields_of(text.substr(std::string(kStepMark).size()));
        if (text.rfind(std::string(kStepMark) + "hello", 0) == 0) {
            n.node = f["node"], n.host = f["host"], n.version = f["version"];
            n.job_id = f["job"], n.step_id = f["step"];
            if (!started_.count(task)) started_[task] = Clock::now();
            if (!launched_) launched_ = Clock::now();
            if (outcome_.job_id.empty()) first_hello(n);
        } else if (f.count("exit") && !cancelled && !n.finished) {
            n.finished = true;
            n.refused = f.count("refused") ? f["refused"] : "";
            if (auto code = parse_int(f["exit"])) n.exit_code = int(*code);
            on_done_(n);
        }
    }

    void err_line(const std::string& line) {
        std::string task, text;
        if (!split_label(line, task, text)) {
            if (auto l = parse_launch(line)) launched(*l);
            if (!srun_chatter(line, in_options_)) outcome_.srun_messages += line + "\n";
            return;
        }
        NodeOutput& n = tasks_[task];
        n.task = task;
        n.err += text + "\n";
        if (n.err.size() > kErrKeepBytes) n.err.erase(0, n.err.size() - kErrKeepBytes);
    }

    // The step has started on a node: its ids (scancel needs them) and which task runs there.
    void launched(const Launch& l) {
        if (!launched_) launched_ = Clock::now();
        if (outcome_.job_id.empty()) {
            outcome_.job_id = l.job_id, outcome_.step_id = l.step_id;
            if (on_ids_) on_ids_(outcome_.job_id, outcome_.step_id);
        }
        for (auto& t : l.tasks) task_node_[t] = l.node;
    }

    // The step's node list, read from Slurm at the first hello when srun named no launch (other
    // versions word it otherwise): names for nodes that never say hello.
    void first_hello(const NodeOutput& n) {
        outcome_.job_id = n.job_id, outcome_.step_id = n.step_id;
        if (on_ids_) on_ids_(outcome_.job_id, outcome_.step_id);
        if (!task_node_.empty()) return;
        CommandResult r = run_command({req_.scontrol, "show", "step", n.job_id + "." + n.step_id}, 30);
        auto at = r.out.find(" NodeList=");
        if (r.status != 0 || at == std::string::npos) return;
        std::string list = r.out.substr(at + 10, r.out.find_first_of(" \n", at + 10) - at - 10);
        try {
            step_nodes_ = expand_hostlist(list, req_.scontrol);
        } catch (const Error&) {}
    }

    // True when every node of the step that has not finished is past its deadline: deadline_s from
    // its hello line, or from the step's launch for a node that has said none. Nothing is late
    // before the step has started (srun may wait for its allocation for as long as Slurm makes it).
    bool all_late(Clock::time_point now) const {
        if (!launched_) return false;
        const auto span = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(req_.deadline_s));
        bool unfinished = false;
        for (auto& t : known_tasks()) {
            auto it = tasks_.find(t);
            if (it != tasks_.end() && it->second.finished) continue;
            unfinished = true;
            auto start = started_.find(t);
            if (now < (start != started_.end() ? start->second : *launched_) + span) return false;
        }
        return unfinished;
    }

    void on_ids(std::function<void(const std::string&, const std::string&)> f) { on_ids_ = std::move(f); }

    StepOutcome finish() {
        std::vector<NodeOutput> by_task;
        for (auto& t : known_tasks()) {
            NodeOutput n = tasks_.count(t) ? std::move(tasks_[t]) : NodeOutput{};
            n.task = t;
            if (n.node.empty()) n.node = node_of(t);
            by_task.push_back(std::move(n));
        }
        for (auto& name : step_nodes_) {
            bool found = false;
            for (auto& n : by_task) found = found || n.node == name;
            if (!found) by_task.push_back(NodeOutput{"", name, "", "", "", "", false, std::nullopt, "", "", ""});
        }
        std::sort(by_task.begin(), by_task.end(),
                  [](const NodeOutput& a, const NodeOutput& b) { return node_name_less(a.node, b.node); });
        outcome_.nodes = std::move(by_task);
        return std::move(outcome_);
    }

    StepOutcome outcome_;

private:
    // Every task the step is known to have: those that spoke, those srun launched, and one per node
    // of the step's list (one task per node, in node-list order: srun's block distribution).
    std::vector<std::string> known_tasks() const {
        std::set<std::string> ids;
        for (auto& [t, n] : tasks_) ids.insert(t);
        for (auto& [t, node] : task_node_) ids.insert(t);
        if (task_node_.empty())
            for (std::size_t k = 0; k < step_nodes_.size(); ++k) ids.insert(std::to_string(k));
        std::vector<std::string> out(ids.begin(), ids.end());
        std::sort(out.begin(), out.end(), node_name_less);
        return out;
    }

    std::string node_of(const std::string& task) const {
        if (auto it = task_node_.find(task); it != task_node_.end()) return it->second;
        auto k = parse_int(task);
        if (k && *k >= 0 && std::size_t(*k) < step_nodes_.size()) return step_nodes_[std::size_t(*k)];
        return {};
    }

    const StepRequest& req_;
    const std::function<void(NodeOutput&)>& on_done_;
    std::function<void(const std::string&, const std::string&)> on_ids_;
    std::map<std::string, NodeOutput> tasks_;
    std::map<std::string, std::string> task_node_;  // from srun's launch lines
    std::map<std::string, Clock::time_point> started_;
    std::optional<Clock::time_point> launched_;
    std::vector<std::string> step_nodes_;
    bool in_options_ = false;
};

void take_lines(std::string& buf, bool all, const std::function<void(const std::string&)>& each) {
    std::size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
        each(buf.substr(start, nl - start));
        start = nl + 1;
    }
    buf.erase(0, start);
    if (all && !buf.empty()) each(buf), buf.clear();
}

// -v: srun then names each node as the step launches there (the step's ids and the node of every
// task, before any task has printed a line).
std::vector<std::string> srun_argv(const StepRequest& req) {
    std::vector<std::string> a{req.srun, "-v", "--label", "--ntasks-per-node=" + std::to_string(req.tasks_per_node),
                               "--kill-on-bad-exit=0"};
    a.insert(a.end(), req.srun_options.begin(), req.srun_options.end());
    a.insert(a.end(), {req.gpuvet, "fleet", "agent", "--expect-version", req.version, "--"});
    a.insert(a.end(), req.command.begin(), req.command.end());
    return a;
}

// What ends the step: scancel of the step inside someone's allocation; of the whole job when srun
// asked for the allocation itself (srun, killed, could not give it back).
std::vector<std::string> scancel_argv(const StepRequest& req, const std::string& job, const std::string& step,
                                      bool own_allocation) {
    return {req.scancel, own_allocation ? job : job + "." + step};
}

}  // namespace

StepOutcome run_step(const StepRequest& req, const std::atomic<bool>& stop,
                     const std::function<void(NodeOutput&)>& on_done) {
    ChildProcess srun(srun_argv(req), req.drop_env);
    // A second Ctrl-C leaves at once: srun gets SIGTERM (it ends the step and gives back its
    // allocation) and scancel runs, so nothing gpuvet started keeps running on the nodes.
    CleanupProcessGroup srun_group(srun.pid(), true);
    CleanupCommand scancel_on_exit;
    const char* outer_job = std::getenv("SLURM_JOB_ID");
    const bool own_allocation = !(outer_job && *outer_job);
    StepRun run(req, on_done);
    run.on_ids([&](const std::string& job, const std::string& step) {
        scancel_on_exit.arm(scancel_argv(req, job, step, own_allocation));
    });
    int out = srun.out_fd(), err = srun.err_fd();
    std::string obuf, ebuf;
    std::optional<Clock::time_point> cancelled_at;
    bool killed = false;
    while (out >= 0 || err >= 0) {
        pollfd p[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
        if (::poll(p, 2, 200) < 0 && errno != EINTR) break;
        if (p[0].revents) srun.read_ready(out, obuf);
        if (p[1].revents) srun.read_ready(err, ebuf);
        take_lines(obuf, out < 0, [&](const std::string& l) { run.out_line(l); });
        take_lines(ebuf, err < 0, [&](const std::string& l) { run.err_line(l); });
        bool stopped = stop.load(), late = !stopped && run.all_late(Clock::now());
        if ((late || stopped) && !cancelled_at) {
            run.outcome_.deadline_passed = late;
            run.outcome_.stopped = stopped;
            cancelled_at = Clock::now();
            run.cancelled = true;
            if (!run.outcome_.job_id.empty())
                run_command(scancel_argv(req, run.outcome_.job_id, run.outcome_.step_id, false), 30);
            else srun.signal_group(SIGTERM);  // still waiting for an allocation: srun withdraws it
        }
        if (cancelled_at && Clock::now() - *cancelled_at > std::chrono::duration<double>(kCancelWaitS)) {
            srun.signal_group(SIGKILL);
            killed = true;
            break;
        }
    }
    run.outcome_.srun_status = srun.wait_exit(cancelled_at ? 10 : kCancelWaitS);
    if (!run.outcome_.srun_status) {
        srun.signal_group(SIGKILL);
        killed = true;
    }
    // srun did not end by itself: what it started is ended through Slurm.
    if (killed && !run.outcome_.job_id.empty())
        run_command(scancel_argv(req, run.outcome_.job_id, run.outcome_.step_id, own_allocation), 30);
    return run.finish();
}

std::vector<std::string> expand_hostlist(const std::string& list, const std::string& scontrol) {
    CommandResult r = run_command({scontrol, "show", "hostnames", list}, 30);
    if (r.status != 0)
        throw input_error("Slurm cannot expand the node list '" + list + "': " + trim(r.err),
                          "give node names as Slurm writes them, e.g. n[1-3],gpu07");
    std::vector<std::string> out;
    for (auto& l : split(r.out, '\n'))
        if (!trim(l).empty()) out.push_back(trim(l));
    return out;
}

namespace {

volatile sig_atomic_t g_agent_child = 0;

void forward_signal(int sig) {
    if (g_agent_child > 0) ::kill(pid_t(g_agent_child), sig);
}

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

}  // namespace

int run_agent(const std::string& self, const std::vector<std::string>& args, const std::string& version,
              const std::string& expected_version) {
    char host[256] = "?";
    ::gethostname(host, sizeof host - 1);
    std::printf("%shello version=%s node=%s host=%s job=%s step=%s\n", kStepMark, version.c_str(),
                env_or("SLURMD_NODENAME", "?").c_str(), host, env_or("SLURM_JOB_ID", "?").c_str(),
                env_or("SLURM_STEP_ID", "?").c_str());
    std::fflush(stdout);
    if (!expected_version.empty() && expected_version != version) {
        std::fprintf(stderr, "gpuvet %s is installed on this node, the fleet runs gpuvet %s\n", version.c_str(),
                     expected_version.c_str());
        std::printf("%send exit=2 refused=version\n", kStepMark);
        std::fflush(stdout);
        return 2;
    }
    std::vector<char*> argv{const_cast<char*>(self.c_str())};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    struct sigaction sa {};
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, self.c_str(), nullptr, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    int status = 3;
    if (rc == 0) {
        g_agent_child = pid;
        int ws = 0;
        while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
        status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    } else {
        std::fprintf(stderr, "gpuvet fleet agent: cannot start %s: %s\n", self.c_str(), strerror(rc));
    }
    std::printf("%send exit=%d\n", kStepMark, status);
    std::fflush(stdout);
    return status;
}

}  // namespace gpuvet
