#include "checks/gpu_gemm_judge.hpp"
#include "core/strings.hpp"

#include <cstdio>

namespace gpuvet::gemm {

namespace {

constexpr const char* kSource =
    "dense tensor datasheet figure; healthy fraction from mamf-finder results (BF16 best shape 73-87%, "
    "FP8 70-78%: stas00/ml-engineering compute/accelerator/README.md)";
constexpr std::size_t kWrongShownPerShape = 3;

std::string fmt(double v, int digits = 0) { return format_fixed(v, digits); }

std::string joined(const std::vector<std::string>& xs) {
    std::string out;
    for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
    return out;
}

// What the precisions add up to, for the summary.
struct Tally {
    Verdict rate_verdict = Verdict::Pass;
    std::vector<std::string> parts;  // "bf16 800 TFLOPS (81% of 990)"
    std::vector<std::string> wrong;  // "bf16 3/240"
    std::vector<std::string> cut;    // precisions a stop left unmeasured
};

// One line per shape for the details; the first wrong outputs of each shape as findings.
void shape_lines(const PrecisionInfo& p, const PrecisionRun& run, const std::string& key, CheckResult& r) {
    for (const auto& sh : run.shapes) {
        std::string line = std::string(p.name) + " " + sh.shape.text() + ": ";
        line += sh.rate ? fmt(*sh.rate, 1) + " " + p.unit + " (median " + fmt(sh.median_ms, 3) + " ms), " +
                              std::to_string(sh.checked - sh.mismatches.size()) + "/" + std::to_string(sh.checked) +
                              " sampled outputs correct"
                        : sh.absent_reason;
        r.details.push_back(line);
        for (std::size_t i = 0; i < sh.mismatches.size() && i < kWrongShownPerShape; ++i) {
            const auto& mm = sh.mismatches[i];
            r.findings.push_back({Verdict::Fail,
                                  std::string(p.name) + " " + sh.shape.text() + ": wrong D(" + std::to_string(mm.i) +
                                      "," + std::to_string(mm.j) + ") = " + fmt(mm.got, 4) + ", expected " +
                                      fmt(mm.expected, 4) + " +/- " + fmt(mm.allowed, 4),
                                  key});
        }
    }
}

// The best rate against the datasheet's dense tensor figure, when there is one.
void judge_rate(const PrecisionInfo& p, const ShapeResult& best, const std::string& key, int gpu, const GpuSpec* spec,
                Tally& t, CheckResult& r) {
    Measurement meas = Measurement::number(key, p.label, *best.rate, p.unit).on_gpu(gpu);
    std::string part = std::string(p.name) + " " + fmt(*best.rate) + " " + p.unit;
    if (auto sr = spec ? spec_rate(*spec, p.precision) : std::nullopt) {
        Reference ref;
        ref.spec = *sr;
        ref.expected_fraction = p.expected_fraction;
        ref.warn_below = *sr * p.warn_fraction;
        ref.fail_below = *sr * p.fail_fraction;
        ref.source = spec->name + " " + kSource;
        meas.against(ref);
        part += " (" + fmt(100 * *best.rate / *sr) + "% of " + fmt(*sr) + ")";
        if (*best.rate < *ref.fail_below) t.rate_verdict = worst(t.rate_verdict, Verdict::Fail);
        else if (*best.rate < *ref.warn_below) t.rate_verdict = worst(t.rate_verdict, Verdict::Warn);
    }
    r.measurements.push_back(meas);
    r.measurements.push_back(Measurement::textual(std::string(p.name) + "_best_shape",
                                                  std::string(p.label) + " best shape", best.shape.text())
                                 .on_gpu(gpu));
    t.parts.push_back(part);
}

void judge_precision(const PrecisionOutcome& o, const GpuGemmRun& g, const GpuSpec* spec, Tally& t, CheckResult& r) {
    const PrecisionInfo& p = *o.info;
    const std::string key = rate_key(p);
    if (!o.run) {
        const std::string why = !o.absent_reason.empty() ? o.absent_reason
                                                         : "needs compute capability " + fmt(p.min_cc / 10.0, 1) +
                                                               ", this GPU has " + fmt(g.cc_x10 / 10.0, 1);
        r.measurements.push_back(Measurement::absent(key, p.label, p.unit, why).on_gpu(g.gpu));
        return;
    }
    const PrecisionRun& run = *o.run;
    shape_lines(p, run, key, r);
    if (run.mismatches())
        t.wrong.push_back(std::string(p.name) + " " + std::to_string(run.mismatches()) + "/" +
                          std::to_string(run.checked()));
    const ShapeResult* best = run.best();
    if (run.interrupted) {  // the best of a partial sweep is not the GPU's rate: absent, not judged
        t.cut.push_back(p.name);
        r.measurements.push_back(Measurement::absent(key, p.label, p.unit, kInterrupted).on_gpu(g.gpu));
    } else if (!best) {
        r.measurements.push_back(Measurement::absent(key, p.label, p.unit, run.absent_reason).on_gpu(g.gpu));
    } else {
        judge_rate(p, *best, key, g.gpu, spec, t, r);
    }
}

}  // namespace

std::string rate_key(const PrecisionInfo& p) {
    return std::string(p.name) + (p.precision == Precision::int8 ? "_tops" : "_tflops");
}

CheckResult judge_gemm(const GpuGemmRun& g, const GpuSpec* spec) {
    CheckResult r;
    r.gpu = g.gpu;
    const bool hip = g.library == "hipBLASLt";
    r.measurements.push_back(
        Measurement::textual(hip ? "hipblaslt" : "cublaslt", g.library + " used", g.lib_text).on_gpu(g.gpu));
    Tally t;
    for (const auto& o : g.precisions) judge_precision(o, g, spec, t, r);
    if (!t.wrong.empty()) {  // a fast wrong answer is a failure, whatever the rate
        r.verdict = Verdict::Fail;
        r.summary = "GEMM results are WRONG (" + joined(t.wrong) + " sampled outputs differ from the CPU reference)";
    } else if (t.parts.empty()) {
        r.verdict = Verdict::Skip;
        r.summary = t.cut.empty() ? "no precision could be measured"
                                  : "interrupted before a precision was measured; no verdict";
    } else {
        r.verdict = t.rate_verdict;
        r.summary = joined(t.parts) + (spec ? "" : "; no datasheet figure to compare with") + "; outputs verified";
        if (!t.cut.empty()) r.summary += "; interrupted before " + std::to_string(t.cut.size()) + " precision(s)";
    }
    if (!t.cut.empty()) r.details.push_back("not measured (interrupted): " + joined(t.cut));
    r.details.push_back(g.library + ": " + g.lib_text);
    if (!spec) r.details.push_back("GPU not in the spec database: rates are reported without a verdict");
    return r;
}

}  // namespace gpuvet::gemm
