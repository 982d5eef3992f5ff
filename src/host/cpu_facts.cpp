#include "host/cpu_facts.hpp"

#include <sched.h>

#include <charconv>

#include "core/strings.hpp"

namespace gpuvet {

std::map<std::string, int> read_governors(const HostFs& fs) {
    std::map<std::string, int> out;
    for (auto& e : fs.list("/sys/devices/system/cpu")) {
        if (!starts_with(e, "cpu") || e.size() < 4 || !std::isdigit(static_cast<unsigned char>(e[3]))) continue;
        if (auto g = fs.read_line("/sys/devices/system/cpu/" + e + "/cpufreq/scaling_governor"); g && !g->empty())
            ++out[*g];
    }
    return out;
}

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> out;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
    for (int i = 0; i < CPU_SETSIZE; ++i)
        if (CPU_ISSET(i, &set)) out.push_back(i);
    return out;
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view list) {
    std::vector<int> out;
    std::string s = trim(list);
    if (s.empty()) return std::nullopt;
    auto num = [](std::string_view t) -> std::optional<int> {
        int v = 0;
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || p != t.data() + t.size() || v < 0) return std::nullopt;
        return v;
    };
    for (auto& part : split(s, ',')) {
        auto dash = part.find('-');
        auto a = num(std::string_view(part).substr(0, dash));
        auto b = dash == std::string::npos ? a : num(std::string_view(part).substr(dash + 1));
        if (!a || !b || *b < *a) return std::nullopt;
        for (int i = *a; i <= *b; ++i) out.push_back(i);
    }
    return out;
}

}  // namespace gpuvet
