#include "host/check_memory.hpp"

#include <cmath>
#include <sstream>

#include "core/context.hpp"
#include "core/strings.hpp"
#include "host/cpu_facts.hpp"
#include "host/stream.hpp"

namespace gpuvet {

std::optional<std::size_t> read_llc_bytes(const HostFs& fs) {
    std::optional<std::size_t> best;
    int best_level = -1;
    for (auto& e : fs.list("/sys/devices/system/cpu/cpu0/cache")) {
        if (!starts_with(e, "index")) continue;
        std::string d = "/sys/devices/system/cpu/cpu0/cache/" + e;
        auto level = fs.read_int(d + "/level");
        auto size = fs.read_line(d + "/size");  // "32768K"
        if (!level || !size || size->empty()) continue;
        std::size_t mult = 1;
        std::string num = *size;
        if (num.back() == 'K') mult = 1024, num.pop_back();
        else if (num.back() == 'M') mult = 1024 * 1024, num.pop_back();
        try {
            std::size_t v = std::stoull(num) * mult;
            if (*level > best_level) best_level = int(*level), best = v;
        } catch (...) {
        }
    }
    return best;
}

std::optional<std::size_t> read_mem_available_bytes(const HostFs& fs) {
    auto text = fs.read("/proc/meminfo");
    if (!text) return std::nullopt;
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line))
        if (starts_with(line, "MemAvailable:")) {
            try {
                return std::size_t(std::stoull(trim(line.substr(13)))) * 1024;
            } catch (...) {
                return std::nullopt;
            }
        }
    return std::nullopt;
}

std::vector<std::vector<int>> read_node_cpus(const HostFs& fs) {
    std::vector<std::vector<int>> out;
    for (auto& e : fs.list("/sys/devices/system/node")) {
        if (!starts_with(e, "node") || e.size() < 5 || !std::isdigit(static_cast<unsigned char>(e[4]))) continue;
        if (auto l = fs.read_line("/sys/devices/system/node/" + e + "/cpulist"))
            if (auto cpus = parse_cpu_list(*l)) out.push_back(*cpus);
    }
    return out;
}

std::vector<CheckResult> HostMemoryCheck::run(CheckContext& ctx) {
    HostFs fs(ctx.options.root);
    const MachineInfo& m = ctx.report->machine;
    CheckResult r;
    r.verdict = Verdict::Pass;
    if (m.memory_total_bytes)
        r.measurements.push_back(Measurement::number("memory_total_bytes", "Memory", double(*m.memory_total_bytes), "bytes"));
    else
        r.measurements.push_back(Measurement::absent("memory_total_bytes", "Memory", "bytes", "/proc/meminfo unreadable"));

    std::string why;
    auto llc = read_llc_bytes(fs);
    auto bytes = stream_array_bytes(llc, read_mem_available_bytes(fs), why);
    const char* kernels[4][2] = {{"copy_gbps", "STREAM copy"}, {"scale_gbps", "STREAM scale"},
                                 {"add_gbps", "STREAM add"}, {"triad_gbps", "STREAM triad"}};
    if (!bytes) {
        for (auto& k : kernels) r.measurements.push_back(Measurement::absent(k[0], k[1], "GB/s", why));
        r.verdict = Verdict::Skip;
        r.summary = "Memory bandwidth not measured: " + why + ".";
        return {r};
    }
    auto allowed = allowed_cpus();
    int threads = int(allowed.size());
    if (m.cpu_quota) threads = std::max(1, std::min(threads, int(std::ceil(*m.cpu_quota))));
    auto nodes = read_node_cpus(fs);
    StreamPlan plan;
    plan.elements = *bytes / sizeof(double);
    plan.thread_cpus = spread_over_nodes(nodes, allowed, threads);
    plan.repeats = ctx.options.tier == Tier::Quick ? 3 : ctx.options.tier == Tier::Full ? 10 : 5;
    if (ctx.progress)
        ctx.progress->update("STREAM, " + std::to_string(plan.thread_cpus.size()) + " threads, 3 x " +
                             format_bytes(double(*bytes)));
    StreamResult s = run_stream(plan, ctx.stop);
    Reference ref;
    ref.source = "best of " + std::to_string(plan.repeats) + " runs, first discarded (McCalpin STREAM rules); " +
                 "bytes counted as STREAM does (copy/scale 16, add/triad 24 per element), decimal GB/s; "
                 "no spec: DIMM channels x speed are not readable without root (dmidecode)";
    if (!s.verify_error.empty() && s.copy_gbps == 0) {
        for (auto& k : kernels) r.measurements.push_back(Measurement::absent(k[0], k[1], "GB/s", s.verify_error));
        r.verdict = Verdict::Skip;
        r.summary = "Memory bandwidth not measured: " + s.verify_error + ".";
        return {r};
    }
    double vals[4] = {s.copy_gbps, s.scale_gbps, s.add_gbps, s.triad_gbps};
    for (int i = 0; i < 4; ++i)
        r.measurements.push_back(Measurement::number(kernels[i][0], kernels[i][1], vals[i], "GB/s").against(ref));
    r.measurements.push_back(Measurement::number("stream_threads", "Threads", s.threads, "count"));
    r.measurements.push_back(Measurement::number("stream_array_bytes", "Array size (each)", double(s.array_bytes), "bytes"));
    r.measurements.push_back(Measurement::number("numa_nodes_used", "NUMA nodes used",
                                                 double(std::max<std::size_t>(1, nodes.size())), "count"));
    r.details.push_back(std::to_string(s.threads) + " threads spread over " +
                        std::to_string(std::max<std::size_t>(1, nodes.size())) +
                        " NUMA node(s), each first-touching its own part of the arrays");
    if (!s.verified) {
        r.verdict = Verdict::Fail;
        r.summary = "STREAM results were wrong: " + s.verify_error + " (memory or CPU fault).";
        return {r};
    }
    r.summary = format_bytes(double(m.memory_total_bytes.value_or(0))) + " RAM, STREAM triad " +
                format_number(s.triad_gbps) + " GB/s with " + std::to_string(s.threads) + " threads, results verified.";
    if (!m.memory_total_bytes) r.summary = "STREAM triad " + format_number(s.triad_gbps) + " GB/s, results verified.";
    return {r};
}

}  // namespace gpuvet
