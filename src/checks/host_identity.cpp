#include "checks/host_identity.hpp"

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "host/persistent_ids.hpp"

namespace gpuvet {

namespace {

Measurement text_fact(const char* key, const char* label, const std::optional<std::string>& v, const char* why_absent) {
    if (!v) return Measurement::absent(key, label, "", why_absent);
    return Measurement::textual(key, label, *v);
}

}  // namespace

std::vector<CheckResult> HostIdentityCheck::run(CheckContext& ctx) {
    const MachineInfo& m = ctx.facts->machine();
    CheckResult r;
    r.verdict = Verdict::Pass;
    r.measurements.push_back(text_fact("cpu_model", "CPU model", m.cpu_model, "/proc/cpuinfo has no model name"));
    r.measurements.push_back(
        Measurement::maybe("cpu_sockets", "CPU sockets", m.cpu_sockets, "count", "/proc/cpuinfo has no physical id"));
    r.measurements.push_back(
        Measurement::maybe("cpu_cores", "CPU cores (physical)", m.cpu_cores, "count", "/proc/cpuinfo has no core id"));
    r.measurements.push_back(Measurement::maybe("cpu_threads", "CPU threads (online)", m.cpu_threads, "count",
                                                "cannot read the online CPU list"));
    if (m.cpu_quota)
        r.measurements.push_back(Measurement::number("cpu_quota", "CPU quota (cgroup)", *m.cpu_quota, "CPUs"));
    if (m.cpuset_cpus)
        r.measurements.push_back(Measurement::number("cpuset_cpus", "CPUs allowed (cpuset)", *m.cpuset_cpus, "count"));
    r.measurements.push_back(
        Measurement::maybe("memory_total_bytes", "Memory", m.memory_total_bytes, "bytes", "/proc/meminfo unreadable"));
    if (m.memory_limit_bytes)
        r.measurements.push_back(
            Measurement::number("memory_limit_bytes", "Memory limit (cgroup)", double(*m.memory_limit_bytes), "bytes"));
    r.measurements.push_back(
        Measurement::maybe("numa_nodes", "NUMA nodes", m.numa_nodes, "count", "no /sys/devices/system/node"));
    r.measurements.push_back(text_fact("os", "Operating system", m.os, "no /etc/os-release"));
    r.measurements.push_back(text_fact("kernel", "Kernel", m.kernel, "cannot read the kernel release"));
    r.measurements.push_back(text_fact("virtualization", "Virtualization", m.virtualization, "unknown"));
    r.measurements.push_back(text_fact("container", "Container", m.container, "unknown"));
    // What survives a new hostname: the history recognises the box by these (docs/history.md).
    PersistentIds ids = read_persistent_ids(HostFs(ctx.options.root));
    r.measurements.push_back(
        text_fact("system_uuid", "SMBIOS system UUID", ids.system_uuid, ids.system_uuid_absent.c_str()));
    r.measurements.push_back(
        text_fact("board_serial", "SMBIOS board serial", ids.board_serial, ids.board_serial_absent.c_str()));
    r.measurements.push_back(text_fact("slurm_node", "Slurm node", ids.slurm_node, "not in a Slurm job step"));

    std::string s = m.cpu_model.value_or("unknown CPU");
    if (m.cpu_threads) s += ", " + std::to_string(*m.cpu_threads) + " threads";
    if (m.memory_total_bytes) s += ", " + format_bytes(double(*m.memory_total_bytes)) + " RAM";
    if (m.os) s += ", " + *m.os;
    if (m.virtualization && *m.virtualization != "none") s += ", virtual machine (" + *m.virtualization + ")";
    if (m.container && *m.container != "none") s += ", in a " + *m.container + " container";
    // Limits narrower than the hardware are what renters get: say so plainly.
    if (m.cpu_quota && m.cpu_threads && *m.cpu_quota < *m.cpu_threads)
        r.details.push_back("this process may use only " + format_number(*m.cpu_quota, 3) + " of the " +
                            std::to_string(*m.cpu_threads) + " CPUs (cgroup quota)");
    if (m.memory_limit_bytes)
        r.details.push_back("memory is limited to " + format_bytes(double(*m.memory_limit_bytes)) + " by the cgroup");
    r.summary = s + ".";
    return {r};
}

}  // namespace gpuvet
