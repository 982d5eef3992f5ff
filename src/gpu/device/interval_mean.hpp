// The arithmetic of interval figures, shared by any backend: the time-weighted mean of a driver's
// sample buffer since the previous read, the mean power from an energy counter, and the share of
// an interval a violation-time counter grew. Pure functions, no vendor API.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace gpuvet {

struct TimedValue {
    std::uint64_t timestamp_us = 0;  // the driver's clock (microseconds); 0: unusable
    double value = 0;
};

// What a reader keeps of one driver buffer between reads.
struct BufferCursor {
    std::uint64_t last_seen_us = 0;  // the newest sample used: the next query asks from just before it
    std::uint64_t covered_us = 0;    // driver time the samples have accounted for up to (0: nothing yet)
    double spacing_us = 0;           // the driver's sample period, learned from the samples (0: unknown)
    bool clock_untrusted = false;    // the samples' clock is not the one `now_us` is read from
    // The stretch from covered_us to the previous read, taken at the newest sample's value until
    // samples cover it: the next read takes it back.
    double pending_us = 0, pending_weighted = 0, pending_idle_us = 0;
};

struct IntervalMean {
    double mean = 0, min = 0, max = 0;
    int samples = 0;       // new samples that weighed in
    double span_s = 0;     // time the mean stands for: since the previous read
    double idle_s = 0;     // of span_s, stretches the driver wrote no sample in, counted as 0
    bool carried = false;  // no new sample and none overdue: the latest one stands for the interval
};

// The driver writes one sample per period, stamped at its end, each the period's mean. A reader
// asks for the samples newer than cursor.last_seen_us - 1, so the last one it used comes back while
// the buffer still holds it: then no sample was lost between two reads (none were overwritten),
// and a stretch with no sample is one the driver wrote none in.
//
// `samples` is that answer (any order; values outside [lo, hi] and zero timestamps dropped);
// `now_us` the driver's clock at the read (0: unknown). With `holes_are_idle` (utilization: a
// driver may stop writing samples while the GPU is idle), the time of a missing sample counts as
// 0: inside the buffer, before the first new sample, and after the newest once the next is overdue
// by half a period; and the time since the last period the samples account for is taken at the
// newest sample's value (0 in a hole) and corrected by the next read, so each read stands for the
// time since the previous one and the reads add up to the driver's samples. Without it (clocks), a
// sample weighs at most one period and the mean keeps to the samples since the previous read. The
// first read covers the driver's last second (kFirstWindowUs). nullopt when nothing can be said (no
// sample ever, or none new on a clock other than `now_us`'s); the cursor is updated either way.
inline constexpr std::uint64_t kFirstWindowUs = 1'000'000;
std::optional<IntervalMean> buffered_interval_mean(std::vector<TimedValue> samples, BufferCursor& cursor,
                                                   std::uint64_t now_us, double lo, double hi, bool holes_are_idle);

// Mean power in watts from two readings of a cumulative energy counter (millijoules) `elapsed_s`
// apart; nullopt when the counter went back (a driver reload) or no time passed.
std::optional<double> power_from_energy(std::uint64_t earlier_mj, std::uint64_t later_mj, double elapsed_s);

// Percent of the interval between two readings of a violation-time counter (ns of violation,
// read at a reference time in microseconds) the limiter held the clocks down; nullopt when the
// reference time did not advance or a counter went back. Clamped to 0-100.
std::optional<double> violation_percent(std::uint64_t earlier_ns, std::uint64_t earlier_ref_us, std::uint64_t later_ns,
                                        std::uint64_t later_ref_us);

}  // namespace gpuvet
