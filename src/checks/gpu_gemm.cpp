#include "checks/gpu_gemm.hpp"

#include <cmath>
#include <cstdio>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "gpu/gemm_run.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_requirements.hpp"
#include "gpu/session.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

constexpr const char* kSource =
    "dense tensor datasheet figure; healthy fraction from mamf-finder results (BF16 best shape 73-87%, "
    "FP8 70-78%: stas00/ml-engineering compute/accelerator/README.md)";

std::string fmt(double v, int digits = 0) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

int cc_x10(const GpuInfo* info, GpuSession& s) {
    if (info && info->compute_capability) {
        int maj = 0, min = 0;
        if (std::sscanf(info->compute_capability.value->c_str(), "%d.%d", &maj, &min) == 2) return maj * 10 + min;
    }
    return s.compute_capability();
}

}  // namespace

std::optional<std::string> GpuGemmCheck::unmet_requirement(const CheckContext& ctx) const {
    return gpu_requirement(ctx, GpuNeed::Cuda);
}

std::vector<CheckResult> GpuGemmCheck::run(CheckContext& ctx) {
    int driver_cuda = ctx.facts->inventory().cuda_driver_version.value.value_or(0);
    CublasLtApi lt = CublasLtApi::load(driver_cuda);
    if (!lt.ok()) {
        CheckResult r;
        r.verdict = Verdict::Skip;
        r.summary = lt.found_too_new ? kCublasLtTooNewAdvice : kCublasLtMissingAdvice;
        r.details.push_back("tried (" + std::to_string(lt.tried.size()) + "):");
        for (const auto& t : lt.tried) r.details.push_back("  " + t);
        return {r};
    }
    std::string lib_text = lt.path + ", cuBLASLt " + lt.version_text();
    gemm::RunSettings rs = gemm::settings_for(ctx.options.tier);
    rs.stop = ctx.stop;

    std::vector<CheckResult> out;
    GpuSet set = GpuSet::open(ctx.facts->selected_gpus());
    for (auto& m : set.members()) {
        CheckResult r;
        r.gpu = m.index;
        if (ctx.stop_requested()) {  // the GPUs a stop kept from running are listed as such
            r.verdict = Verdict::Skip;
            r.summary = kNotRunInterrupted;
            out.push_back(r);
            continue;
        }
        if (!m.session) {
            r.verdict = Verdict::Error;
            r.summary = "could not open GPU " + std::to_string(m.index) + ": " + m.error;
            if (!m.advice.empty()) r.details.push_back(m.advice);
            out.push_back(r);
            continue;
        }
        GpuSession& s = *m.session;
        const GpuSpec* spec = (m.info ? ctx.facts->spec_of(m.info->index) : nullptr);
        int cc = cc_x10(m.info, s);
        r.measurements.push_back(Measurement::textual("cublaslt", "cuBLASLt used", lib_text).on_gpu(m.index));
        gemm::LtHandle handle(lt, s);

        Verdict v = Verdict::Pass;
        std::vector<std::string> parts, wrong, cut;  // cut: precisions a stop left unmeasured
        for (const auto& p : gemm::precisions()) {
            std::string key = std::string(p.name) + (p.precision == gemm::Precision::int8 ? "_tops" : "_tflops");
            if (cc < p.min_cc) {
                r.measurements.push_back(Measurement::absent(key, p.label, p.unit,
                                                             "needs compute capability " + fmt(p.min_cc / 10.0, 1) +
                                                                 ", this GPU has " + fmt(cc / 10.0, 1))
                                             .on_gpu(m.index));
                continue;
            }
            if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index) + ": " + p.label);
            gemm::PrecisionRun run = gemm::run_precision(lt, handle, s, p, rs);
            for (const auto& sh : run.shapes) {
                std::string line = std::string(p.name) + " " + sh.shape.text() + ": ";
                line += sh.rate ? fmt(*sh.rate, 1) + " " + p.unit + " (median " + fmt(sh.median_ms, 3) + " ms), " +
                                      std::to_string(sh.checked - sh.mismatches.size()) + "/" +
                                      std::to_string(sh.checked) + " sampled outputs correct"
                                : sh.absent_reason;
                r.details.push_back(line);
                for (std::size_t i = 0; i < sh.mismatches.size() && i < 3; ++i) {
                    const auto& mm = sh.mismatches[i];
                    r.details.push_back("  wrong D(" + std::to_string(mm.i) + "," + std::to_string(mm.j) +
                                        ") = " + fmt(mm.got, 4) + ", expected " + fmt(mm.expected, 4) + " +/- " +
                                        fmt(mm.allowed, 4));
                }
            }
            const gemm::ShapeResult* best = run.best();
            if (run.mismatches()) wrong.push_back(std::string(p.name) + " " + std::to_string(run.mismatches()) + "/" +
                                                  std::to_string(run.checked()));
            if (run.interrupted) {  // the best of a partial sweep is not the GPU's rate: absent, not judged
                cut.push_back(p.name);
                r.measurements.push_back(Measurement::absent(key, p.label, p.unit, kInterrupted).on_gpu(m.index));
                continue;
            }
            if (!best) {
                r.measurements.push_back(
                    Measurement::absent(key, p.label, p.unit, run.absent_reason).on_gpu(m.index));
                continue;
            }
            Measurement meas = Measurement::number(key, p.label, *best->rate, p.unit).on_gpu(m.index);
            std::string part = std::string(p.name) + " " + fmt(*best->rate) + " " + p.unit;
            if (auto sr = spec ? gemm::spec_rate(*spec, p.precision) : std::nullopt) {
                Reference ref;
                ref.spec = *sr;
                ref.expected_fraction = p.expected_fraction;
                ref.warn_below = *sr * p.warn_fraction;
                ref.fail_below = *sr * p.fail_fraction;
                ref.source = spec->name + " " + kSource;
                meas.against(ref);
                part += " (" + fmt(100 * *best->rate / *sr) + "% of " + fmt(*sr) + ")";
                if (*best->rate < *ref.fail_below) v = worst(v, Verdict::Fail);
                else if (*best->rate < *ref.warn_below) v = worst(v, Verdict::Warn);
            }
            r.measurements.push_back(meas);
            r.measurements.push_back(
                Measurement::textual(std::string(p.name) + "_best_shape", std::string(p.label) + " best shape",
                                     best->shape.text())
                    .on_gpu(m.index));
            parts.push_back(part);
        }
        std::string joined;
        for (const auto& x : parts) joined += (joined.empty() ? "" : ", ") + x;
        if (!wrong.empty()) {
            // A fast wrong answer is a failure, whatever the rate.
            std::string w;
            for (const auto& x : wrong) w += (w.empty() ? "" : ", ") + x;
            r.verdict = Verdict::Fail;
            r.summary = "GEMM results are WRONG (" + w + " sampled outputs differ from the CPU reference)";
        } else if (parts.empty()) {
            r.verdict = Verdict::Skip;
            r.summary = cut.empty() ? "no precision could be measured" : "interrupted before a precision was measured; no verdict";
        } else {
            r.verdict = v;
            r.summary = joined + (spec ? "" : "; no datasheet figure to compare with") + "; outputs verified";
            if (!cut.empty()) r.summary += "; interrupted before " + std::to_string(cut.size()) + " precision(s)";
        }
        if (!cut.empty()) {
            std::string list;
            for (const auto& x : cut) list += (list.empty() ? "" : ", ") + x;
            r.details.push_back("not measured (interrupted): " + list);
        }
        r.details.push_back("cuBLASLt: " + lib_text);
        if (!spec) r.details.push_back("GPU not in the spec database: rates are reported without a verdict");
        out.push_back(r);
    }
    return out;
}

}  // namespace gpuvet
