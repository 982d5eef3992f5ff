#include "checks/gpu_fp_peak_judge.hpp"

#include <cmath>
#include <cstring>

#include "checks/gpu_fp_peak.hpp"
#include "checks/gpu_measurement.hpp"
#include "gpu/kernel_reference.hpp"

namespace gpuvet::measure {

std::uint64_t wrong_fma_results(std::string_view k, std::size_t out_bytes, const std::vector<unsigned char>& raw,
                                std::uint32_t it) {
    namespace ref = kernel_ref;
    // Every thread stores the same value: the reference is computed once.
    std::uint64_t n = raw.size() / out_bytes, bad = 0;
    const double w64 = k == "fma_f64" ? ref::fma_f64_result(it, 0.9375, 0.125, 1.0) : 0;
    const float w32 = k == "fma_f32" ? ref::fma_f32_result(it, 0.9375f, 0.125f, 1.0f) : 0;
    const std::uint32_t w16 = k == "fma_f16x2"    ? ref::fma_f16x2_result(it, kF16A, kF16B, kF16X)
                              : k == "fma_bf16x2" ? ref::fma_bf16x2_result(it, kBF16A, kBF16B, kBF16X)
                                                  : 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        const unsigned char* p = raw.data() + i * out_bytes;
        if (k == "fma_f64") {
            double v;
            std::memcpy(&v, p, 8);
            bad += !(v == w64 || (std::isnan(v) && std::isnan(w64)));
        } else if (k == "fma_f32") {
            float v;
            std::memcpy(&v, p, 4);
            bad += !(v == w32 || (std::isnan(v) && std::isnan(w32)));
        } else {
            std::uint32_t v;
            std::memcpy(&v, p, 4);
            bad += v != w16;
        }
    }
    return bad;
}

void judge_fp_peak(const std::vector<FmaRate>& rates, const GpuSpec* sp, int gpu, CheckResult& r) {
    std::vector<Finding> findings;
    std::vector<std::string> parts;
    for (const FmaRate& d : rates) {
        if (!d.tflops) {
            r.measurements.push_back(Measurement::absent(d.key, d.label, "TFLOPS", d.absent_reason).on_gpu(gpu));
            continue;
        }
        const double v = *d.tflops;
        Measurement meas = Measurement::number(d.key, d.label, v, "TFLOPS").on_gpu(gpu);
        if (sp && d.spec && (sp->*d.spec)) {
            double spec = *(sp->*d.spec);
            meas.against(
                of_spec(spec, kFmaExpected, kFmaWarn, kFmaFail, datasheet_source(*sp) + "; floors: docs/checks.md"));
            grade_into(r, meas);
            parts.push_back(d.key.substr(0, 4) + " " + fixed(v, 1) + " (" + fixed(100 * v / spec, 0) + "%)");
        } else {
            parts.push_back(d.key.substr(0, 4) + " " + fixed(v, 1) + " (no spec)");
        }
        r.measurements.push_back(meas);
        if (d.wrong)
            findings.push_back(Finding{Verdict::Fail,
                                       d.label + ": " + std::to_string(d.wrong) + " of " + std::to_string(d.threads) +
                                           " threads computed a wrong result",
                                       d.key});
    }
    std::string figures;
    for (auto& p : parts) figures += (figures.empty() ? "" : ", ") + p;
    figures += " TFLOPS";
    if (!findings.empty()) {
        r.verdict = Verdict::Fail;
        r.summary = "wrong FMA results: " + findings.front().text;
        r.findings = findings;
        r.details.push_back(figures);
        return;
    }
    r.summary = r.verdict == Verdict::Pass
                    ? figures + "."
                    : "FMA throughput below " + fixed(100 * (r.verdict == Verdict::Fail ? kFmaFail : kFmaWarn), 0) +
                          "% of spec: " + figures + ".";
}

}  // namespace gpuvet::measure
