#include "gpu/device/interval_mean.hpp"

#include <algorithm>

namespace gpuvet {

namespace {

double median_spacing_us(const std::vector<TimedValue>& s, std::uint64_t since_us) {
    std::vector<double> gaps;
    if (since_us > 0 && !s.empty()) gaps.push_back(double(s.front().timestamp_us - since_us));
    for (std::size_t i = 1; i < s.size(); ++i) gaps.push_back(double(s[i].timestamp_us - s[i - 1].timestamp_us));
    if (gaps.empty()) return 0;
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    return gaps[gaps.size() / 2];
}

}  // namespace

std::optional<IntervalMean> interval_mean(std::vector<TimedValue> samples, std::uint64_t since_us, double lo,
                                          double hi) {
    std::erase_if(samples, [&](const TimedValue& v) {
        return v.timestamp_us == 0 || v.timestamp_us <= since_us || !(v.value >= lo && v.value <= hi);
    });
    if (samples.empty()) return std::nullopt;
    std::sort(samples.begin(), samples.end(),
              [](const TimedValue& a, const TimedValue& b) { return a.timestamp_us < b.timestamp_us; });
    double cap_us = median_spacing_us(samples, since_us);
    IntervalMean m;
    m.min = m.max = samples.front().value;
    double weighted = 0, total_us = 0;
    std::uint64_t prev = since_us;
    for (const TimedValue& v : samples) {
        // The first sample of the first tick has no predecessor: it stands for one typical period.
        double w = prev > 0 ? std::min(double(v.timestamp_us - prev), cap_us) : cap_us;
        if (w <= 0) w = 1;  // one sample alone, or duplicates: count it rather than drop it
        weighted += w * v.value;
        total_us += w;
        m.min = std::min(m.min, v.value);
        m.max = std::max(m.max, v.value);
        prev = v.timestamp_us;
        ++m.samples;
    }
    m.mean = weighted / total_us;
    m.span_s = total_us * 1e-6;
    m.newest_us = samples.back().timestamp_us;
    return m;
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
