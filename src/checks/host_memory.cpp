#include "checks/host_memory.hpp"

#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

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

Fact<MemoryLayout> read_memory_layout(const HostFs& fs) {
    auto table = read_smbios_table(fs);
    if (!table) return Fact<MemoryLayout>::absent(table.absent_reason);
    SmbiosMemory mem = parse_smbios_memory(*table);
    // A damaged table may have lost slots: better no figures than a wrong slot count.
    if (!mem.problem.empty()) return Fact<MemoryLayout>::absent("SMBIOS table is damaged: " + mem.problem);
    if (mem.devices.empty()) return Fact<MemoryLayout>::absent("the SMBIOS table lists no memory devices (type 17)");
    return summarize_memory(mem.devices);
}

DimmFindings add_dimm_facts(CheckResult& r, const Fact<MemoryLayout>& layout,
                            const std::optional<std::string>& virtualization) {
    DimmFindings f;
    auto& ms = r.measurements;
    if (!layout) {
        const std::string& why = layout.absent_reason;
        ms.push_back(Measurement::absent("dimm_slots", "DIMM slots", "count", why));
        ms.push_back(Measurement::absent("dimms_populated", "DIMMs populated", "count", why));
        ms.push_back(Measurement::absent("dimm_total_bytes", "DIMMs total", "bytes", why));
        ms.push_back(Measurement::absent("memory_type", "Memory type", "", why));
        ms.push_back(Measurement::absent("memory_configured_mts", "Configured speed", "MT/s", why));
        ms.push_back(Measurement::absent("memory_rated_mts", "Rated speed", "MT/s", why));
        ms.push_back(Measurement::absent("memory_channels", "Memory channels", "count", why));
        ms.push_back(Measurement::absent("memory_theoretical_gbps", "Theoretical bandwidth", "GB/s", why));
        r.details.push_back("DIMMs not read: " + why);
        return f;
    }
    const MemoryLayout& l = *layout;
    bool vm = virtualization && *virtualization != "none";
    ms.push_back(Measurement::number("dimm_slots", "DIMM slots", l.slots, "count"));
    ms.push_back(Measurement::number("dimms_populated", "DIMMs populated", l.populated, "count"));
    ms.push_back(Measurement::maybe("dimm_total_bytes", "DIMMs total", l.total_bytes, "bytes",
                                    "the firmware does not state the size of every DIMM"));
    if (l.type) ms.push_back(Measurement::textual("memory_type", "Memory type", *l.type));
    else ms.push_back(Measurement::absent("memory_type", "Memory type", "", "the firmware does not state the memory type"));
    ms.push_back(Measurement::maybe("memory_configured_mts", "Configured speed", l.min_configured_mts,
                                    "MT/s", "the firmware does not state the configured speed"));
    ms.push_back(Measurement::maybe("memory_rated_mts", "Rated speed", l.min_rated_mts, "MT/s",
                                    "the firmware does not state the rated speed"));
    std::string vm_why = "virtual machine (" + virtualization.value_or("") +
                         "): its SMBIOS DIMMs are the hypervisor's, not the host's";
    if (vm) {
        ms.push_back(Measurement::absent("memory_channels", "Memory channels", "count", vm_why));
        ms.push_back(Measurement::absent("memory_theoretical_gbps", "Theoretical bandwidth", "GB/s", vm_why));
    } else if (l.theoretical_gbps) {
        ms.push_back(Measurement::number("memory_channels", "Memory channels", l.channels, "count"));
        ms.push_back(Measurement::number("memory_theoretical_gbps", "Theoretical bandwidth", *l.theoretical_gbps, "GB/s"));
    } else {
        ms.push_back(Measurement::absent("memory_channels", "Memory channels", "count", l.theoretical_gbps.absent_reason));
        ms.push_back(Measurement::absent("memory_theoretical_gbps", "Theoretical bandwidth", "GB/s",
                                         l.theoretical_gbps.absent_reason));
    }

    std::string line = std::to_string(l.populated) + " of " + std::to_string(l.slots) + " DIMM slots populated";
    if (l.total_bytes) line += ", " + format_bytes(double(*l.total_bytes));
    if (l.type) line += " " + *l.type;
    if (l.min_configured_mts) line += ", configured " + std::to_string(*l.min_configured_mts) + " MT/s";
    if (l.min_rated_mts) line += " (rated " + std::to_string(*l.min_rated_mts) + " MT/s)";
    r.details.push_back(line + " (SMBIOS)");
    if (vm) {
        r.details.push_back(vm_why);
        return f;
    }
    if (l.theoretical_gbps) {
        // "16 channels x 3200 MT/s x 8 bytes" when the DIMMs agree; the general rule otherwise.
        std::optional<std::uint32_t> max_mts;
        std::set<int> widths;
        for (auto& d : l.devices)
            if (d.populated && d.configured_mts && d.data_width_bits)
                max_mts = std::max(max_mts.value_or(0), *d.configured_mts), widths.insert(*d.data_width_bits);
        std::string how = std::to_string(l.channels) + " channels x ";
        if (max_mts == l.min_configured_mts && widths.size() == 1)
            how += std::to_string(*max_mts) + " MT/s x " + format_number(*widths.begin() / 8.0) + " bytes";
        else
            how += "the channel's lowest configured MT/s x data width";
        how += " (SMBIOS type 17)";
        if (l.rule == ChannelRule::Locators) {
            how += "; channels read from the DIMM locators, up to " + std::to_string(l.max_dimms_per_channel) +
                   " DIMM(s) per channel";
            r.details.push_back("Theoretical " + format_number(*l.theoretical_gbps, 4) + " GB/s: " + how);
        } else {
            how += "; assumes one DIMM per channel (the locators do not show the channels): too high if "
                   "channels hold two DIMMs";
            r.details.push_back("Theoretical " + format_number(*l.theoretical_gbps, 4) + " GB/s: " + how);
        }
        Reference ref;
        ref.spec = *l.theoretical_gbps;
        ref.expected_fraction = kStreamExpectedFraction;
        ref.source = "theoretical = " + how +
                     "; healthy STREAM reaches about 70-85% of it (TI SPRAD45A/SPRACV1B: triad 74-78% of the DDR "
                     "wire rate), less without streaming stores; triad WARN below 50%, never FAIL (channels are inferred)";
        f.stream_reference = ref;
    }
    if (l.slower_than_rated > 0) {
        std::string w = std::to_string(l.slower_than_rated) + " of " + std::to_string(l.populated) +
                        " DIMMs run below their rated speed (configured " +
                        std::to_string(l.min_configured_mts.value_or(0)) + " MT/s, rated " +
                        std::to_string(l.min_rated_mts.value_or(0)) +
                        " MT/s): check the BIOS memory speed setting; two DIMMs per channel or mixed DIMMs also "
                        "lower it";
        f.warnings.push_back(w);
    }
    if (l.populated * 2 < l.slots)
        f.warnings.push_back("only " + std::to_string(l.populated) + " of " + std::to_string(l.slots) +
                             " DIMM slots are populated: memory channels may be empty, which caps memory bandwidth");
    for (auto& w : f.warnings) r.findings.push_back(Finding{Verdict::Warn, w, ""});
    return f;
}

std::vector<CheckResult> HostMemoryCheck::run(CheckContext& ctx) {
    HostFs fs(ctx.options.root);
    const MachineInfo& m = ctx.facts->machine();
    CheckResult r;
    r.verdict = Verdict::Pass;
    if (m.memory_total_bytes)
        r.measurements.push_back(Measurement::number("memory_total_bytes", "Memory", double(*m.memory_total_bytes), "bytes"));
    else
        r.measurements.push_back(Measurement::absent("memory_total_bytes", "Memory", "bytes", "/proc/meminfo unreadable"));

    DimmFindings dimms = add_dimm_facts(r, read_memory_layout(fs), m.virtualization);

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
    ctx.throw_if_stopped();  // best-of-N over fewer runs than planned is not the STREAM figure
    Reference ref;
    ref.source = "best of " + std::to_string(plan.repeats) + " runs, first discarded (McCalpin STREAM rules); " +
                 "bytes counted as STREAM does (copy/scale 16, add/triad 24 per element), decimal GB/s";
    if (dimms.stream_reference) {
        ref.spec = dimms.stream_reference->spec;
        ref.expected_fraction = dimms.stream_reference->expected_fraction;
        ref.source += "; " + dimms.stream_reference->source;
    } else {
        ref.source += "; no spec: the DIMMs' theoretical rate is unknown (see memory_theoretical_gbps)";
    }
    // Only triad is graded: copy and scale move fewer bytes per element than they count
    // when stores allocate in the cache, so their share of the theoretical rate is lower.
    Reference triad_ref = ref;
    // A container limited to a few CPUs cannot load every channel: its triad says nothing
    // about the DIMMs, so it is shown against the rate but not graded.
    bool all_cpus = !m.cpu_threads || int(plan.thread_cpus.size()) >= *m.cpu_threads;
    if (ref.spec && all_cpus) triad_ref.warn_below = *ref.spec * kStreamWarnFraction;
    else if (ref.spec)
        triad_ref.source += "; not graded: STREAM ran on " + std::to_string(plan.thread_cpus.size()) + " of " +
                            std::to_string(*m.cpu_threads) + " CPUs (CPU limit), too few to load every channel";
    if (!s.verify_error.empty() && s.copy_gbps == 0) {
        for (auto& k : kernels) r.measurements.push_back(Measurement::absent(k[0], k[1], "GB/s", s.verify_error));
        r.verdict = Verdict::Skip;
        r.summary = "Memory bandwidth not measured: " + s.verify_error + ".";
        return {r};
    }
    double vals[4] = {s.copy_gbps, s.scale_gbps, s.add_gbps, s.triad_gbps};
    for (int i = 0; i < 4; ++i)
        r.measurements.push_back(
            Measurement::number(kernels[i][0], kernels[i][1], vals[i], "GB/s").against(i == 3 ? triad_ref : ref));
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
    if (ref.spec && *ref.spec > 0) {
        double pct = 100.0 * s.triad_gbps / *ref.spec;
        r.summary.pop_back();
        r.summary += ", " + format_number(pct, 3) + "% of the theoretical " +
                     format_number(*ref.spec, 4) + " GB/s";
        if (!all_cpus)
            r.summary += " (not graded: " + std::to_string(plan.thread_cpus.size()) + " of " +
                         std::to_string(*m.cpu_threads) + " CPUs allowed)";
        r.summary += ".";
        if (grade(s.triad_gbps, triad_ref) != Verdict::Pass) {
            r.verdict = Verdict::Warn;
            r.summary = "STREAM triad " + format_number(s.triad_gbps) + " GB/s is only " + format_number(pct, 3) +
                        "% of the theoretical " + format_number(*ref.spec, 4) +
                        " GB/s (healthy: about 70%): memory channels, NUMA placement or other load may hold it back.";
        }
    }
    if (!dimms.warnings.empty()) {
        std::string w = dimms.warnings.front();
        w[0] = char(std::toupper(static_cast<unsigned char>(w[0])));
        r.summary = r.verdict == Verdict::Warn ? r.summary + " " + w + "." : w + "; " + r.summary;
        r.verdict = Verdict::Warn;
    }
    return {r};
}

}  // namespace gpuvet
