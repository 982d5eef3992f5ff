// The one loop of the long-running commands (top --log, export's sampler, run): a tick every
// `interval` on absolute deadlines (no drift however long a tick takes), until the stop flag
// (Ctrl-C/SIGTERM), the duration, or the tick itself says to end. It sleeps in short slices so a
// signal ends it within 50 ms, whatever the interval.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

namespace gpuvet {

struct LoopLimits {
    std::chrono::milliseconds interval{1000};
    std::optional<std::chrono::milliseconds> duration;  // none: until stopped
};

enum class LoopEnd { Stopped, DurationReached, TickEnded };

// Calls tick() at once and then every interval; tick returns false to end the loop. A tick that
// overruns its slot is not made up for: the next starts at the next deadline still ahead.
LoopEnd run_sampling_loop(const LoopLimits& limits, const std::atomic<bool>& stop, const std::function<bool()>& tick);

// Waits until a time point at most (a slice of at most 50 ms); returns false to end the loop
// (TickEnded). The full-screen monitor waits on the keyboard here instead of sleeping.
using LoopWait = std::function<bool(std::chrono::steady_clock::time_point until)>;
LoopEnd run_sampling_loop(const LoopLimits& limits, const std::atomic<bool>& stop, const std::function<bool()>& tick,
                          const LoopWait& wait);

}  // namespace gpuvet
