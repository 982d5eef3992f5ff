#include "host/host_load.hpp"

#include <cctype>
#include <sstream>
#include <vector>

namespace gpuvet {

std::optional<CpuTicks> parse_proc_stat_cpu(const std::string& text) {
    std::istringstream in(text);
    std::string word;
    if (!(in >> word) || word != "cpu") return std::nullopt;
    // user nice system idle iowait irq softirq steal (guest counts are inside user/nice already).
    std::vector<std::uint64_t> v;
    for (std::uint64_t x; v.size() < 8 && in >> x;) v.push_back(x);
    if (v.size() < 4) return std::nullopt;
    CpuTicks t;
    for (auto x : v) t.total += x;
    std::uint64_t idle = v[3] + (v.size() > 4 ? v[4] : 0);
    t.busy = t.total - idle;
    return t;
}

int count_proc_stat_cpus(const std::string& text) {
    int n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.size() > 3 && line.compare(0, 3, "cpu") == 0 && std::isdigit(static_cast<unsigned char>(line[3]))) ++n;
    return n;
}

std::optional<LoadAverage> parse_loadavg(const std::string& text) {
    std::istringstream in(text);
    LoadAverage l;
    if (!(in >> l.one >> l.five >> l.fifteen)) return std::nullopt;
    return l;
}

HostLoad HostLoadReader::read() {
    HostLoad h;
    auto stat = fs_.read("/proc/stat");
    auto now = stat ? parse_proc_stat_cpu(*stat) : std::nullopt;
    if (!now) h.cpu_busy_percent = Fact<double>::absent("/proc/stat unreadable");
    else if (!last_ || now->total <= last_->total) h.cpu_busy_percent = Fact<double>::absent("needs two samples");
    else
        h.cpu_busy_percent =
            100.0 * static_cast<double>(now->busy - last_->busy) / static_cast<double>(now->total - last_->total);
    if (now) last_ = now;
    if (stat) h.cpus = count_proc_stat_cpus(*stat);
    else h.cpus = Fact<int>::absent("/proc/stat unreadable");
    auto mem_text = fs_.read("/proc/meminfo");
    auto mem = mem_text ? parse_meminfo(*mem_text) : std::nullopt;
    if (mem) {
        h.memory_total_bytes = mem->total_bytes;
        h.memory_used_bytes = mem->total_bytes - mem->available_bytes;
    } else {
        h.memory_total_bytes = h.memory_used_bytes = Fact<std::uint64_t>::absent("/proc/meminfo unreadable");
    }
    auto la_text = fs_.read("/proc/loadavg");
    auto la = la_text ? parse_loadavg(*la_text) : std::nullopt;
    h.load = la ? Fact<LoadAverage>(*la) : Fact<LoadAverage>::absent("/proc/loadavg unreadable");
    return h;
}

}  // namespace gpuvet
