#include "monitor/clock_words.hpp"

#include "core/clock_reasons.hpp"

namespace gpuvet {

std::vector<std::string> clock_reason_words(std::uint64_t mask) { return clock_reason::names_of(mask, false, ""); }

std::string clock_reasons_text(std::uint64_t mask) {
    std::string out;
    for (const auto& w : clock_reason_words(mask)) out += (out.empty() ? "" : ", ") + w;
    return out.empty() ? "none" : out;
}

bool clock_reasons_alarming(std::uint64_t mask) { return (mask & clock_reason::kFailMask) != 0; }

}  // namespace gpuvet
