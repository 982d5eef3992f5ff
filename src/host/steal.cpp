#include "host/steal.hpp"

#include <sstream>

#include "core/strings.hpp"

namespace gpuvet {

std::map<int, CpuTimes> parse_proc_stat(const std::string& text) {
    std::map<int, CpuTimes> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!starts_with(line, "cpu") || line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3])))
            continue;
        std::istringstream f(line);
        std::string name;
        f >> name;
        std::uint64_t v[10] = {};
        int n = 0;
        while (n < 10 && (f >> v[n])) ++n;
        if (n < 4) continue;  // malformed line: skip rather than invent zeros for a real CPU
        CpuTimes t;
        // user nice system idle iowait irq softirq steal guest guest_nice
        t.busy = v[0] + v[1] + v[2] + v[5] + v[6];
        t.idle = v[3] + v[4];
        t.steal = v[7];
        try {
            out[std::stoi(name.substr(3))] = t;
        } catch (...) {}
    }
    return out;
}

std::optional<std::map<int, CpuTimes>> read_proc_stat(const HostFs& fs) {
    auto text = fs.read("/proc/stat");
    if (!text) return std::nullopt;
    auto m = parse_proc_stat(*text);
    if (m.empty()) return std::nullopt;
    return m;
}

std::optional<StealWindow> steal_between(const std::map<int, CpuTimes>& before, const std::map<int, CpuTimes>& after) {
    StealWindow w;
    for (auto& [cpu, b] : before) {
        auto it = after.find(cpu);
        if (it == after.end()) continue;  // CPU went offline in between
        const CpuTimes& a = it->second;
        if (a.busy < b.busy || a.steal < b.steal) continue;  // counter reset (hotplug)
        w.steal_ticks += a.steal - b.steal;
        w.demanded_ticks += (a.busy - b.busy) + (a.steal - b.steal);
    }
    if (w.demanded_ticks == 0) return std::nullopt;
    w.steal_fraction = double(w.steal_ticks) / double(w.demanded_ticks);
    return w;
}

}  // namespace gpuvet
