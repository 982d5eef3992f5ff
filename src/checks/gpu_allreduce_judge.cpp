#include "checks/gpu_allreduce_judge.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "gpu/allreduce_plan.hpp"
#include "specs/gpu_spec.hpp"
#include "core/strings.hpp"

namespace gpuvet::allreduce {

namespace {

constexpr double kWarnMargin = 1.05;  // WARN within 5% above the floor

std::string fmt(double v, int digits = 1) { return format_fixed(v, digits); }

// Figures at the largest size, absent when a stop came before it was measured.
struct Figures {
    std::optional<double> busbw, algbw, peak_busbw;
    std::uint64_t checked = 0, wrong = 0;
};

// One table line per size in the details, one FAIL finding per size with wrong sums.
Figures size_lines(const AllReduceRun& run, CheckResult& r) {
    Figures f;
    for (const auto& z : run.sizes) {
        r.details.push_back(size_text(z.bytes) + ": algbw " + fmt(z.algbw_gbps) + " GB/s, busbw " + fmt(z.busbw_gbps) +
                            " GB/s" + (z.wrong ? "" : ", verified"));
        if (z.wrong)
            r.findings.push_back({Verdict::Fail, size_text(z.bytes) + ": " + std::to_string(z.wrong) + " of " +
                                                     std::to_string(z.checked) + " checked elements WRONG"});
        f.checked += z.checked;
        f.wrong += z.wrong;
        f.algbw = z.algbw_gbps, f.busbw = z.busbw_gbps;
        f.peak_busbw = std::max(f.peak_busbw.value_or(0), z.busbw_gbps);
    }
    if (run.interrupted) {  // the figures at the largest size were not reached: absent, and no verdict on speed
        f.busbw.reset();
        f.algbw.reset();
        r.details.push_back("interrupted" +
                            (run.sizes.empty() ? std::string(" before the first size was measured")
                                               : " after the " + size_text(run.sizes.back().bytes) + " size") +
                            "; the figures at " + size_text(run.max_bytes) + " were not measured");
    }
    return f;
}

void add_measurements(const AllReduceRun& run, const Figures& f, const std::optional<Floor>& fl, CheckResult& r) {
    const std::string at = size_text(run.max_bytes);
    Measurement bus = Measurement::maybe("busbw_gbps", "Bus bandwidth at " + at, f.busbw, "GB/s", kInterrupted);
    if (fl) {
        Reference ref;
        ref.fail_below = fl->busbw_gbps;
        ref.warn_below = fl->busbw_gbps * kWarnMargin;
        ref.source = fl->source;
        bus.against(ref);
    }
    r.measurements.push_back(bus);
    r.measurements.push_back(
        Measurement::maybe("algbw_gbps", "Algorithm bandwidth at " + at, f.algbw, "GB/s", kInterrupted));
    r.measurements.push_back(
        Measurement::maybe("peak_busbw_gbps", "Peak bus bandwidth", f.peak_busbw, "GB/s", kInterrupted));
    r.measurements.push_back(Measurement::number("gpus", "GPUs in the all-reduce", run.ranks, "count"));
    r.measurements.push_back(Measurement::textual("algorithm", "Algorithm", run.algorithm));
    r.measurements.push_back(Measurement::textual("nccl", run.library + " used",
                                                  run.nccl_path + ", " + run.library + " " + run.nccl_version));
}

}  // namespace

std::string size_text(std::uint64_t b) {
    return b >= (1ull << 30) ? std::to_string(b >> 30) + " GiB" : std::to_string(b >> 20) + " MiB";
}

CheckResult judge_allreduce(const AllReduceRun& run, const GpuSpec* spec) {
    CheckResult r;
    const Figures f = size_lines(run, r);
    const auto fl = spec ? floor_for(spec->key, run.ranks, run.all_nvlink) : std::nullopt;
    add_measurements(run, f, fl, r);
    r.details.push_back(run.library + " " + run.nccl_version + " from " + run.nccl_path + "; " + run.algorithm);
    r.details.push_back("busbw = algbw x 2(n-1)/n with n = " + std::to_string(run.ranks) + " (nccl-tests)");
    if (!fl && !run.unjudged_reason.empty()) r.details.push_back(run.unjudged_reason);
    else if (!fl)
        r.details.push_back(run.all_nvlink
                                ? "no published all-reduce floor for this GPU: reported without a verdict"
                                : "GPUs not all on NVLink (PCIe): no published floor, reported without a verdict");
    const std::string at = size_text(run.max_bytes);
    if (f.wrong) {
        r.verdict = Verdict::Fail;
        r.summary =
            std::to_string(f.wrong) + " of " + std::to_string(f.checked) + " checked all-reduce results are WRONG";
    } else if (!f.busbw) {
        r.verdict = Verdict::Skip;
        r.summary = "interrupted before the " + at + " all-reduce was measured; no verdict" +
                    (f.peak_busbw ? " (peak so far " + fmt(*f.peak_busbw) + " GB/s, results verified)" : std::string());
    } else {
        r.verdict = Verdict::Pass;
        if (fl && *f.busbw < fl->busbw_gbps) r.verdict = Verdict::Fail;
        else if (fl && *f.busbw < fl->busbw_gbps * kWarnMargin) r.verdict = Verdict::Warn;
        r.summary = "busbw " + fmt(*f.busbw) + " GB/s at " + at + " over " + std::to_string(run.ranks) + " GPUs" +
                    (fl ? " (floor " + fmt(fl->busbw_gbps, 0) + ")" : "") + ", all results verified" +
                    (!fl && !run.unjudged_reason.empty() ? "; speed not judged (no published floor)" : "");
    }
    return r;
}

}  // namespace gpuvet::allreduce
