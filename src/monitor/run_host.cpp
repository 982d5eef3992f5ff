#include "monitor/run_host.hpp"

#include <algorithm>

#include "host/process_info.hpp"

namespace gpuvet {

bool is_dataloader_worker_name(const std::string& comm) {
    for (const char* prefix : {"pt_data_worker", "pt_multiprocess", "pt_thread_data_"})
        if (comm.rfind(prefix, 0) == 0) return true;
    return false;
}

RunHostSampler::RunHostSampler(HostFs fs, int root, int job) : fs_(std::move(fs)), root_(root), job_(job) {}

namespace {

double rate(double delta, double dt_s) { return dt_s > 0 ? std::max(0.0, delta) / dt_s : kUnmeasured; }

}  // namespace

namespace {

// One pass over /proc/<pid>/stat: every process alive now.
std::map<int, ProcessInfo> scan_processes(const HostFs& fs) {
    std::map<int, ProcessInfo> live;
    for (int pid : list_pids(fs)) {
        auto stat = fs.read("/proc/" + std::to_string(pid) + "/stat");
        if (!stat) continue;
        if (auto p = parse_proc_pid_stat(*stat)) live.emplace(pid, *p);
    }
    return live;
}

// The live descendants of `root` (not zombies), found by walking each process's parents.
std::set<int> tree_under(const std::map<int, ProcessInfo>& live, int root) {
    auto parent_of = [&](int pid) -> std::optional<int> {
        auto it = live.find(pid);
        return it == live.end() ? std::nullopt : std::optional<int>(it->second.ppid);
    };
    std::set<int> tree;
    for (auto& [pid, p] : live)
        if (p.state != 'Z' && descends_from(pid, root, parent_of)) tree.insert(pid);
    return tree;
}

std::set<int> descendants(std::map<int, std::vector<int>>& children, int of) {
    std::set<int> out;
    std::vector<int> stack = of > 0 ? children[of] : std::vector<int>{};
    while (!stack.empty()) {
        int p = stack.back();
        stack.pop_back();
        if (out.insert(p).second)
            for (int c : children[p]) stack.push_back(c);
    }
    return out;
}

}  // namespace

// Processes that ended since the last tick: a parent inside the tree reaps them and its own
// /proc/<pid>/io then grows by their totals, which were counted already.
void RunHostSampler::forget_ended(const std::set<int>& tree, TreeDeltas& d) {
    for (auto& [pid, s] : seen_) {
        if (!s.info.alive || tree.count(pid)) continue;
        s.info.alive = false;
        if (!s.reaped_by_root && tree.count(s.info.ppid)) {
            d.read -= s.info.read_bytes;
            d.rchar -= s.info.rchar;
            d.write -= s.info.write_bytes;
        }
    }
    if (seen_.size() <= kMaxProcessesKept) return;
    // A job that starts processes without end (a shell loop) must not grow the table without end:
    // the ended ones with the least CPU go, counted, until half the room is free again.
    std::vector<std::pair<double, int>> ended;
    for (auto& [pid, s] : seen_)
        if (!s.info.alive) ended.push_back({s.info.cpu_s, pid});
    std::sort(ended.begin(), ended.end());
    for (const auto& [cpu, pid] : ended) {
        if (seen_.size() <= kMaxProcessesKept / 2) break;
        seen_.erase(pid);
        ++dropped_;
    }
}

// One process of the tree: its CPU, I/O and run-queue counters since the last tick.
void RunHostSampler::account(int pid, const ProcessInfo& p, double dt_s, TreeDeltas& d) {
    const double tck = static_cast<double>(clock_ticks_per_s());
    auto [it, fresh] = seen_.try_emplace(pid);
    Seen& s = it->second;
    const std::string dir = "/proc/" + std::to_string(pid);
    if (fresh) {
        s.info.pid = pid;
        if (auto cmd = fs_.read(dir + "/cmdline")) {
            for (char& c : *cmd)
                if (c == '\0') c = ' ';
            while (!cmd->empty() && cmd->back() == ' ') cmd->pop_back();
            s.info.cmdline = *cmd;
        }
    }
    s.info.ppid = p.ppid;
    s.info.comm = p.comm;  // a worker renames itself after the fork
    s.reaped_by_root = p.ppid == root_;
    std::uint64_t ticks = p.utime_ticks + p.stime_ticks;
    double dt = std::max(0.0, static_cast<double>(ticks) - static_cast<double>(s.cpu_ticks));
    d.cpu_ticks += dt;
    d.cpu_now[pid] = dt_s > 0 ? dt / tck / dt_s : kUnmeasured;
    s.cpu_ticks = ticks;
    s.info.cpu_s = static_cast<double>(ticks) / tck;
    if (auto text = fs_.read(dir + "/io"))
        if (auto io = parse_proc_pid_io(*text)) {
            d.io_seen = true;
            d.read += static_cast<double>(io->read_bytes) - s.info.read_bytes;
            d.rchar += static_cast<double>(io->rchar) - s.info.rchar;
            d.write += static_cast<double>(io->write_bytes) - s.info.write_bytes;
            s.info.read_bytes = static_cast<double>(io->read_bytes);
            s.info.rchar = static_cast<double>(io->rchar);
            s.info.write_bytes = static_cast<double>(io->write_bytes);
        }
    if (auto text = fs_.read(dir + "/schedstat"))
        if (auto ss = parse_schedstat(*text)) {
            d.sched_seen = true;
            d.run_ns += static_cast<double>(ss->run_ns) - static_cast<double>(s.run_ns);
            d.wait_ns += static_cast<double>(ss->wait_ns) - static_cast<double>(s.wait_ns);
            s.run_ns = ss->run_ns;
            s.wait_ns = ss->wait_ns;
        }
}

// The main process: the one on the GPU when NVML names it; otherwise the command itself,
// descending through launchers (a shell, `uv run`) that idle with a single child.
int RunHostSampler::main_process(const std::map<int, ProcessInfo>& live, const std::set<int>& tree,
                                 const std::set<int>& gpu_pids, std::map<int, std::vector<int>>& children,
                                 const TreeDeltas& d) const {
    int main = tree.count(job_) ? job_ : -1;
    for (int g : gpu_pids)
        if (tree.count(g)) {
            main = g;
            break;
        }
    if (main != job_ || main <= 0) return main;
    for (int hops = 0; hops < 8; ++hops) {
        auto& kids = children[main];
        auto own_it = d.cpu_now.find(main);
        double own = own_it != d.cpu_now.end() ? own_it->second : 0;
        if (kids.size() != 1 || (measured(own) && own >= 0.05) || is_dataloader_worker_name(live.at(kids[0]).comm))
            break;
        main = kids[0];
    }
    return main;
}

// Roles (main, worker, other) and the counts of processes running or blocked.
RunHostSampler::RoleCpu RunHostSampler::assign_roles(HostPoint& h, const std::map<int, ProcessInfo>& live,
                                                     const std::set<int>& tree, int main, const std::set<int>& workers,
                                                     const TreeDeltas& d) {
    RoleCpu r;
    int runnable = 0, blocked = 0, workers_runnable = 0;
    for (int pid : tree) {
        char st = live.at(pid).state;
        runnable += st == 'R';
        blocked += st == 'D';
        auto c_it = d.cpu_now.find(pid);
        double c = c_it != d.cpu_now.end() ? c_it->second : 0;
        Seen& s = seen_[pid];
        if (pid == main) {
            s.info.role = "main";
            r.main += measured(c) ? c : 0;
        } else if (workers.count(pid)) {
            s.info.role = "worker";
            workers_runnable += st == 'R';
            h.named_workers += is_dataloader_worker_name(live.at(pid).comm);
            if (measured(c)) {
                r.workers += c;
                r.busiest = std::max(r.busiest, c);
            }
        } else if (s.info.role.empty()) {
            s.info.role = "other";
        }
    }
    h.processes = static_cast<int>(tree.size());
    h.workers = static_cast<int>(workers.size());
    h.runnable = runnable;
    h.blocked = blocked;
    if (!workers.empty()) h.workers_runnable_fraction = static_cast<double>(workers_runnable) / workers.size();
    return r;
}

void RunHostSampler::read_tree(HostPoint& h, const std::set<int>& gpu_pids, double dt_s) {
    std::map<int, ProcessInfo> live = scan_processes(fs_);
    std::set<int> tree = tree_under(live, root_);
    TreeDeltas d;
    forget_ended(tree, d);
    for (int pid : tree) account(pid, live.at(pid), dt_s, d);
    tree_ = tree;

    std::map<int, std::vector<int>> children;
    for (int pid : tree) children[live.at(pid).ppid].push_back(pid);
    int main = main_process(live, tree, gpu_pids, children, d);
    std::set<int> workers = descendants(children, main);
    RoleCpu cpu = assign_roles(h, live, tree, main, workers, d);
    if (dt_s <= 0) return;  // the first tick has no interval yet: counts only
    h.tree_cpu_cores = d.cpu_ticks / static_cast<double>(clock_ticks_per_s()) / dt_s;
    h.main_cpu_cores = cpu.main;
    h.workers_cpu_cores = workers.empty() ? kUnmeasured : cpu.workers;
    h.busiest_worker_cpu_cores = workers.empty() ? kUnmeasured : cpu.busiest;
    if (d.io_seen) {
        h.disk_read_bytes_per_s = rate(d.read, dt_s);
        h.rchar_bytes_per_s = rate(d.rchar, dt_s);
        h.disk_write_bytes_per_s = rate(d.write, dt_s);
    } else if (!tree.empty()) {
        absent_.emplace("disk", "/proc/<pid>/io unreadable for the job's processes");
    }
    // Kernels that collect no per-task sched_info print zeros: unknown, not "no waiting".
    if (d.sched_seen && (d.run_ns > 0 || d.wait_ns > 0)) {
        if (d.run_ns + d.wait_ns > 0) h.rq_wait_fraction = d.wait_ns / (d.run_ns + d.wait_ns);
    } else if (d.cpu_ticks > 0) {
        absent_.emplace("rq_wait",
                        "this kernel does not collect per-task run-queue wait (/proc/<pid>/schedstat reads 0: "
                        "sysctl kernel.sched_schedstats=1 turns it on)");
    }
}

void RunHostSampler::read_system(HostPoint& h, double dt_s) {
    auto stat = read_proc_stat(fs_);
    if (stat && last_stat_ && dt_s > 0) {
        CpuTimes a, b;
        for (auto& [cpu, t] : *last_stat_) a.busy += t.busy, a.idle += t.idle, a.steal += t.steal;
        for (auto& [cpu, t] : *stat) b.busy += t.busy, b.idle += t.idle, b.steal += t.steal;
        double busy = static_cast<double>(b.busy) - static_cast<double>(a.busy);
        double idle = static_cast<double>(b.idle) - static_cast<double>(a.idle);
        double steal = static_cast<double>(b.steal) - static_cast<double>(a.steal);
        if (busy + idle + steal > 0) h.host_busy_percent = 100.0 * busy / (busy + idle + steal);
        if (auto w = steal_between(*last_stat_, *stat)) h.steal_percent = 100.0 * w->steal_fraction;
    } else if (!stat) {
        absent_.emplace("host_cpu", "/proc/stat unreadable");
    }
    last_stat_ = stat;

    const char* names[3] = {"cpu", "io", "memory"};
    double* out[3] = {&h.psi_cpu_percent, &h.psi_io_percent, &h.psi_memory_percent};
    for (int k = 0; k < 3; ++k) {
        auto p = read_pressure(fs_, names[k]);
        if (!p)
            absent_.emplace(std::string("psi_") + names[k],
                            std::string("/proc/pressure/") + names[k] +
                                " unreadable (needs Linux 4.20+ with CONFIG_PSI, not disabled by psi=0)");
        else if (last_psi_[k] && dt_s > 0)
            *out[k] = std::min(100.0, 100.0 *
                                          rate(static_cast<double>(p->some_total_us) -
                                                   static_cast<double>(last_psi_[k]->some_total_us),
                                               dt_s) /
                                          1e6);
        last_psi_[k] = p;
    }

    auto net_text = fs_.read("/proc/net/dev");
    auto net = net_text ? parse_net_dev(*net_text) : std::nullopt;
    if (!net) absent_.emplace("network", "/proc/net/dev unreadable");
    else if (last_net_ && dt_s > 0) {
        h.net_rx_bytes_per_s =
            rate(static_cast<double>(net->rx_bytes) - static_cast<double>(last_net_->rx_bytes), dt_s);
        h.net_tx_bytes_per_s =
            rate(static_cast<double>(net->tx_bytes) - static_cast<double>(last_net_->tx_bytes), dt_s);
    }
    last_net_ = net;

    auto mem_text = fs_.read("/proc/meminfo");
    auto mem = mem_text ? parse_meminfo(*mem_text) : std::nullopt;
    if (!mem) absent_.emplace("memory", "/proc/meminfo unreadable");
    else {
        h.memory_used_bytes = static_cast<double>(mem->total_bytes - std::min(mem->total_bytes, mem->available_bytes));
        h.swap_used_bytes =
            static_cast<double>(mem->swap_total_bytes - std::min(mem->swap_total_bytes, mem->swap_free_bytes));
    }
}

HostPoint RunHostSampler::sample(const std::set<int>& gpu_pids) {
    auto now = std::chrono::steady_clock::now();
    double dt_s = last_ ? std::chrono::duration<double>(now - *last_).count() : 0;
    last_ = now;
    HostPoint h;
    read_tree(h, gpu_pids, dt_s);
    read_system(h, dt_s);
    return h;
}

std::vector<TreeProcess> RunHostSampler::processes() const {
    std::vector<TreeProcess> v;
    for (auto& [pid, s] : seen_) v.push_back(s.info);
    std::stable_sort(v.begin(), v.end(), [](const TreeProcess& a, const TreeProcess& b) { return a.cpu_s > b.cpu_s; });
    return v;
}

}  // namespace gpuvet
