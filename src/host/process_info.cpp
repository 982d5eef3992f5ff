#include "host/process_info.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace gpuvet {

std::optional<ProcessInfo> parse_proc_pid_stat(const std::string& text) {
    std::size_t open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
    ProcessInfo p;
    try {
        p.pid = std::stoi(text.substr(0, open));
    } catch (...) {
        return std::nullopt;
    }
    p.comm = text.substr(open + 1, close - open - 1);
    // Fields after the name, numbered as in proc(5): 3 state, 4 ppid, 14 utime, 15 stime,
    // 20 num_threads, 22 starttime, 24 rss (pages).
    std::istringstream in(text.substr(close + 1));
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    if (f.size() < 22) return std::nullopt;
    auto at = [&](int field) { return f[static_cast<std::size_t>(field - 3)]; };
    try {
        p.state = at(3).empty() ? '?' : at(3)[0];
        p.ppid = std::stoi(at(4));
        p.utime_ticks = std::stoull(at(14));
        p.stime_ticks = std::stoull(at(15));
        p.threads = std::stoi(at(20));
        p.start_ticks = std::stoull(at(22));
        p.rss_bytes = std::stoull(at(24)) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    } catch (...) {
        return std::nullopt;
    }
    return p;
}

std::optional<ProcessIo> parse_proc_pid_io(const std::string& text) {
    ProcessIo io;
    int seen = 0;
    std::istringstream in(text);
    for (std::string key; in >> key;) {
        std::uint64_t v = 0;
        if (!(in >> v)) return std::nullopt;
        if (key == "rchar:") io.rchar = v, ++seen;
        else if (key == "wchar:") io.wchar = v, ++seen;
        else if (key == "read_bytes:") io.read_bytes = v, ++seen;
        else if (key == "write_bytes:") io.write_bytes = v, ++seen;
        else if (key == "cancelled_write_bytes:") io.cancelled_write_bytes = v;
    }
    if (seen < 4) return std::nullopt;
    return io;
}

std::optional<unsigned> parse_status_uid(const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("Uid:", 0) != 0) continue;
        std::istringstream f(line.substr(4));
        unsigned uid = 0;
        if (f >> uid) return uid;
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<ProcessInfo> read_process(const HostFs& fs, int pid) {
    const std::string dir = "/proc/" + std::to_string(pid);
    auto stat = fs.read(dir + "/stat");
    if (!stat) return std::nullopt;
    auto p = parse_proc_pid_stat(*stat);
    if (!p) return std::nullopt;
    if (auto cmd = fs.read(dir + "/cmdline")) {
        for (char& c : *cmd)
            if (c == '\0') c = ' ';
        while (!cmd->empty() && cmd->back() == ' ') cmd->pop_back();
        p->cmdline = *cmd;
    }
    auto status = fs.read(dir + "/status");
    auto uid = status ? parse_status_uid(*status) : std::nullopt;
    p->uid = uid ? Fact<unsigned>(*uid) : Fact<unsigned>::absent("/proc/" + std::to_string(pid) + "/status unreadable");
    auto io_text = fs.read(dir + "/io");
    auto io = io_text ? parse_proc_pid_io(*io_text) : std::nullopt;
    p->io = io ? Fact<ProcessIo>(*io)
               : Fact<ProcessIo>::absent("/proc/" + std::to_string(pid) +
                                         "/io unreadable (another user's process needs CAP_SYS_PTRACE)");
    return p;
}

std::vector<int> list_pids(const HostFs& fs) {
    std::vector<int> pids;
    for (const std::string& name : fs.list("/proc")) {
        if (name.empty() || !std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); }))
            continue;
        pids.push_back(std::stoi(name));
    }
    std::sort(pids.begin(), pids.end());
    return pids;
}

std::string user_name(unsigned uid) {
    passwd pw{}, *found = nullptr;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) return found->pw_name;
    return std::to_string(uid);
}

long clock_ticks_per_s() {
    static const long ticks = sysconf(_SC_CLK_TCK);
    return ticks > 0 ? ticks : 100;
}

}  // namespace gpuvet
