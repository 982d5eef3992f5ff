// gpu.health on an AMD GPU: what AMD's driver counts instead of NVIDIA's ECC counters and row
// remapping (RAS counts per block since the driver loaded, retired and pending bad pages), the power
// cap against its default, the throttle status and the junction temperature before any load.
#include "checks/gpu_health.hpp"

#include "core/amd_throttle.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet::health {

namespace {

const char* const kAmdRas =
    "AMD RAS: uncorrectable and deferred errors mean corrupted or poisoned data (amd-smi metric --ecc-blocks); "
    "gpuvet rule: none allowed";
const char* const kAmdBadPages =
    "AMD bad-page retirement (amd-smi bad-pages): pending pages are retired at the next driver load";

Measurement count(const std::string& key, const std::string& label, const Fact<std::uint64_t>& f,
                  std::optional<double> fail_above, const char* source) {
    if (!f) return Measurement::absent(key, label, "count", f.absent_reason);
    Measurement m = Measurement::number(key, label, double(*f), "count");
    if (fail_above) {
        Reference ref;
        ref.fail_above = fail_above;
        ref.source = source;
        m.against(ref);
    }
    return m;
}

// A block's name for a person: UMC is the HBM, XGMI_WAFL the links.
std::string block_words(const std::string& b) {
    if (b == "UMC") return "UMC (HBM memory)";
    if (b == "XGMI_WAFL") return "XGMI_WAFL (xGMI links)";
    if (b == "GFX") return "GFX (compute units)";
    return b;
}

void ras(const GpuInfo& g, const GpuSpec* spec, CheckResult& r, Findings& f) {
    if (g.ecc_enabled) {
        Reference ref;
        ref.expected_text = "yes";
        ref.source = kAmdRas;
        r.measurements.push_back(
            Measurement::textual("ecc_enabled", "ECC enabled (HBM)", *g.ecc_enabled ? "yes" : "no").against(ref));
        if (!*g.ecc_enabled && spec && spec->ecc)
            f.add(Verdict::Warn, "ECC is off on the HBM of a GPU that has it: bit flips go unnoticed");
    } else {
        r.measurements.push_back(
            Measurement::absent("ecc_enabled", "ECC enabled (HBM)", "", g.ecc_enabled.absent_reason));
    }
    r.measurements.push_back(count("ecc_volatile_uncorrected", "Uncorrectable errors (since driver load)",
                                   g.ecc.volatile_uncorrected, 0, kAmdRas));
    r.measurements.push_back(count("ecc_volatile_corrected", "Corrected errors (since driver load)",
                                   g.ecc.volatile_corrected, std::nullopt, kAmdRas));
    for (const RasBlockCount& b : g.ras_blocks) {
        // Only blocks that counted something get lines of their own: the others are all zero.
        if (b.uncorrectable.value_or(0) == 0 && b.correctable.value_or(0) == 0 && b.deferred.value_or(0) == 0) continue;
        r.measurements.push_back(
            count("ras_" + b.block + "_uncorrectable", b.block + " uncorrectable", b.uncorrectable, 0, kAmdRas));
        r.measurements.push_back(
            count("ras_" + b.block + "_correctable", b.block + " corrected", b.correctable, std::nullopt, kAmdRas));
        if (b.deferred)
            r.measurements.push_back(
                count("ras_" + b.block + "_deferred", b.block + " deferred", b.deferred, 0, kAmdRas));
        if (b.uncorrectable.value_or(0) > 0)
            f.add(Verdict::Fail, std::to_string(*b.uncorrectable) + " uncorrectable error(s) in " +
                                     block_words(b.block) + " since the driver loaded: data was corrupted");
        if (b.deferred.value_or(0) > 0)
            f.add(Verdict::Fail, std::to_string(*b.deferred) + " deferred (poisoned) error(s) in " +
                                     block_words(b.block) + " since the driver loaded");
        if (b.correctable.value_or(0) > 0)
            r.details.push_back(std::to_string(*b.correctable) + " corrected error(s) in " + block_words(b.block) +
                                " since the driver loaded");
    }
    // The total when no block is listed (a driver without per-block counts).
    if (g.ras_blocks.empty() && g.ecc.volatile_uncorrected.value_or(0) > 0)
        f.add(Verdict::Fail, std::to_string(*g.ecc.volatile_uncorrected) +
                                 " uncorrectable error(s) since the driver loaded: data was corrupted");
}

void bad_pages(const GpuInfo& g, CheckResult& r, Findings& f) {
    auto u32 = [](const Fact<std::uint32_t>& x) {
        return x ? Fact<std::uint64_t>(*x) : Fact<std::uint64_t>::absent(x.absent_reason);
    };
    r.measurements.push_back(
        count("bad_pages_pending", "Bad pages pending retirement", u32(g.bad_pages_pending), 0, kAmdBadPages));
    r.measurements.push_back(count("bad_pages_unreservable", "Bad pages that could not be retired",
                                   u32(g.bad_pages_unreservable), 0, kAmdBadPages));
    r.measurements.push_back(
        count("bad_pages_retired", "Bad pages retired", u32(g.bad_pages_retired), std::nullopt, kAmdBadPages));
    if (g.bad_pages_pending.value_or(0) > 0)
        f.add(Verdict::Fail, std::to_string(*g.bad_pages_pending) +
                                 " bad page(s) waiting to be retired: reload the amdgpu driver or reboot before the "
                                 "memory is trustworthy");
    if (g.bad_pages_unreservable.value_or(0) > 0)
        f.add(Verdict::Fail,
              std::to_string(*g.bad_pages_unreservable) + " bad page(s) could not be retired: the memory needs repair");
    if (g.bad_pages_retired.value_or(0) > 0)
        f.add(Verdict::Warn, std::to_string(*g.bad_pages_retired) +
                                 " page(s) of HBM retired for errors: the memory has failed before");
}

// Held down by heat or a board's hot signal before any load: overheating or a board fault. A
// power limiter at idle is the limiter working.
void throttle(const GpuInfo& g, CheckResult& r, Findings& f) {
    if (!g.amd_throttle_status) {
        r.measurements.push_back(
            Measurement::absent("throttle_status", "Throttle status", "", g.amd_throttle_status.absent_reason));
        return;
    }
    const std::uint64_t bits = *g.amd_throttle_status;
    Reference ref;
    ref.expected_text = "no temperature or hot-signal limiter";
    ref.source = "amdgpu SMU_THROTTLER bits (drivers/gpu/drm/amd/pm/swsmu/inc/amdgpu_smu.h)";
    r.measurements.push_back(
        Measurement::textual("throttle_status", "Throttle status", amd_throttle::joined(bits)).against(ref));
    if (bits & amd_throttle::kThermalMask)
        f.add(Verdict::Fail, "clocks are held down by " + amd_throttle::joined(bits & amd_throttle::kThermalMask) +
                                 " before any load: overheating or a board fault");
}

}  // namespace

CheckResult assess_amd(const GpuInfo& g, const GpuSpec* spec) {
    CheckResult r;
    Findings f;
    ras(g, spec, r, f);
    bad_pages(g, r, f);
    judge_power_limit(g, "the GPU's own default power cap (AMD SMI)", r, f);
    throttle(g, r, f);
    judge_idle_temperature(g, "the junction's critical temperature (AMD SMI)", r, f);
    r.details.push_back(
        "not judged on AMD: persistence mode and row remapping are NVIDIA's (the amdgpu driver stays loaded; AMD "
        "retires bad pages instead)");
    for (auto& e : g.errors) r.details.push_back("while reading: " + e);
    const std::string label = gpu_label(g, spec);
    f.apply(r, label,
            label +
                " is healthy: no uncorrectable RAS errors or pending bad pages, no thermal throttling, default "
                "power cap.");
    return r;
}

}  // namespace gpuvet::health
