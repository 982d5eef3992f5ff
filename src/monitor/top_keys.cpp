#include "monitor/top_keys.hpp"

#include <algorithm>

namespace gpuvet {

std::string sort_name(ProcessSort s) {
    switch (s) {
        case ProcessSort::Gpu: return "GPU";
        case ProcessSort::Memory: return "GPU memory";
        case ProcessSort::Cpu: return "CPU%";
        case ProcessSort::Pid: return "PID";
    }
    return "?";
}

const std::vector<std::string>& top_key_help() {
    static const std::vector<std::string> lines = {
        "q        quit (Ctrl-C too)",
        "s        sort processes: GPU memory, CPU%, PID, GPU",
        "S        reverse the sort order",
        "f        show the next GPU alone, then all again",
        "0-9      show only that GPU (the same digit again: all)",
        "h        history graphs on/off",
        "+ / -    refresh interval slower / faster (0.1 s to 60 s)",
        "?        this help (any key closes it)",
    };
    return lines;
}

KeyEffect apply_key(ViewState& v, int key, const std::vector<int>& gpus) {
    if (v.help) {  // any key closes the help; q still quits
        v.help = false;
        return key == 'q' || key == 'Q' ? KeyEffect::Quit : KeyEffect::Redraw;
    }
    switch (key) {
        case 'q':
        case 'Q': return KeyEffect::Quit;
        case 's': {
            static const ProcessSort order[] = {ProcessSort::Memory, ProcessSort::Cpu, ProcessSort::Pid,
                                                ProcessSort::Gpu};
            auto it = std::find(std::begin(order), std::end(order), v.sort);
            v.sort = (it == std::end(order) || it + 1 == std::end(order)) ? order[0] : *(it + 1);
            return KeyEffect::Redraw;
        }
        case 'S': v.reverse = !v.reverse; return KeyEffect::Redraw;
        case 'f': {
            if (gpus.empty()) return KeyEffect::None;
            if (!v.only_gpu) v.only_gpu = gpus.front();
            else {
                auto it = std::find(gpus.begin(), gpus.end(), *v.only_gpu);
                if (it == gpus.end() || it + 1 == gpus.end()) v.only_gpu.reset();
                else v.only_gpu = *(it + 1);
            }
            return KeyEffect::Redraw;
        }
        case 'h': v.history = !v.history; return KeyEffect::Redraw;
        case '?': v.help = true; return KeyEffect::Redraw;
        case '+':
        case '=': {
            double next = std::min(kTopMaxIntervalS, v.interval_s * 2);
            if (next == v.interval_s) return KeyEffect::None;
            v.interval_s = next;
            return KeyEffect::IntervalChanged;
        }
        case '-':
        case '_': {
            double next = std::max(kTopMinIntervalS, v.interval_s / 2);
            if (next == v.interval_s) return KeyEffect::None;
            v.interval_s = next;
            return KeyEffect::IntervalChanged;
        }
        default: break;
    }
    if (key >= '0' && key <= '9') {
        int g = key - '0';
        if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) return KeyEffect::None;
        if (v.only_gpu == g) v.only_gpu.reset();
        else v.only_gpu = g;
        return KeyEffect::Redraw;
    }
    return KeyEffect::None;
}

}  // namespace gpuvet
