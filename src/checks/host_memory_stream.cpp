#include "checks/host_memory_stream.hpp"

#include <algorithm>
#include <cctype>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

constexpr const char* kKernels[4][2] = {{"copy_gbps", "STREAM copy"},
                                        {"scale_gbps", "STREAM scale"},
                                        {"add_gbps", "STREAM add"},
                                        {"triad_gbps", "STREAM triad"}};

std::string cpus_of(const StreamRun& run, const StreamHost& host) {
    return std::to_string(run.cpus_used) + " of " + std::to_string(host.cpu_threads.value_or(0));
}

void add_stream_figures(CheckResult& r, const StreamRun& run, const StreamReferences& refs) {
    const StreamResult& s = run.result;
    const double vals[4] = {s.copy_gbps, s.scale_gbps, s.add_gbps, s.triad_gbps};
    for (int i = 0; i < 4; ++i)
        r.measurements.push_back(Measurement::number(kKernels[i][0], kKernels[i][1], vals[i], "GB/s")
                                     .against(i == 3 ? refs.triad : refs.kernels));
    r.measurements.push_back(Measurement::number("stream_threads", "Threads", s.threads, "count"));
    r.measurements.push_back(
        Measurement::number("stream_array_bytes", "Array size (each)", double(s.array_bytes), "bytes"));
    r.measurements.push_back(
        Measurement::number("numa_nodes_used", "NUMA nodes used", double(run.numa_nodes), "count"));
    r.details.push_back(std::to_string(s.threads) + " threads spread over " + std::to_string(run.numa_nodes) +
                        " NUMA node(s), each first-touching its own part of the arrays");
}

// The verified run's sentence, with the share of the theoretical rate when it is known; a WARN
// graded on triad replaces it with the reason.
std::string stream_summary(const StreamRun& run, const StreamHost& host, const StreamReferences& refs, Verdict triad) {
    const StreamResult& s = run.result;
    std::string summary = host.memory_total_bytes
                              ? format_bytes(double(*host.memory_total_bytes)) + " RAM, STREAM triad " +
                                    format_number(s.triad_gbps) + " GB/s with " + std::to_string(s.threads) +
                                    " threads, results verified."
                              : "STREAM triad " + format_number(s.triad_gbps) + " GB/s, results verified.";
    const std::optional<double>& spec = refs.kernels.spec;
    if (!spec || *spec <= 0) return summary;
    const double pct = 100.0 * s.triad_gbps / *spec;
    if (triad != Verdict::Pass)
        return "STREAM triad " + format_number(s.triad_gbps) + " GB/s is only " + format_number(pct, 3) +
               "% of the theoretical " + format_number(*spec, 4) +
               " GB/s (healthy: about 70%): memory channels, NUMA placement or other load may hold it back.";
    summary.pop_back();
    summary += ", " + format_number(pct, 3) + "% of the theoretical " + format_number(*spec, 4) + " GB/s";
    if (!refs.all_cpus) summary += " (not graded: " + cpus_of(run, host) + " CPUs allowed)";
    return summary + ".";
}

// The first DIMM warning leads or follows the summary, and the result warns.
void fold_dimm_warning(CheckResult& r, const DimmFindings& dimms) {
    if (dimms.warnings.empty()) return;
    std::string w = dimms.warnings.front();
    w[0] = char(std::toupper(static_cast<unsigned char>(w[0])));
    r.summary = r.verdict == Verdict::Warn ? r.summary + " " + w + "." : w + "; " + r.summary;
    r.verdict = Verdict::Warn;
}

}  // namespace

StreamReferences stream_references(const StreamRun& run, const StreamHost& host, const DimmFindings& dimms) {
    StreamReferences refs;
    Reference& ref = refs.kernels;
    ref.source = "best of " + std::to_string(run.repeats) + " runs, first discarded (McCalpin STREAM rules); " +
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
    refs.triad = ref;
    // A container limited to a few CPUs cannot load every channel: its triad says nothing
    // about the DIMMs, so it is shown against the rate but not graded.
    refs.all_cpus = !host.cpu_threads || int(run.cpus_used) >= *host.cpu_threads;
    if (ref.spec && refs.all_cpus) refs.triad.warn_below = *ref.spec * kStreamWarnFraction;
    else if (ref.spec)
        refs.triad.source +=
            "; not graded: STREAM ran on " + cpus_of(run, host) + " CPUs (CPU limit), too few to load every channel";
    return refs;
}

void stream_not_measured(CheckResult& r, const std::string& why) {
    for (auto& k : kKernels) r.measurements.push_back(Measurement::absent(k[0], k[1], "GB/s", why));
    r.verdict = Verdict::Skip;
    r.summary = "Memory bandwidth not measured: " + why + ".";
}

void judge_stream(CheckResult& r, const StreamRun& run, const StreamHost& host, const DimmFindings& dimms) {
    const StreamResult& s = run.result;
    if (!s.verify_error.empty() && s.copy_gbps == 0) return stream_not_measured(r, s.verify_error);
    const StreamReferences refs = stream_references(run, host, dimms);
    add_stream_figures(r, run, refs);
    if (!s.verified) {
        r.verdict = Verdict::Fail;
        r.summary = "STREAM results were wrong: " + s.verify_error + " (memory or CPU fault).";
        return;
    }
    const Verdict triad = grade(s.triad_gbps, refs.triad);
    r.verdict = worst(r.verdict, triad);
    r.summary = stream_summary(run, host, refs, triad);
    fold_dimm_warning(r, dimms);
}

}  // namespace gpuvet
