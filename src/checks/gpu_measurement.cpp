#include "checks/gpu_measurement.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>

#include "checks/run_facts.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_requirements.hpp"
#include "gpu/bindings/nvml_api.hpp"
#include "specs/spec_db.hpp"

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

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// NVML for telemetry, loaded and initialised once per process.
const NvmlApi* shared_nvml() {
    static std::once_flag once;
    static std::unique_ptr<NvmlApi> api;
    std::call_once(once, [] {
        auto a = std::make_unique<NvmlApi>(NvmlApi::load());
        if (a->ok() && a->nvmlInit() == nvml::NVML_SUCCESS) api = std::move(a);
    });
    return api.get();
}

void add_clocks(CheckResult& r, int index, std::string_view suffix) {
    const NvmlApi* n = shared_nvml();
    std::string sfx(suffix);
    auto absent = [&](const char* key, const char* label, const char* unit, std::string why) {
        r.measurements.push_back(Measurement::absent(std::string(key) + sfx, label, unit, why).on_gpu(index));
    };
    nvml::nvmlDevice_t dev = nullptr;
    std::string why;
    if (!n) why = "NVML unavailable";
    else if (n->nvmlDeviceGetHandleByIndex(static_cast<unsigned>(index), &dev) != nvml::NVML_SUCCESS)
        why = "NVML has no handle for this GPU";
    auto clock = [&](const char* key, const char* label, nvml::nvmlClockType_t type) {
        unsigned v = 0;
        if (!why.empty()) return absent(key, label, "MHz", why);
        if (!n->nvmlDeviceGetClockInfo || n->nvmlDeviceGetClockInfo(dev, type, &v) != nvml::NVML_SUCCESS)
            return absent(key, label, "MHz", "NVML could not read it");
        r.measurements.push_back(Measurement::number(std::string(key) + sfx, label, v, "MHz").on_gpu(index));
    };
    clock("sm_clock_mhz", "SM clock during the run", nvml::NVML_CLOCK_SM);
    clock("mem_clock_mhz", "Memory clock during the run", nvml::NVML_CLOCK_MEM);
    unsigned t = 0;
    if (!why.empty()) absent("temperature_c", "GPU temperature after the run", "C", why);
    else if (!n->nvmlDeviceGetTemperature ||
             n->nvmlDeviceGetTemperature(dev, nvml::NVML_TEMPERATURE_GPU, &t) != nvml::NVML_SUCCESS)
        absent("temperature_c", "GPU temperature after the run", "C", "NVML could not read it");
    else
        r.measurements.push_back(
            Measurement::number("temperature_c" + sfx, "GPU temperature after the run", t, "C").on_gpu(index));
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

std::string datasheet_source(const GpuSpec& sp) {
    return sp.name + " datasheet (gpuvet specs show " + sp.key + ")";
}

}  // namespace gpuvet::measure

namespace gpuvet {
std::optional<std::string> GpuMeasureCheck::unmet_requirement(const CheckContext& ctx) const {
    return gpu_requirement(ctx, GpuNeed::Cuda);
}
}  // namespace gpuvet
