#include "fake_fabric.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fake {

namespace {

std::string read_text(const std::string& path) {
    std::ifstream f(path);
    if (!f) return "";
    std::stringstream ss;
    ss << f.rdbuf();
    std::string s = ss.str();
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    ::closedir(d);
    std::sort(out.begin(), out.end(), natural_less);
    return out;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
            std::size_t i2 = i, j2 = j;
            while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
            while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
            unsigned long x = std::strtoul(a.substr(i, i2 - i).c_str(), nullptr, 10);
            unsigned long y = std::strtoul(b.substr(j, j2 - j).c_str(), nullptr, 10);
            if (x != y) return x < y;
            i = i2, j = j2;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i, ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::string fabric_root() {
    const char* r = std::getenv("GPUVET_ROOT");
    return r && *r ? r : "/";
}

std::vector<FabricPort> read_fabric_ports(const std::string& root) {
    std::vector<FabricPort> out;
    const std::string base = root + "/sys/class/infiniband/";
    for (const std::string& dev : entries(base)) {
        for (const std::string& port : entries(base + dev + "/ports")) {
            const std::string p = base + dev + "/ports/" + port + "/";
            FabricPort f;
            f.device = dev;
            f.port = std::atoi(port.c_str());
            f.active = read_text(p + "state").rfind("4:", 0) == 0;
            const std::string rate = read_text(p + "rate");
            f.rate_gbitps = std::strtod(rate.c_str(), nullptr);
            const bool b8b10b = rate.find("SDR)") != std::string::npos || rate.find("DDR)") != std::string::npos ||
                                rate.find("QDR)") != std::string::npos;
            f.data_gbitps = f.rate_gbitps * (b8b10b ? 0.8 : rate.find(" FDR)") != std::string::npos ? 64.0 / 66 : 1);
            f.roce = read_text(p + "link_layer") == "Ethernet";
            if (f.roce) f.netdev = read_text(p + "gid_attrs/ndevs/0");
            out.push_back(f);
        }
    }
    return out;
}

std::vector<FabricPort> active_nics(const std::vector<FabricPort>& ports) {
    std::vector<FabricPort> out;
    for (const FabricPort& p : ports)
        if (p.active && p.rate_gbitps > 0 &&
            std::none_of(out.begin(), out.end(), [&](const FabricPort& x) { return x.device == p.device; }))
            out.push_back(p);
    return out;
}

bool verbs_devices_present(const std::string& root) {
    for (const std::string& e : entries(root + "/dev/infiniband"))
        if (e.rfind("uverbs", 0) == 0) return true;
    return false;
}

bool gdr_available(const std::string& root) {
    for (const char* p : {"/sys/kernel/mm/memory_peers/nv_mem/version", "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
                          "/sys/module/nvidia_peermem"})
        if (exists(root + p)) return true;
    return read_text(root + "/proc/driver/nvidia/version").find("Open Kernel Module") != std::string::npos;
}

}  // namespace fake
