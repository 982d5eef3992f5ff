#include "history/comparable.hpp"

#include <algorithm>
#include <cmath>

#include "core/strings.hpp"

namespace gpuvet::history {

const std::vector<std::string>& counter_metrics() {
    static const std::vector<std::string> k = {
        "gpu.health.ecc_aggregate_uncorrected", "gpu.health.remapped_rows_uncorrectable",
        "gpu.health.remapped_rows_correctable", "gpu.health.retired_pages_double_bit"};
    return k;
}

bool is_counter(const std::string& metric) {
    const auto& k = counter_metrics();
    return std::find(k.begin(), k.end(), metric) != k.end();
}

namespace {

bool same_tier(const std::optional<std::string>& a, const std::optional<std::string>& b) {
    if (a == b) return true;
    return (a && *a == kUnknownTier) || (b && *b == kUnknownTier);
}

bool alike_burns(const std::optional<double>& a, const std::optional<double>& b) {
    if (!a && !b) return true;
    if (!a || !b || *a <= 0 || *b <= 0) return false;
    return std::min(*a, *b) >= kBurnDurationRatio * std::max(*a, *b);
}

}  // namespace

bool comparable(const RunKind& now, const RunKind& then, const std::string& metric) {
    if (is_counter(metric)) return true;
    if (now.command != then.command || !same_tier(now.tier, then.tier)) return false;
    if (metric.rfind("gpu.burn.", 0) == 0) return alike_burns(now.burn_duration_s, then.burn_duration_s);
    return true;
}

std::string describe(const RunKind& k) {
    std::string s = k.command;
    if (k.tier) s += ", " + *k.tier + " tier";
    if (k.burn_duration_s) s += ", " + format_number(std::round(*k.burn_duration_s), 6) + " s burn";
    return s;
}

}  // namespace gpuvet::history
