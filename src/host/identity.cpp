#include "host/identity.hpp"

#include <set>
#include <sstream>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

std::optional<std::string> os_release_field(const HostFs& fs, const std::string& field) {
    for (const char* p : {"/etc/os-release", "/usr/lib/os-release"}) {
        auto text = fs.read(p);
        if (!text) continue;
        std::istringstream in(*text);
        std::string line;
        while (std::getline(in, line)) {
            if (!starts_with(line, field + "=")) continue;
            std::string v = line.substr(field.size() + 1);
            if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
            return v;
        }
    }
    return std::nullopt;
}

void read_cpuinfo(const HostFs& fs, MachineInfo& m) {
    auto text = fs.read("/proc/cpuinfo");
    if (!text) return;
    std::istringstream in(*text);
    std::string line;
    std::set<std::string> packages;
    std::set<std::pair<std::string, std::string>> cores;  // (physical id, core id)
    std::string phys;
    bool hypervisor_flag = false;
    int processors = 0;
    while (std::getline(in, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string k = trim(line.substr(0, colon)), v = trim(line.substr(colon + 1));
        if (k == "processor") ++processors;
        else if (k == "model name" && !m.cpu_model) m.cpu_model = v;
        else if (k == "physical id") {
            phys = v;
            packages.insert(v);
        } else if (k == "core id") cores.insert({phys, v});
        else if (k == "flags" && (" " + v + " ").find(" hypervisor ") != std::string::npos) hypervisor_flag = true;
    }
    if (!packages.empty()) m.cpu_sockets = int(packages.size());
    if (!cores.empty()) m.cpu_cores = int(cores.size());
    if (!m.cpu_threads && processors > 0) m.cpu_threads = processors;
    if (hypervisor_flag && !m.virtualization) m.virtualization = "unidentified hypervisor";
}

void read_memory(const HostFs& fs, MachineInfo& m) {
    auto text = fs.read("/proc/meminfo");
    if (!text) return;
    std::istringstream in(*text);
    std::string key, unit;
    long long kb = 0;
    while (in >> key >> kb) {
        std::getline(in, unit);
        if (key == "MemTotal:") m.memory_total_bytes = std::uint64_t(kb) * 1024;
    }
}

std::optional<std::string> detect_virtualization(const HostFs& fs) {
    auto vendor = to_lower(fs.read_line("/sys/class/dmi/id/sys_vendor").value_or(""));
    auto product = to_lower(fs.read_line("/sys/class/dmi/id/product_name").value_or(""));
    auto board = vendor + " " + product;
    struct {
        const char* needle;
        const char* name;
    } table[] = {
        {"qemu", "kvm"},
        {"kvm", "kvm"},
        {"vmware", "vmware"},
        {"virtualbox", "virtualbox"},
        {"microsoft corporation virtual", "hyper-v"},
        {"xen", "xen"},
        {"amazon ec2", "kvm (aws nitro)"},
        {"google compute engine", "kvm (gce)"},
        {"alibaba cloud", "kvm (alibaba)"},
        {"openstack", "kvm (openstack)"},
        {"bochs", "bochs"},
        {"parallels", "parallels"},
        {"cloud hypervisor", "cloud-hypervisor"},
        {"firecracker", "firecracker"},
    };
    for (auto& t : table)
        if (board.find(t.needle) != std::string::npos) return std::string(t.name);
    if (fs.exists("/proc/xen")) return std::string("xen");
    if (fs.exists("/sys/hypervisor/type")) return fs.read_line("/sys/hypervisor/type");
    return std::nullopt;
}

std::string detect_container(const HostFs& fs) {
    if (fs.exists("/.dockerenv")) return "docker";
    if (fs.exists("/run/.containerenv")) return "podman";
    auto env = fs.read("/proc/1/environ").value_or("");
    if (env.find("container=lxc") != std::string::npos) return "lxc";
    if (env.find("container=") != std::string::npos) return "container";
    auto cg = fs.read("/proc/1/cgroup").value_or("");
    if (cg.find("kubepods") != std::string::npos) return "kubernetes";
    if (cg.find("docker") != std::string::npos) return "docker";
    if (cg.find("lxc") != std::string::npos) return "lxc";
    if (fs.exists("/var/run/secrets/kubernetes.io")) return "kubernetes";
    return "none";
}

void read_cgroup_limits(const HostFs& fs, MachineInfo& m) {
    // cgroup v2 first, then v1.
    if (auto max = fs.read_line("/sys/fs/cgroup/cpu.max")) {
        auto parts = split(*max, ' ');
        if (parts.size() == 2 && parts[0] != "max") {
            try {
                double q = std::stod(parts[0]), p = std::stod(parts[1]);
                if (q > 0 && p > 0) m.cpu_quota = q / p;
            } catch (...) {}
        }
    } else if (auto q = fs.read_int("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")) {
        auto p = fs.read_int("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
        if (*q > 0 && p && *p > 0) m.cpu_quota = double(*q) / double(*p);
    }
    for (const char* p : {"/sys/fs/cgroup/cpuset.cpus.effective", "/sys/fs/cgroup/cpuset/cpuset.effective_cpus",
                          "/sys/fs/cgroup/cpuset/cpuset.cpus"}) {
        if (auto l = fs.read_line(p)) {
            if (auto n = count_cpu_list(*l)) {
                m.cpuset_cpus = *n;
                break;
            }
        }
    }
    std::optional<long long> mem;
    if (auto s = fs.read_line("/sys/fs/cgroup/memory.max"); s && *s != "max")
        mem = fs.read_int("/sys/fs/cgroup/memory.max");
    else if (auto v1 = fs.read_int("/sys/fs/cgroup/memory/memory.limit_in_bytes")) mem = v1;
    // v1 reports "no limit" as a huge number; only a limit below physical memory means something.
    if (mem && *mem > 0 && (!m.memory_total_bytes || std::uint64_t(*mem) < *m.memory_total_bytes))
        m.memory_limit_bytes = std::uint64_t(*mem);
}

}  // namespace

MachineInfo read_machine_info(const HostFs& fs) {
    MachineInfo m;
    m.hostname = fs.read_line("/proc/sys/kernel/hostname");
    if (auto online = fs.read_line("/sys/devices/system/cpu/online")) m.cpu_threads = count_cpu_list(*online);
    read_cpuinfo(fs, m);
    read_memory(fs, m);
    auto nodes = fs.list("/sys/devices/system/node");
    int n = 0;
    for (auto& e : nodes)
        if (starts_with(e, "node") && e.size() > 4 && std::isdigit(static_cast<unsigned char>(e[4]))) ++n;
    if (n > 0) m.numa_nodes = n;
    m.os = os_release_field(fs, "PRETTY_NAME");
    m.kernel = fs.read_line("/proc/sys/kernel/osrelease");
    if (auto arch = fs.read_line("/proc/sys/kernel/arch")) m.architecture = arch;
    // DMI names the hypervisor; the cpuinfo "hypervisor" flag only says there is one.
    if (auto dmi = detect_virtualization(fs)) m.virtualization = dmi;
    else if (!m.virtualization) m.virtualization = std::string("none");
    m.container = detect_container(fs);
    read_cgroup_limits(fs, m);
    return m;
}

}  // namespace gpuvet
