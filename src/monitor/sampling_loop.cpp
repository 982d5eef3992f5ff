#include "monitor/sampling_loop.hpp"

#include <algorithm>
#include <thread>

namespace gpuvet {

LoopEnd run_sampling_loop(const LoopLimits& limits, const std::atomic<bool>& stop, const std::function<bool()>& tick) {
    return run_sampling_loop(limits, stop, tick, [](std::chrono::steady_clock::time_point until) {
        std::this_thread::sleep_until(until);
        return true;
    });
}

LoopEnd run_sampling_loop(const LoopLimits& limits, const std::atomic<bool>& stop, const std::function<bool()>& tick,
                          const LoopWait& wait) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kSlice = std::chrono::milliseconds(50);
    const auto interval = limits.interval.count() > 0 ? limits.interval : std::chrono::milliseconds(1);
    const Clock::time_point start = Clock::now();
    const Clock::time_point end = limits.duration ? start + *limits.duration : Clock::time_point::max();
    Clock::time_point next = start;
    while (true) {
        if (stop.load()) return LoopEnd::Stopped;
        if (!tick()) return LoopEnd::TickEnded;
        next += interval;
        Clock::time_point now = Clock::now();
        while (next <= now) next += interval;  // overran: skip the slots already past
        while (true) {
            if (stop.load()) return LoopEnd::Stopped;
            now = Clock::now();
            if (now >= end) return LoopEnd::DurationReached;
            if (now >= next) break;
            Clock::time_point wake = std::min(next, now + kSlice);
            wake = std::min(wake, end);
            if (!wait(wake)) return LoopEnd::TickEnded;
        }
    }
}

}  // namespace gpuvet
