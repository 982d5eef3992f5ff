// Clock-event ("throttle") reasons in words a person reads on the monitor: "power cap",
// "HW slowdown", "thermal (HW)". Bits from nvml.h via gpu/clock_reasons.hpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpuvet {

// One short phrase per set bit, in bit order; unknown bits as "0x..." so nothing is hidden.
std::vector<std::string> clock_reason_words(std::uint64_t mask);
// The phrases joined by ", "; "none" for an empty mask.
std::string clock_reasons_text(std::uint64_t mask);
// True when a reason means trouble (hardware slowdown, thermal, power brake), not routine
// (idle, the power limit working, application clocks).
bool clock_reasons_alarming(std::uint64_t mask);

}  // namespace gpuvet
