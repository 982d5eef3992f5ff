#include "monitor/clock_words.hpp"

#include <cstdio>

#include "gpu/clock_reasons.hpp"

namespace gpuvet {

std::vector<std::string> clock_reason_words(std::uint64_t mask) {
    using namespace clock_reason;
    static const struct {
        std::uint64_t bit;
        const char* words;
    } kWords[] = {
        {kGpuIdle, "idle"},
        {kApplicationsClocksSetting, "app clocks"},
        {kSwPowerCap, "power cap"},
        {kHwSlowdown, "HW slowdown"},
        {kSyncBoost, "sync boost"},
        {kSwThermalSlowdown, "thermal (SW)"},
        {kHwThermalSlowdown, "thermal (HW)"},
        {kHwPowerBrakeSlowdown, "power brake"},
        {kDisplayClockSetting, "display clocks"},
        {kBoardLimit, "board limit"},
        {kReliability, "reliability"},
    };
    std::vector<std::string> out;
    std::uint64_t known = 0;
    for (const auto& w : kWords) {
        known |= w.bit;
        if (mask & w.bit) out.emplace_back(w.words);
    }
    if (std::uint64_t rest = mask & ~known) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(rest));
        out.emplace_back(hex);
    }
    return out;
}

std::string clock_reasons_text(std::uint64_t mask) {
    std::string out;
    for (const auto& w : clock_reason_words(mask)) out += (out.empty() ? "" : ", ") + w;
    return out.empty() ? "none" : out;
}

bool clock_reasons_alarming(std::uint64_t mask) { return (mask & clock_reason::kFailMask) != 0; }

}  // namespace gpuvet
