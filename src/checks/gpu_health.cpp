#include "checks/gpu_health.hpp"

#include "core/strings.hpp"
#include "core/clock_reasons.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

const char* const kAzure = "Azure azurehpc-health-checks (row remap and ECC floors)";
const char* const kDcgm =
    "DCGM watchers: HW_SLOWDOWN, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE fail; SW_POWER_CAP is normal";
const char* const kNvidia = "NVIDIA GPU memory error management and nvidia-smi documentation";

template <class T>
Measurement count(const char* key, const char* label, const Fact<T>& f, std::optional<double> fail_above,
                  const char* source) {
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

Measurement flag(const char* key, const char* label, const Fact<bool>& f, const char* expected, const char* source) {
    if (!f) return Measurement::absent(key, label, "", f.absent_reason);
    Reference ref;
    ref.expected_text = expected;
    ref.source = source;
    return Measurement::textual(key, label, *f ? "yes" : "no").against(ref);
}

std::string reason_names(std::uint64_t mask) {
    using namespace clock_reason;
    static const std::pair<std::uint64_t, const char*> names[] = {{kGpuIdle, "GPU_IDLE"},
                                                                  {kApplicationsClocksSetting, "APPLICATIONS_CLOCKS"},
                                                                  {kSwPowerCap, "SW_POWER_CAP"},
                                                                  {kHwSlowdown, "HW_SLOWDOWN"},
                                                                  {kSyncBoost, "SYNC_BOOST"},
                                                                  {kSwThermalSlowdown, "SW_THERMAL"},
                                                                  {kHwThermalSlowdown, "HW_THERMAL"},
                                                                  {kHwPowerBrakeSlowdown, "HW_POWER_BRAKE"},
                                                                  {kDisplayClockSetting, "DISPLAY_CLOCKS"}};
    std::string s;
    for (auto& [bit, name] : names) {
        if (!(mask & bit)) continue;
        if (!s.empty()) s += '|';
        s += name;  // appended: `sep + std::string(name)` draws a false -Wrestrict from GCC 12
    }
    return s.empty() ? "none" : s;
}

void memory_errors(const GpuInfo& g, const GpuSpec* spec, CheckResult& r, Findings& f) {
    if (g.ecc_enabled) {
        r.measurements.push_back(flag("ecc_enabled", "ECC enabled", g.ecc_enabled, "yes", kNvidia));
        if (!*g.ecc_enabled && spec && spec->ecc)
            f.add(Verdict::Warn,
                  "ECC is off on a GPU that has it: memory bit flips go unnoticed (enable with nvidia-smi -e 1 and a "
                  "reboot)");
    } else {
        r.measurements.push_back(Measurement::absent("ecc_enabled", "ECC enabled", "", g.ecc_enabled.absent_reason));
    }
    r.measurements.push_back(count("ecc_volatile_uncorrected", "Uncorrectable ECC errors (since boot)",
                                   g.ecc.volatile_uncorrected, 0, kAzure));
    r.measurements.push_back(count("ecc_aggregate_uncorrected", "Uncorrectable ECC errors (lifetime)",
                                   g.ecc.aggregate_uncorrected, 0, kAzure));
    r.measurements.push_back(count("ecc_volatile_corrected", "Corrected ECC errors (since boot)",
                                   g.ecc.volatile_corrected, std::nullopt, kAzure));
    if (g.ecc.volatile_uncorrected.value_or(0) > 0)
        f.add(Verdict::Fail, std::to_string(*g.ecc.volatile_uncorrected) +
                                 " uncorrectable ECC errors since boot: memory corrupted data");
    else if (g.ecc.aggregate_uncorrected.value_or(0) > 0)
        f.add(Verdict::Fail,
              std::to_string(*g.ecc.aggregate_uncorrected) + " uncorrectable ECC errors over the GPU's life");

    r.measurements.push_back(flag("remap_pending", "Row remap pending", g.remap_pending, "no", kAzure));
    r.measurements.push_back(flag("remap_failure", "Row remap failed", g.remap_failure, "no", kAzure));
    r.measurements.push_back(count("remapped_rows_uncorrectable", "Rows remapped (uncorrectable)",
                                   g.remapped_rows_uncorrectable, double(kMaxUncorrectableRemappedRows), kAzure));
    r.measurements.push_back(count("remapped_rows_correctable", "Rows remapped (correctable)",
                                   g.remapped_rows_correctable, std::nullopt, kAzure));
    if (g.remap_pending.value_or(false))
        f.add(Verdict::Fail, "a memory row remap is pending: the GPU must be reset before its memory is trustworthy");
    if (g.remap_failure.value_or(false))
        f.add(Verdict::Fail, "a memory row remap failed: the GPU has run out of spare rows and needs repair");
    if (g.remapped_rows_uncorrectable.value_or(0) > kMaxUncorrectableRemappedRows)
        f.add(Verdict::Fail, std::to_string(*g.remapped_rows_uncorrectable) +
                                 " rows remapped for uncorrectable errors (more than " +
                                 std::to_string(kMaxUncorrectableRemappedRows) + ")");

    // Retired pages: the pre-Ampere mechanism (Volta, Turing).
    r.measurements.push_back(
        flag("retired_pages_pending", "Page retirement pending", g.retired_pages_pending, "no", kNvidia));
    r.measurements.push_back(count("retired_pages_double_bit", "Pages retired (double-bit)", g.retired_pages_double_bit,
                                   std::nullopt, kNvidia));
    if (g.retired_pages_pending.value_or(false))
        f.add(Verdict::Fail, "a page retirement is pending: reboot or reset the GPU before using it");
    if (g.retired_pages_double_bit.value_or(0) > 0)
        f.add(Verdict::Warn, std::to_string(*g.retired_pages_double_bit) +
                                 " pages retired for double-bit errors: the memory has failed before");
}

}  // namespace

namespace health {

void judge_power_limit(const GpuInfo& g, const char* source, CheckResult& r, Findings& f) {
    const Fact<double>& limit = g.power_enforced_limit_w ? g.power_enforced_limit_w : g.power_limit_w;
    if (limit) {
        Measurement m = Measurement::number("power_limit_w", "Power limit", *limit, "W");
        if (g.power_default_limit_w) {
            Reference ref;
            ref.spec = *g.power_default_limit_w;
            ref.warn_below = *g.power_default_limit_w - 1;  // 1 W for rounding of the milliwatt values
            ref.source = source;
            m.against(ref);
            if (*limit < *g.power_default_limit_w - 1)
                f.add(Verdict::Warn, "power limit " + format_number(*limit) + " W is below the default " +
                                         format_number(*g.power_default_limit_w) +
                                         " W: the GPU will run slower than its class");
        }
        r.measurements.push_back(m);
    } else {
        r.measurements.push_back(Measurement::absent("power_limit_w", "Power limit", "W", limit.absent_reason));
    }
}

void judge_idle_temperature(const GpuInfo& g, const std::string& source, CheckResult& r, Findings& f) {
    if (g.temperature_c) {
        Measurement m = Measurement::number("temperature_c", "Temperature", *g.temperature_c, "C");
        if (g.temperature_slowdown_c) {
            Reference ref;
            ref.warn_above = *g.temperature_slowdown_c - kIdleSlowdownMarginC;
            ref.source = source + " less " + std::to_string(kIdleSlowdownMarginC) + " C of headroom";
            m.against(ref);
            if (*g.temperature_c >= *g.temperature_slowdown_c - kIdleSlowdownMarginC)
                f.add(Verdict::Warn, std::to_string(*g.temperature_c) + " C before any load, within " +
                                         std::to_string(kIdleSlowdownMarginC) + " C of the slowdown threshold (" +
                                         std::to_string(*g.temperature_slowdown_c) +
                                         " C): cooling is poor or someone else is using it");
        }
        r.measurements.push_back(m);
    } else {
        r.measurements.push_back(
            Measurement::absent("temperature_c", "Temperature", "C", g.temperature_c.absent_reason));
    }
}

}  // namespace health

namespace {

void power_and_clocks(const GpuInfo& g, CheckResult& r, Findings& f) {
    r.measurements.push_back(flag("persistence_mode", "Persistence mode", g.persistence_mode, "yes", kNvidia));
    if (g.persistence_mode && !*g.persistence_mode)
        f.add(Verdict::Warn,
              "persistence mode is off: the driver unloads between jobs, so every first CUDA call waits seconds and "
              "settings such as clocks reset (nvidia-smi -pm 1)");
    health::judge_power_limit(g, "the GPU's own default power limit (NVML)", r, f);

    if (g.clock_event_reasons) {
        std::uint64_t mask = *g.clock_event_reasons;
        Reference ref;
        ref.expected_text = "none of HW_SLOWDOWN, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE";
        ref.source = kDcgm;
        r.measurements.push_back(
            Measurement::textual("clock_event_reasons", "Clock event reasons", reason_names(mask)).against(ref));
        if (mask & clock_reason::kFailMask)
            f.add(Verdict::Fail, "clocks are held down by " + reason_names(mask & clock_reason::kFailMask) +
                                     " before any load: overheating, a power-supply or board fault");
    } else {
        r.measurements.push_back(
            Measurement::absent("clock_event_reasons", "Clock event reasons", "", g.clock_event_reasons.absent_reason));
    }

    health::judge_idle_temperature(g, "the GPU's slowdown temperature (NVML)", r, f);
}

}  // namespace

CheckResult GpuHealthCheck::assess(const GpuInfo& g, const GpuSpec* spec, CheckContext&) {
    if (is_amd_gpu(g)) return health::assess_amd(g, spec);
    CheckResult r;
    Findings f;
    memory_errors(g, spec, r, f);
    power_and_clocks(g, r, f);
    for (auto& e : g.errors) r.details.push_back("while reading: " + e);
    const std::string label = gpu_label(g, spec);
    f.apply(r, label,
            label + " is healthy: no memory errors or pending repairs, no hardware slowdown, default power limit.");
    return r;
}

}  // namespace gpuvet
