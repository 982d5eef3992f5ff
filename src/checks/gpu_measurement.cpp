#include "checks/gpu_measurement.hpp"

#include "checks/amd_measurement.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "checks/run_facts.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_requirements.hpp"
#include "gpu/device/backend_choice.hpp"
#include "specs/spec_db.hpp"
#include "core/strings.hpp"

namespace gpuvet::measure {

Reference of_spec(double spec, double expected, double warn, double fail, std::string source) {
    Reference r;
    r.spec = spec;
    r.expected_fraction = expected;
    r.warn_below = spec * warn;
    r.fail_below = spec * fail;
    r.source = std::move(source);
    return r;
}

int by_tier(const CheckContext& ctx, int quick, int standard, int full) {
    switch (ctx.options.tier) {
        case Tier::Quick: return quick;
        case Tier::Full: return full;
        default: return standard;
    }
}

std::string fixed(double v, int digits) { return format_fixed(v, digits); }

void add_clocks(CheckResult& r, int index, std::string_view suffix) {
    const DeviceBackend& backend = GpuBackends::shared().devices();
    std::string sfx(suffix);
    auto add = [&](const char* key, const char* label, const char* unit, const Fact<int>& f) {
        if (f) r.measurements.push_back(Measurement::number(std::string(key) + sfx, label, *f, unit).on_gpu(index));
        else
            r.measurements.push_back(
                Measurement::absent(std::string(key) + sfx, label, unit, f.absent_reason).on_gpu(index));
    };
    DeviceSample s;
    std::string why = backend.absent_reason();
    if (why.empty()) {
        auto dev = backend.open(index);
        why = dev->unopened_reason();
        if (why.empty()) s = dev->sample(kReadClocks | kReadThermal);
    }
    if (!why.empty()) s.clock_sm_mhz = s.clock_mem_mhz = s.temperature_c = Fact<int>::absent(why);
    add("sm_clock_mhz", "SM clock after the run", "MHz", s.clock_sm_mhz);
    add("mem_clock_mhz", "Memory clock after the run", "MHz", s.clock_mem_mhz);
    add("temperature_c", "GPU temperature after the run", "C", s.temperature_c);
}

CheckResult error_result(std::string_view key, std::string_view title, int gpu, const std::string& what,
                         const std::string& advice) {
    CheckResult r;
    r.key = std::string(key);
    r.title = std::string(title);
    r.gpu = gpu;
    r.verdict = Verdict::Error;
    r.summary = what;
    if (!advice.empty()) r.details.push_back(advice);
    return r;
}

GpuSet open_gpus(CheckContext& ctx, std::string_view key, std::string_view title, std::vector<CheckResult>& errors) {
    GpuSet set = GpuSet::open(ctx.facts->selected_gpus());
    for (auto& m : set.members())
        if (!m.session) {
            errors.push_back(error_result(key, title, m.index, m.error, m.advice));
            if (m.unavailable) errors.back().verdict = Verdict::Skip;
        }
    return set;
}

std::vector<CheckResult> for_each_gpu(CheckContext& ctx, std::string_view key, std::string_view title,
                                      const PerGpu& fn) {
    std::vector<CheckResult> out;
    GpuSet set = open_gpus(ctx, key, title, out);
    for (auto& m : set.members()) {
        if (!m.session) continue;
        if (ctx.stop_requested()) {  // the GPUs a stop kept from running are listed as such
            CheckResult r;
            r.key = std::string(key);
            r.title = std::string(title);
            r.gpu = m.index;
            r.summary = kNotRunInterrupted;
            out.push_back(std::move(r));
            continue;
        }
        if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index));
        CheckResult r;
        r.key = std::string(key);
        r.title = std::string(title);
        r.gpu = m.index;
        r.verdict = Verdict::Pass;
        auto t0 = std::chrono::steady_clock::now();
        try {
            m.session->make_current();
            fn(m, r);
        } catch (const Interrupted&) {
            // The figures measured before the stop stay; those it cut short are not judged.
            r.verdict = Verdict::Skip;
            r.summary = "interrupted before this GPU's measurement was complete; no verdict";
            r.details.clear();
        } catch (const Error& e) {
            r = error_result(key, title, m.index, e.what(), e.advice());
        }
        r.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(), [](const CheckResult& a, const CheckResult& b) { return a.gpu < b.gpu; });
    if (out.empty()) {
        CheckResult r;
        r.key = std::string(key);
        r.title = std::string(title);
        r.verdict = Verdict::Skip;
        r.summary = "no GPU selected";
        out.push_back(r);
    }
    return out;
}

std::string datasheet_source(const GpuSpec& sp) { return sp.name + " datasheet (gpuvet specs show " + sp.key + ")"; }

}  // namespace gpuvet::measure

namespace gpuvet {
std::optional<std::string> GpuMeasureCheck::unmet_requirement(const CheckContext& ctx) const {
    return gpu_requirement(ctx, GpuNeed::Cuda);
}
}  // namespace gpuvet

namespace gpuvet {
std::optional<std::string> GpuKernelCheck::unmet_requirement(const CheckContext& ctx) const {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::kernel_requirement();
    return GpuMeasureCheck::unmet_requirement(ctx);
}
}  // namespace gpuvet
