#include "checks/gpu_gemm.hpp"

#include <cstdio>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_gemm_judge.hpp"
#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "gpu/gemm_run.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_requirements.hpp"
#include "gpu/session.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

int cc_x10(const GpuInfo* info, GpuSession& s) {
    if (info && info->compute_capability) {
        int maj = 0, min = 0;
        if (std::sscanf(info->compute_capability.value->c_str(), "%d.%d", &maj, &min) == 2) return maj * 10 + min;
    }
    return s.compute_capability();
}

// Every precision the GPU supports, swept in turn; the judging is gemm::judge_gemm's.
gemm::GpuGemmRun measure_gemm(CheckContext& ctx, const CublasLtApi& lt, const std::string& lib_text,
                              const gemm::RunSettings& rs, GpuSet::Member& m) {
    GpuSession& s = *m.session;
    gemm::GpuGemmRun g{m.index, cc_x10(m.info, s), lib_text, {}};
    gemm::LtHandle handle(lt, s);
    for (const auto& p : gemm::precisions()) {
        if (g.cc_x10 < p.min_cc) {
            g.precisions.push_back({&p, std::nullopt});
            continue;
        }
        if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index) + ": " + p.label);
        g.precisions.push_back({&p, gemm::run_precision(lt, handle, s, p, rs)});
    }
    return g;
}

}  // namespace

std::optional<std::string> GpuGemmCheck::unmet_requirement(const CheckContext& ctx) const {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::kernel_requirement();  // HIP; hipBLASLt is asked in run()
    return gpu_requirement(ctx, GpuNeed::Cuda);
}

std::vector<CheckResult> GpuGemmCheck::run(CheckContext& ctx) {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::gemm(ctx, key(), title());
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
    const std::string lib_text = lt.path + ", cuBLASLt " + lt.version_text();
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
        } else if (!m.session) {
            r.verdict = Verdict::Error;
            r.summary = "could not open GPU " + std::to_string(m.index) + ": " + m.error;
            if (!m.advice.empty()) r.details.push_back(m.advice);
            out.push_back(r);
        } else {
            const GpuSpec* spec = (m.info ? ctx.facts->spec_of(m.info->index) : nullptr);
            out.push_back(gemm::judge_gemm(measure_gemm(ctx, lt, lib_text, rs, m), spec));
        }
    }
    return out;
}

}  // namespace gpuvet
