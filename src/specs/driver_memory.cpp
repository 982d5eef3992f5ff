#include "specs/driver_memory.hpp"

#include <algorithm>
#include <cmath>

#include "core/strings.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

DriverMemoryExpectation around(double mib, std::string ecc_state, std::string basis) {
    DriverMemoryExpectation e;
    e.expected_mib = mib;
    e.low_mib = mib * (1 - kDriverMemoryTolerance);
    e.high_mib = mib * (1 + kDriverMemoryTolerance);
    e.ecc_state = std::move(ecc_state);
    e.basis = std::move(basis);
    return e;
}

std::string rule_text(double sold_gib, bool less_ecc) {
    return "rule: " + format_number(sold_gib) + " GiB as sold" + (less_ecc ? " less 1/16 for in-band ECC" : "") +
           ", ±" + format_number(kDriverMemoryTolerance * 100) + "%";
}

// One ECC state of a SKU: the published figure, else the rule.
DriverMemoryExpectation for_state(const GpuSpec& s, bool ecc_on) {
    bool gddr = ecc_changes_capacity(s.memory_type);
    const std::optional<int>& published = (ecc_on || !gddr) ? s.driver_memory_ecc_on_mib : s.driver_memory_ecc_off_mib;
    std::string state = gddr ? (ecc_on ? "ECC on" : "ECC off") : "ECC on";
    if (published)
        return around(*published, state,
                      "published driver figure " + std::to_string(*published) + " MiB" +
                          (gddr ? " with " + state : "") +
                          (s.driver_memory_source.empty() ? "" : " (" + s.driver_memory_source + ")") + ", ±" +
                          format_number(kDriverMemoryTolerance * 100) + "%");
    bool less = gddr && ecc_on;
    // Per GPU as the driver lists it: each die of a multi-die board (MI250X) has its share.
    return around(s.memory_per_device_gib() * 1024 * (less ? 1 - kInbandEccShare : 1), state,
                  rule_text(s.memory_per_device_gib(), less));
}

DriverMemoryExpectation either(const DriverMemoryExpectation& on, const DriverMemoryExpectation& off) {
    DriverMemoryExpectation e = on;
    e.low_mib = std::min(on.low_mib, off.low_mib);
    e.high_mib = std::max(on.high_mib, off.high_mib);
    e.ecc_state = "ECC on or off";
    e.basis = "ECC state not read, so either: " + on.basis + "; or " + off.basis;
    return e;
}

}  // namespace

bool ecc_changes_capacity(const std::string& memory_type) { return to_lower(memory_type).rfind("gddr", 0) == 0; }

DriverMemoryExpectation expected_driver_memory(const GpuSpec& s, std::optional<bool> ecc_enabled) {
    if (!ecc_changes_capacity(s.memory_type)) return for_state(s, true);
    if (ecc_enabled) return for_state(s, *ecc_enabled);
    return either(for_state(s, true), for_state(s, false));
}

DriverMemoryExpectation expected_driver_memory_for_size(double sold_gib, std::optional<bool> ecc_enabled) {
    auto off = around(sold_gib * 1024, "ECC off", rule_text(sold_gib, false));
    if (ecc_enabled && !*ecc_enabled) return off;
    auto on = around(sold_gib * 1024 * (1 - kInbandEccShare), "ECC on", rule_text(sold_gib, true));
    // With ECC on an HBM board still shows nearly all of it: accept up to the full size.
    DriverMemoryExpectation e = either(on, off);
    e.ecc_state = ecc_enabled ? "ECC on" : "ECC on or off";
    e.basis = "no SKU known, so " + on.basis + " (GDDR) up to " + off.basis + " (HBM)";
    return e;
}

std::string mib_and_gib(double mib) {
    return std::to_string(std::llround(mib)) + " MiB (" + format_number(mib / 1024, 4) + " GiB)";
}

}  // namespace gpuvet
