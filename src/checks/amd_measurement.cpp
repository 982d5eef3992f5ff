#include "checks/amd_measurement.hpp"

#include <algorithm>
#include <chrono>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "gpu/device/amd_backend.hpp"
#include "gpu/device/backend_choice.hpp"
#include "gpu/identify.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet::amd_measure {

bool run_is_amd(const CheckContext& ctx) {
    if (!ctx.facts) return false;
    const DriverInfo& d = ctx.facts->driver();
    if (d.nvidia_found || !d.amd_present) return false;
    const DeviceBackend& amd = amd_devices();
    if (!amd.absent_reason().empty()) return false;
    Fact<int> n = amd.device_count();
    return n && *n > 0;
}

const DeviceBackend& amd_devices() {
    const VendorBackend& amd = GpuBackends::shared().amd();
    if (amd.backend && amd.in_use()) return *amd.backend;
    return AmdSmiBackend::shared();
}

std::optional<std::string> kernel_requirement() {
    std::string why;
    if (shared_hip(why)) return std::nullopt;
    return "HIP is unavailable: " + why + " (install ROCm's HIP runtime, or set GPUVET_LIBHIP)";
}

namespace {

CheckResult result_for(std::string_view key, std::string_view title, int gpu) {
    CheckResult r;
    r.key = std::string(key);
    r.title = std::string(title);
    r.gpu = gpu;
    return r;
}

const GpuSpec* spec_of(const CheckContext& ctx, const DeviceFacts& f, int index) {
    if (!ctx.specs) return nullptr;
    GpuInfo g;
    static_cast<DeviceFacts&>(g) = f;
    g.index = index;
    return identify_gpu(g, *ctx.specs).spec;
}

}  // namespace

std::vector<Member> open_gpus(const CheckContext& ctx) {
    std::vector<Member> out;
    const DeviceBackend& amd = amd_devices();
    const Fact<int> n = amd.device_count();
    std::string hip_why;
    std::shared_ptr<const HipApi> hip = shared_hip(hip_why);
    for (int i = 0; n && i < *n; ++i) {
        const auto& want = ctx.options.gpus;
        if (!want.empty() && std::find(want.begin(), want.end(), i) == want.end()) continue;
        Member m;
        m.index = i;
        auto dev = amd.open(i);
        if (!dev->unopened_reason().empty()) {
            m.error = "AMD SMI could not open GPU " + std::to_string(i) + ": " + dev->unopened_reason();
            out.push_back(std::move(m));
            continue;
        }
        m.facts = dev->describe();
        m.spec = spec_of(ctx, m.facts, i);
        try {
            if (!hip) throw Error(ErrorKind::Driver, "HIP is unavailable: " + hip_why, "install ROCm's HIP runtime");
            // ROCm SMI does not report the gfx target: the SKU's, from the spec database, stands in.
            std::string gfx = m.facts.gfx_target ? *m.facts.gfx_target : (m.spec ? m.spec->gfx_target : "");
            if (gfx.empty())
                throw Error(ErrorKind::Driver,
                            "the GPU's gfx target is unknown (" + m.facts.gfx_target.absent_reason + ")",
                            "gpuvet picks the code object by gfx target: update the amdgpu driver and AMD SMI");
            m.session = std::make_unique<HipSession>(hip, m.facts.pci_bus_id ? *m.facts.pci_bus_id : "", i, gfx);
        } catch (const Error& e) {
            m.error = e.what();
            m.advice = e.advice();
        }
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<CheckResult> for_each_gpu(CheckContext& ctx, std::string_view key, std::string_view title,
                                      const PerGpu& fn) {
    std::vector<CheckResult> out;
    for (Member& m : open_gpus(ctx)) {
        CheckResult r = result_for(key, title, m.index);
        if (!m.session) {
            r.verdict = Verdict::Error;
            r.summary = m.error;
            if (!m.advice.empty()) r.details.push_back(m.advice);
            out.push_back(std::move(r));
            continue;
        }
        if (ctx.stop_requested()) {
            r.summary = kNotRunInterrupted;
            out.push_back(std::move(r));
            continue;
        }
        if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index));
        r.verdict = Verdict::Pass;
        auto t0 = std::chrono::steady_clock::now();
        try {
            m.session->make_current();
            fn(m, r);
        } catch (const Interrupted&) {
            r.verdict = Verdict::Skip;
            r.summary = "interrupted before this GPU's measurement was complete; no verdict";
            r.details.clear();
        } catch (const Error& e) {
            CheckResult err = result_for(key, title, m.index);
            err.verdict = Verdict::Error;
            err.summary = e.what();
            if (!e.advice().empty()) err.details.push_back(e.advice());
            r = std::move(err);
        }
        r.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        out.push_back(std::move(r));
    }
    if (out.empty()) {
        CheckResult r = result_for(key, title, -1);
        r.verdict = Verdict::Skip;
        r.summary = "no GPU selected";
        out.push_back(r);
    }
    return out;
}

void add_clocks(CheckResult& r, int index) {
    const DeviceBackend& backend = amd_devices();
    DeviceSample s;
    std::string why = backend.absent_reason();
    if (why.empty()) {
        auto dev = backend.open(index);
        why = dev->unopened_reason();
        if (why.empty()) s = dev->sample(kReadClocks | kReadThermal);
    }
    if (!why.empty()) s.clock_sm_mhz = s.clock_mem_mhz = s.temperature_c = Fact<int>::absent(why);
    auto add = [&](const char* key, const char* label, const char* unit, const Fact<int>& f) {
        r.measurements.push_back(f ? Measurement::number(key, label, *f, unit).on_gpu(index)
                                   : Measurement::absent(key, label, unit, f.absent_reason).on_gpu(index));
    };
    add("sm_clock_mhz", "GFX clock after the run", "MHz", s.clock_sm_mhz);
    add("mem_clock_mhz", "Memory clock after the run", "MHz", s.clock_mem_mhz);
    add("temperature_c", "Junction temperature after the run", "C", s.temperature_c);
}

}  // namespace gpuvet::amd_measure
