// The arithmetic of interval figures, shared by any backend: the time-weighted mean of a driver's
// sample buffer since the last sample seen, the mean power from an energy counter, and the share
// of an interval a violation-time counter grew. Pure functions, no vendor API.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace gpuvet {

struct TimedValue {
    std::uint64_t timestamp_us = 0;  // the driver's clock (microseconds); 0: unusable
    double value = 0;
};

struct IntervalMean {
    double mean = 0, min = 0, max = 0;
    int samples = 0;              // samples that weighed in
    double span_s = 0;            // time they cover
    std::uint64_t newest_us = 0;  // the last sample's timestamp: the next call's "since"
};

// The samples newer than `since_us` (0: every sample, the first tick), values outside [lo, hi] and
// zero timestamps dropped. Each sample stands for the driver period that ended at its timestamp:
// it weighs the time since the sample before it (the first: since `since_us`), capped at the
// median spacing so a gap in the buffer does not inflate one sample. nullopt when none is left.
std::optional<IntervalMean> interval_mean(std::vector<TimedValue> samples, std::uint64_t since_us, double lo,
                                          double hi);

// Mean power in watts from two readings of a cumulative energy counter (millijoules) `elapsed_s`
// apart; nullopt when the counter went back (a driver reload) or no time passed.
std::optional<double> power_from_energy(std::uint64_t earlier_mj, std::uint64_t later_mj, double elapsed_s);

// Percent of the interval between two readings of a violation-time counter (ns of violation,
// read at a reference time in microseconds) the limiter held the clocks down; nullopt when the
// reference time did not advance or a counter went back. Clamped to 0-100.
std::optional<double> violation_percent(std::uint64_t earlier_ns, std::uint64_t earlier_ref_us, std::uint64_t later_ns,
                                        std::uint64_t later_ref_us);

}  // namespace gpuvet
