// The full-screen monitor's view state and what each key does to it. Pure, so the keys are
// unit-tested without a terminal; the screen only draws the state.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

enum class ProcessSort { Gpu, Memory, Cpu, Pid };

struct ViewState {
    ProcessSort sort = ProcessSort::Memory;
    bool reverse = false;         // S: the other order
    std::optional<int> only_gpu;  // f / digits: show one GPU (and its processes)
    bool history = true;          // h: the sparkline row per GPU
    bool help = false;            // ?: the key list
    double interval_s = 1;        // + / -: doubled or halved within the limits below
    std::string stale;            // set while the values shown are not current (a driver not answering)
};

inline constexpr double kTopMinIntervalS = 0.1;
inline constexpr double kTopMaxIntervalS = 60;

enum class KeyEffect { None, Redraw, Quit, IntervalChanged };

// `gpus`: the watched GPU indexes, in display order. Unknown keys do nothing.
KeyEffect apply_key(ViewState& v, int key, const std::vector<int>& gpus);

std::string sort_name(ProcessSort s);

// The help lines the ? key shows (also in `gpuvet top --help` and docs/monitor.md).
const std::vector<std::string>& top_key_help();

}  // namespace gpuvet
