#include "monitor/process_rows.hpp"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "host/process_info.hpp"

namespace gpuvet {

std::vector<ProcessRow> ProcessRows::read(const MonitorTick& tick) {
    std::vector<ProcessRow> rows;
    std::map<int, Seen> now;
    const double t_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    for (const auto& g : tick.gpus)
        for (const auto& p : g.sample.processes) {
            ProcessRow r;
            r.gpu = g.index;
            r.pid = p.pid;
            r.type = p.type;
            r.gpu_memory_bytes = p.used_memory_bytes;
            auto info = read_process(fs_, static_cast<int>(p.pid));
            if (!info) {
                const std::string why = "no such PID in this /proc (a host PID seen from a container?)";
                r.user = r.command = Fact<std::string>::absent(why);
                r.cpu_percent = Fact<double>::absent(why);
            } else {
                r.user = info->uid ? Fact<std::string>(user_name(*info->uid))
                                   : Fact<std::string>::absent(info->uid.absent_reason);
                r.command = info->cmdline.empty() ? info->comm : info->cmdline;
                std::uint64_t ticks = info->utime_ticks + info->stime_ticks;
                auto it = last_.find(info->pid);
                if (it == last_.end() || t_s <= it->second.t_s || ticks < it->second.ticks)
                    r.cpu_percent = Fact<double>::absent("needs two samples");
                else
                    r.cpu_percent = 100.0 * static_cast<double>(ticks - it->second.ticks) /
                                    static_cast<double>(clock_ticks_per_s()) / (t_s - it->second.t_s);
                now[info->pid] = Seen{ticks, t_s};
            }
            rows.push_back(std::move(r));
        }
    last_ = std::move(now);
    std::stable_sort(rows.begin(), rows.end(), [](const ProcessRow& a, const ProcessRow& b) {
        return std::tie(a.gpu, a.pid) < std::tie(b.gpu, b.pid);
    });
    return rows;
}

}  // namespace gpuvet
