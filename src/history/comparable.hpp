// Which earlier runs a figure may be compared with: the same command at the same tier, and for a
// burn's figures a burn of about the same length. A quick check's 20-second burn peaks tens of
// degrees below a full check's 10-minute one; read one after the other they are no rising peak.
// Lifetime error counters count whatever ran: any earlier run compares.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpuvet::history {

// A tier recorded before tiers were kept (schema 2 and earlier): comparable with any tier.
inline constexpr const char* kUnknownTier = "unknown";

// Two burns are alike when the shorter lasted at least this share of the longer: gpuvet's own
// choice. A GPU's temperature still climbs minutes into a load, so 20 s against 10 min differ by
// tens of degrees, while durations within a fifth of each other (60 s and 66 s, or a run whose
// load ended a little early) heat a card alike.
inline constexpr double kBurnDurationRatio = 0.8;

struct RunKind {
    std::string command;
    std::optional<std::string> tier;        // quick, standard, full; unknown; none for burn, run, host
    std::optional<double> burn_duration_s;  // the burn's load duration, when a burn ran
};

// The lifetime counters whose growth between two runs is a finding.
const std::vector<std::string>& counter_metrics();
bool is_counter(const std::string& metric);

bool comparable(const RunKind& now, const RunKind& then, const std::string& metric);

// "check, quick tier, 20 s burn": how a run is named where kinds are told apart.
std::string describe(const RunKind& k);

}  // namespace gpuvet::history
