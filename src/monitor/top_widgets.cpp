#include "monitor/top_widgets.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace gpuvet {

std::string fill_bar(const Fact<double>& percent, int width) {
    if (width <= 0) return {};
    int n = percent ? static_cast<int>(std::lround(std::clamp(*percent, 0.0, 100.0) / 100 * width)) : 0;
    return std::string(static_cast<std::size_t>(n), '|') + std::string(static_cast<std::size_t>(width - n), ' ');
}

std::string sparkline(const std::deque<Fact<double>>& history, int width, bool unicode) {
    static const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char kAscii[] = "_.:-=+*#%@";  // zero is "_", absent is blank
    std::string out;
    if (width <= 0) return out;
    std::size_t n = std::min(history.size(), static_cast<std::size_t>(width));
    for (std::size_t i = history.size() - n; i < history.size(); ++i) {
        const auto& f = history[i];
        if (!f) {
            out += ' ';
            continue;
        }
        double x = std::clamp(*f, 0.0, 100.0) / 100;
        if (unicode) out += kBlocks[std::min(7, static_cast<int>(x * 8))];
        else out += kAscii[std::min(9, static_cast<int>(x * 10))];
    }
    return out;
}

Tone load_tone(const Fact<double>& percent) {
    if (!percent) return Tone::Dim;
    return *percent >= 90 ? Tone::Bad : *percent >= 70 ? Tone::Warn : Tone::Good;
}

Tone temperature_tone(const Fact<int>& c, const Fact<int>& slowdown_c) {
    if (!c) return Tone::Dim;
    if (!slowdown_c) return Tone::Normal;
    return *c >= *slowdown_c - 5 ? Tone::Bad : *c >= *slowdown_c - 15 ? Tone::Warn : Tone::Normal;
}

std::vector<ProcessRow> view_processes(const std::vector<ProcessRow>& rows, const ViewState& v) {
    std::vector<ProcessRow> out;
    for (const auto& r : rows)
        if (!v.only_gpu || r.gpu == *v.only_gpu) out.push_back(r);
    // Larger first for memory and CPU (what a person looks for); ascending for PID and GPU.
    auto key = [&](const ProcessRow& r) {
        switch (v.sort) {
            case ProcessSort::Memory: return -static_cast<double>(r.gpu_memory_bytes.value_or(0));
            case ProcessSort::Cpu: return -r.cpu_percent.value_or(-1);
            case ProcessSort::Pid: return static_cast<double>(r.pid);
            case ProcessSort::Gpu: return static_cast<double>(r.gpu);
        }
        return 0.0;
    };
    std::stable_sort(out.begin(), out.end(), [&](const ProcessRow& a, const ProcessRow& b) {
        double ka = key(a), kb = key(b);
        if (ka != kb) return v.reverse ? ka > kb : ka < kb;
        return std::tie(a.gpu, a.pid) < std::tie(b.gpu, b.pid);
    });
    return out;
}

}  // namespace gpuvet
