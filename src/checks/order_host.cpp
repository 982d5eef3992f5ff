#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "order/order.hpp"
#include "checks/order_verify.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

// The lower of the measured host.network directions, if host.network ran and measured any.
std::optional<double> measured_network_gbitps(const PriorResults& prior) {
    std::optional<double> low;
    const CheckResult* c = prior.result("host.network");
    if (!c) return low;
    for (auto& m : c->measurements) {
        const std::string suffix = "_gbitps";
        if (m.value && m.key.size() > suffix.size() &&
            m.key.compare(m.key.size() - suffix.size(), suffix.size(), suffix) == 0)
            low = low ? std::min(*low, *m.value) : *m.value;
    }
    return low;
}

CheckResult cpu_cores(int want, const MachineInfo& mi) {
    CheckResult r = order_item("order.cpu_cores", "Order: CPU cores");
    Reference ref;
    ref.spec = want;
    ref.fail_below = want;
    ref.source = "the order";
    r.measurements.push_back(
        (mi.cpu_cores
             ? Measurement::number("cpu_cores", "CPU cores (physical)", *mi.cpu_cores, "count")
             : Measurement::absent("cpu_cores", "CPU cores (physical)", "count", "/proc/cpuinfo has no core id"))
            .against(ref));
    if (mi.cpu_threads)
        r.measurements.push_back(Measurement::number("cpu_threads", "CPU threads", *mi.cpu_threads, "count"));
    // A cgroup quota or cpuset narrower than the order is what this tenant actually gets.
    std::optional<double> allowed;
    if (mi.cpu_quota) allowed = *mi.cpu_quota;
    if (mi.cpuset_cpus) allowed = allowed ? std::min(*allowed, double(*mi.cpuset_cpus)) : double(*mi.cpuset_cpus);
    if (allowed)
        r.measurements.push_back(Measurement::number("cpus_allowed", "CPUs this process may use", *allowed, "CPUs"));

    std::string w = std::to_string(want);
    if (allowed && *allowed < want) {
        r.verdict = Verdict::Fail;
        r.summary = "Ordered " + w + " cores, but this container may use only " + format_number(*allowed) + " CPUs.";
    } else if (mi.cpu_cores && *mi.cpu_cores >= want) {
        r.verdict = Verdict::Pass;
        r.summary = std::to_string(*mi.cpu_cores) + " physical cores, at least the " + w + " ordered.";
    } else if (mi.cpu_threads && *mi.cpu_threads >= want) {
        // Clouds sell hyper-threads as "vCPUs": say which it is instead of failing outright.
        r.verdict = Verdict::Warn;
        r.summary =
            "Ordered " + w + " cores: there are " + std::to_string(*mi.cpu_threads) + " hardware threads but " +
            (mi.cpu_cores ? std::to_string(*mi.cpu_cores) + " physical cores" : "an unknown number of physical cores") +
            " (threads sold as cores?).";
    } else if (!mi.cpu_cores && !mi.cpu_threads) {
        r.verdict = Verdict::Warn;
        r.summary = "Ordered " + w + " cores, but the CPU count could not be read.";
    } else {
        r.verdict = Verdict::Fail;
        r.summary =
            "Ordered " + w + " cores, found " + std::to_string(mi.cpu_cores.value_or(mi.cpu_threads.value_or(0))) + ".";
    }
    return r;
}

CheckResult ram(double want_gib, const MachineInfo& mi) {
    CheckResult r = order_item("order.ram", "Order: memory");
    Reference ref;
    ref.spec = want_gib;
    ref.fail_below = want_gib * (1 - kRamAllowance);
    ref.source =
        "the order; allowance " + format_number(kRamAllowance * 100) + "% for memory firmware and the kernel reserve";
    std::optional<double> have;
    if (mi.memory_total_bytes) have = double(*mi.memory_total_bytes) / kGiB;
    r.measurements.push_back(
        (have ? Measurement::number("memory_total_gib", "Memory", *have, "GiB")
              : Measurement::absent("memory_total_gib", "Memory", "GiB", "/proc/meminfo unreadable"))
            .against(ref));
    std::optional<double> limit;
    if (mi.memory_limit_bytes) {
        limit = double(*mi.memory_limit_bytes) / kGiB;
        r.measurements.push_back(Measurement::number("memory_limit_gib", "Memory limit (cgroup)", *limit, "GiB"));
    }
    std::string w = format_number(want_gib) + " GiB";
    if (!have) {
        r.verdict = Verdict::Warn;
        r.summary = "Ordered " + w + " of memory, but the memory size could not be read.";
    } else if (grade(*have, ref) == Verdict::Fail) {
        r.verdict = Verdict::Fail;
        r.summary = format_number(*have, 4) + " GiB of memory where " + w + " were ordered.";
    } else if (limit && grade(*limit, ref) == Verdict::Fail) {
        r.verdict = Verdict::Fail;
        r.summary = "Ordered " + w + ", but this container is limited to " + format_number(*limit, 4) + " GiB.";
    } else {
        r.verdict = Verdict::Pass;
        r.summary = format_number(*have, 4) + " GiB of memory, the " + w + " ordered.";
    }
    return r;
}

CheckResult disk(double want_gb, const Fact<std::uint64_t>& cap, const std::string& path) {
    CheckResult r = order_item("order.disk", "Order: disk");
    Reference ref;
    ref.spec = want_gb;
    ref.fail_below = want_gb * (1 - kDiskAllowance);
    ref.source = "the order (decimal GB, as disks are sold); allowance " + format_number(kDiskAllowance * 100) +
                 "% for filesystem metadata";
    r.measurements.push_back(
        (cap ? Measurement::number("disk_capacity_gb", "Size of the data filesystem", double(*cap) / 1e9, "GB")
             : Measurement::absent("disk_capacity_gb", "Size of the data filesystem", "GB", cap.absent_reason))
            .against(ref));
    std::string w = format_number(want_gb) + " GB";
    if (!cap) {
        r.verdict = Verdict::Warn;
        r.summary =
            "Ordered " + w + " of disk, but the size of " + path + " could not be read (" + cap.absent_reason + ").";
    } else if (grade(double(*cap) / 1e9, ref) == Verdict::Fail) {
        r.verdict = Verdict::Fail;
        r.summary = "The filesystem of " + path + " holds " + format_number(double(*cap) / 1e9, 4) + " GB where " + w +
                    " were ordered (use --data-dir for the data disk).";
    } else {
        r.verdict = Verdict::Pass;
        r.summary = "The filesystem of " + path + " holds " + format_number(double(*cap) / 1e9, 4) + " GB, the " + w +
                    " ordered.";
    }
    return r;
}

CheckResult network(double want, const PriorResults& prior) {
    CheckResult r = order_item("order.network", "Order: network");
    auto have = measured_network_gbitps(prior);
    if (!have) {
        r.verdict = Verdict::Skip;
        r.summary = "needs --net-server: the ordered " + format_number(want) +
                    " Gbit/s can only be held against a measured throughput.";
        return r;
    }
    Reference ref;
    ref.spec = want;
    ref.warn_below = want * kNetworkWarnFraction;
    ref.fail_below = want * kNetworkFailFraction;
    ref.source = "the order; TCP reaches about 94% of an Ethernet line rate (header overhead at 1500-byte MTU)";
    r.measurements.push_back(
        Measurement::number("network_gbitps", "Network (host.network, lower direction)", *have, "Gbit/s").against(ref));
    std::string s = format_number(*have) + " Gbit/s measured of " + format_number(want) + " Gbit/s ordered";
    r.verdict = grade(*have, ref);
    if (r.verdict == Verdict::Fail) r.summary = s + ": less than half.";
    else if (r.verdict == Verdict::Warn)
        r.summary = s + ": below line rate (one TCP stream, or the server's own link, may be the limit).";
    else r.summary = s + ".";
    return r;
}

}  // namespace

Fact<std::uint64_t> filesystem_capacity_bytes(const std::string& path) {
    struct statvfs st {};
    if (::statvfs(path.c_str(), &st) != 0)
        return Fact<std::uint64_t>::absent("statvfs " + path + ": " + std::strerror(errno));
    return std::uint64_t(st.f_blocks) * std::uint64_t(st.f_frsize);
}

std::vector<CheckResult> verify_host_items(const Order& o, const CheckContext& ctx,
                                           const Fact<std::uint64_t>& disk_capacity, const std::string& data_dir) {
    std::vector<CheckResult> out;
    const MachineInfo& mi = ctx.facts->machine();
    if (o.cpu_cores) out.push_back(cpu_cores(*o.cpu_cores, mi));
    if (o.ram_gib) out.push_back(ram(*o.ram_gib, mi));
    if (o.disk_gb) out.push_back(disk(*o.disk_gb, disk_capacity, data_dir));
    if (o.network_gbitps) out.push_back(network(*o.network_gbitps, ctx.prior));
    return out;
}

}  // namespace gpuvet
