#include "host/load_signals.hpp"

#include <sstream>

#include "core/strings.hpp"

namespace gpuvet {

std::optional<SchedStat> parse_schedstat(const std::string& text) {
    std::istringstream in(text);
    SchedStat s;
    if (!(in >> s.run_ns >> s.wait_ns)) return std::nullopt;
    in >> s.timeslices;  // absent on very old kernels
    return s;
}

namespace {

// "some avg10=0.00 avg60=1.03 avg300=1.07 total=1067854133"
bool parse_pressure_line(const std::string& line, double& avg10, std::uint64_t& total) {
    std::istringstream f(line);
    std::string word;
    f >> word;  // some / full
    bool have_avg = false, have_total = false;
    while (f >> word) {
        auto eq = word.find('=');
        if (eq == std::string::npos) return false;
        std::string key = word.substr(0, eq), value = word.substr(eq + 1);
        try {
            if (key == "avg10") avg10 = std::stod(value), have_avg = true;
            else if (key == "total") total = std::stoull(value), have_total = true;
        } catch (...) {
            return false;
        }
    }
    return have_avg && have_total;
}

}  // namespace

std::optional<PressureStat> parse_pressure(const std::string& text) {
    std::istringstream in(text);
    PressureStat p;
    bool some = false;
    for (std::string line; std::getline(in, line);) {
        double avg = 0;
        std::uint64_t total = 0;
        if (starts_with(line, "some ")) {
            if (!parse_pressure_line(line, avg, total)) return std::nullopt;
            p.some_avg10_percent = avg;
            p.some_total_us = total;
            some = true;
        } else if (starts_with(line, "full ")) {
            if (parse_pressure_line(line, avg, total)) p.full_total_us = total;
        }
    }
    if (!some) return std::nullopt;
    return p;
}

std::optional<PressureStat> read_pressure(const HostFs& fs, const std::string& resource) {
    auto text = fs.read("/proc/pressure/" + resource);
    if (!text) return std::nullopt;
    return parse_pressure(*text);
}

std::optional<NetBytes> parse_net_dev(const std::string& text) {
    std::istringstream in(text);
    NetBytes n;
    bool header = true;
    for (std::string line; std::getline(in, line);) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;  // the two header lines have '|' but no ':'
        header = false;
        std::string name = line.substr(0, colon);
        name.erase(0, name.find_first_not_of(' '));
        std::istringstream f(line.substr(colon + 1));
        // Receive: bytes packets errs drop fifo frame compressed multicast; Transmit: bytes ...
        std::uint64_t v[9] = {};
        int k = 0;
        while (k < 9 && (f >> v[k])) ++k;
        if (k < 9) return std::nullopt;
        if (name == "lo") continue;
        n.rx_bytes += v[0];
        n.tx_bytes += v[8];
        ++n.interfaces;
    }
    if (header) return std::nullopt;
    return n;
}

std::optional<MemorySnapshot> parse_meminfo(const std::string& text) {
    std::istringstream in(text);
    MemorySnapshot m;
    int seen = 0;
    for (std::string key; in >> key;) {
        std::uint64_t kib = 0;
        if (!(in >> kib)) return std::nullopt;
        std::string rest;
        std::getline(in, rest);  // " kB"
        if (key == "MemTotal:") m.total_bytes = kib * 1024, seen |= 1;
        else if (key == "MemAvailable:") m.available_bytes = kib * 1024, seen |= 2;
        else if (key == "SwapTotal:") m.swap_total_bytes = kib * 1024, seen |= 4;
        else if (key == "SwapFree:") m.swap_free_bytes = kib * 1024, seen |= 8;
    }
    if ((seen & 3) != 3 || m.available_bytes > m.total_bytes) return std::nullopt;
    return m;
}

}  // namespace gpuvet
