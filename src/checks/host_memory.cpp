#include "checks/host_memory.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "checks/host_memory_stream.hpp"
#include "checks/run_facts.hpp"
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
        } catch (...) {}
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

namespace {

Measurement memory_total(const MachineInfo& m) {
    if (m.memory_total_bytes)
        return Measurement::number("memory_total_bytes", "Memory", double(*m.memory_total_bytes), "bytes");
    return Measurement::absent("memory_total_bytes", "Memory", "bytes", "/proc/meminfo unreadable");
}

// One thread per allowed CPU (no more than the CPU quota), spread over the NUMA nodes; more
// repeats in longer tiers.
StreamPlan plan_stream(const CheckContext& ctx, const MachineInfo& m, const std::vector<std::vector<int>>& nodes,
                       std::size_t array_bytes) {
    auto allowed = allowed_cpus();
    int threads = int(allowed.size());
    if (m.cpu_quota) threads = std::max(1, std::min(threads, int(std::ceil(*m.cpu_quota))));
    StreamPlan plan;
    plan.elements = array_bytes / sizeof(double);
    plan.thread_cpus = spread_over_nodes(nodes, allowed, threads);
    plan.repeats = ctx.options.tier == Tier::Quick ? 3 : ctx.options.tier == Tier::Full ? 10 : 5;
    return plan;
}

}  // namespace

std::vector<CheckResult> HostMemoryCheck::run(CheckContext& ctx) {
    HostFs fs(ctx.options.root);
    const MachineInfo& m = ctx.facts->machine();
    CheckResult r;
    r.verdict = Verdict::Pass;
    r.measurements.push_back(memory_total(m));
    DimmFindings dimms = add_dimm_facts(r, read_memory_layout(fs), m.virtualization);

    std::string why;
    auto bytes = stream_array_bytes(read_llc_bytes(fs), read_mem_available_bytes(fs), why);
    if (!bytes) {
        stream_not_measured(r, why);
        return {r};
    }
    auto nodes = read_node_cpus(fs);
    StreamPlan plan = plan_stream(ctx, m, nodes, *bytes);
    if (ctx.progress)
        ctx.progress->update("STREAM, " + std::to_string(plan.thread_cpus.size()) + " threads, 3 x " +
                             format_bytes(double(*bytes)));
    StreamRun run;
    run.result = run_stream(plan, ctx.stop);
    ctx.throw_if_stopped();  // best-of-N over fewer runs than planned is not the STREAM figure
    run.repeats = plan.repeats;
    run.cpus_used = plan.thread_cpus.size();
    run.numa_nodes = std::max<std::size_t>(1, nodes.size());
    judge_stream(r, run, StreamHost{m.memory_total_bytes, m.cpu_threads}, dimms);
    return {r};
}

}  // namespace gpuvet
