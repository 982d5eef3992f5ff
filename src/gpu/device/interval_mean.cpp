#include "gpu/device/interval_mean.hpp"

#include <algorithm>
#include <cmath>

namespace gpuvet {

namespace {

// Samples stamped this far past `now_us` come from another clock than the one `now_us` is read
// from: the reader stops using `now_us` for that buffer (gpuvet's choice: 2 s of disagreement).
constexpr std::uint64_t kFutureSlackUs = 2'000'000;

// The driver's period: the lower median gap between consecutive samples (the last seen included),
// so holes and dropped values do not stretch it. One gap alone may be a hole, so it is taken only
// while nothing better is known.
void learn_spacing(const std::vector<TimedValue>& s, BufferCursor& c) {
    std::vector<double> gaps;
    for (std::size_t i = 1; i < s.size(); ++i)
        if (s[i].timestamp_us > s[i - 1].timestamp_us)
            gaps.push_back(double(s[i].timestamp_us - s[i - 1].timestamp_us));
    if (gaps.empty() || (gaps.size() < 2 && c.spacing_us > 0)) return;
    auto mid = gaps.begin() + (gaps.size() - 1) / 2;
    std::nth_element(gaps.begin(), mid, gaps.end());
    c.spacing_us = *mid;
}

struct Sums {
    double weighted = 0, busy_us = 0, idle_us = 0, min = 0, max = 0;
    int n = 0;
};

// Each new sample weighs the time since the one before it. A gap of more than 1.5 periods has a
// sample missing (less is the driver's jitter): the sample weighs one period and, with
// `holes_are_idle`, the rest is idle time. `prev` 0: the time before the first sample is unknown
// (it weighs one period).
void weigh(const std::vector<TimedValue>& fresh, std::uint64_t prev, double spacing_us, bool holes_are_idle, Sums& s) {
    for (const TimedValue& v : fresh) {
        double gap = prev ? double(v.timestamp_us) - double(prev) : spacing_us;
        bool hole = spacing_us > 0 && gap > 1.5 * spacing_us;
        double w = hole ? spacing_us : gap;
        if (hole && holes_are_idle && prev) s.idle_us += gap - spacing_us;
        if (w <= 0) w = 1;  // one sample alone, or duplicates: count it rather than drop it
        s.weighted += w * v.value;
        s.busy_us += w;
        s.min = s.n ? std::min(s.min, v.value) : v.value;
        s.max = s.n ? std::max(s.max, v.value) : v.value;
        ++s.n;
        prev = v.timestamp_us;
    }
}

// The driver time up to which the newest sample's successors are overdue by half a period: a
// driver that writes none while the GPU is idle leaves that stretch empty. 0: none overdue.
std::uint64_t overdue_until(std::uint64_t newest_us, std::uint64_t now_us, double spacing_us) {
    if (!newest_us || !now_us || spacing_us <= 0 || now_us <= newest_us) return 0;
    double k = std::floor(double(now_us - newest_us) / spacing_us - 0.5);
    return k >= 1 ? newest_us + static_cast<std::uint64_t>(k * spacing_us) : 0;
}

// The driver time the samples account from, and whether the stretch up to the first new sample
// is known to hold no other sample: the buffer still reaches back to it (the last seen sample came
// back, or on the first read an older one). Measured on the driver's clock only where `now_us` is
// that clock.
struct Start {
    std::uint64_t from = 0;
    bool anchored = false;
};
Start start_of(const std::vector<TimedValue>& samples, const BufferCursor& c, std::uint64_t now_us) {
    Start s;
    const bool first = c.last_seen_us == 0 && c.covered_us == 0;
    s.from = std::max(c.covered_us, c.last_seen_us);
    if (first) s.from = now_us > kFirstWindowUs ? now_us - kFirstWindowUs : 0;
    const std::uint64_t reach = c.last_seen_us ? c.last_seen_us : s.from;
    s.anchored = now_us && s.from && !samples.empty() && samples.front().timestamp_us <= reach;
    return s;
}

// The tick's figure from the samples' sums and the tail after them, less the previous tail: the
// previous read's guess for its last moments is put right here, so a tick after a change can read
// a little off its own samples (min and max stay the samples'). A mean the correction pushes out
// of [lo, hi] is reported at the bound and the rest carried into `c`'s pending tail for a later
// read, so the reads' sum stays the driver's.
std::optional<IntervalMean> combine(const Sums& s, double tail_us, double tail_value, bool tail_idle,
                                    const BufferCursor& before, double lo, double hi, BufferCursor& c) {
    double total_us = s.busy_us + s.idle_us + tail_us - before.pending_us;
    double weighted = s.weighted + tail_us * tail_value - before.pending_weighted;
    IntervalMean m;
    if (s.n == 0 && s.idle_us <= 0 && tail_us <= 0) return std::nullopt;
    // A read no later than the previous one, or a buffer that lost its continuity: the samples
    // and the tail alone.
    if (total_us <= 0) {
        total_us = s.busy_us + s.idle_us + tail_us;
        weighted = s.weighted + tail_us * tail_value;
    }
    m.mean = std::clamp(weighted / total_us, lo, hi);
    if (c.last_seen_us) c.pending_weighted += m.mean * total_us - weighted;
    m.min = s.n ? s.min : tail_value;
    m.max = s.n ? s.max : tail_value;
    if (tail_us > 0) m.min = std::min(m.min, tail_value), m.max = std::max(m.max, tail_value);
    if (s.idle_us > 0) m.min = std::min(m.min, 0.0);
    double idle_us = s.idle_us + (tail_idle ? tail_us : 0) - before.pending_idle_us;
    m.samples = s.n;
    m.span_s = total_us * 1e-6;
    m.idle_s = std::clamp(idle_us, 0.0, total_us) * 1e-6;
    m.carried = s.n == 0 && s.idle_us <= 0;
    return m;
}

}  // namespace

std::optional<IntervalMean> buffered_interval_mean(std::vector<TimedValue> samples, BufferCursor& c,
                                                   std::uint64_t now_us, double lo, double hi, bool holes_are_idle) {
    std::erase_if(samples,
                  [&](const TimedValue& v) { return v.timestamp_us == 0 || !(v.value >= lo && v.value <= hi); });
    std::sort(samples.begin(), samples.end(),
              [](const TimedValue& a, const TimedValue& b) { return a.timestamp_us < b.timestamp_us; });
    if (!samples.empty() && now_us && samples.back().timestamp_us > now_us + kFutureSlackUs) c.clock_untrusted = true;
    if (c.clock_untrusted) now_us = 0, c.pending_us = c.pending_weighted = c.pending_idle_us = 0;
    learn_spacing(samples, c);
    const Start start = start_of(samples, c, now_us);
    std::vector<TimedValue> fresh;
    for (const TimedValue& v : samples)
        if (v.timestamp_us > start.from) fresh.push_back(v);
    Sums s;
    weigh(fresh, start.anchored ? start.from : 0, c.spacing_us, holes_are_idle, s);
    const std::uint64_t newest =
        std::max(c.last_seen_us, samples.empty() ? std::uint64_t{0} : samples.back().timestamp_us);
    std::uint64_t end = fresh.empty() ? start.from : fresh.back().timestamp_us;
    if (holes_are_idle)
        if (std::uint64_t due = overdue_until(newest, now_us, c.spacing_us); due > end) {
            s.idle_us += double(due - std::max(end, newest));
            end = due;
        }
    // Utilization: from the last accounted time to now, the newest sample's value, 0 inside a hole,
    // so each read stands for the time since the previous one. A clock's mean keeps to its samples.
    const bool in_hole = holes_are_idle && newest && end > newest;
    const bool value_known = in_hole || (!samples.empty() && samples.back().timestamp_us == newest);
    const double tail_us = holes_are_idle && now_us && value_known && now_us > end ? double(now_us - end) : 0;
    const double tail_value = in_hole || samples.empty() ? 0 : samples.back().value;
    const BufferCursor before = c;
    if (newest) {  // a buffer that never held a sample keeps its first-read window
        c.last_seen_us = newest;
        c.covered_us = std::max(c.covered_us, end);
        c.pending_us = tail_us;
        c.pending_weighted = tail_us * tail_value;
        c.pending_idle_us = in_hole ? tail_us : 0;
    }
    return combine(s, tail_us, tail_value, in_hole, before, lo, hi, c);
}

std::optional<double> power_from_energy(std::uint64_t earlier_mj, std::uint64_t later_mj, double elapsed_s) {
    if (later_mj < earlier_mj || !(elapsed_s > 0)) return std::nullopt;
    return double(later_mj - earlier_mj) * 1e-3 / elapsed_s;
}

std::optional<double> violation_percent(std::uint64_t earlier_ns, std::uint64_t earlier_ref_us, std::uint64_t later_ns,
                                        std::uint64_t later_ref_us) {
    if (later_ref_us <= earlier_ref_us || later_ns < earlier_ns) return std::nullopt;
    double share = double(later_ns - earlier_ns) / (double(later_ref_us - earlier_ref_us) * 1e3);
    return std::clamp(share * 100.0, 0.0, 100.0);
}

}  // namespace gpuvet
