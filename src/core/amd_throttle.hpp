// AMD's ASIC-independent throttle bits: the GPU metrics table's indep_throttle_status, as the amdgpu
// driver defines them (Linux drivers/gpu/drm/amd/pm/swsmu/inc/amdgpu_smu.h, SMU_THROTTLER_*_BIT):
// power limiters in bits 0-15, current limiters 16-31, temperatures and hot signals 32-47, others
// 56-63. In core, beside the NVIDIA clock-event reasons: printers and rules decode both.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/clock_reasons.hpp"

namespace gpuvet::amd_throttle {

enum class Kind { Power, Current, Thermal, Other };

struct Bit {
    int bit;
    const char* name;  // as amdgpu_smu.h spells it, without SMU_THROTTLER_ and _BIT
    Kind kind;
};

inline constexpr Bit kBits[] = {
    {0, "PPT0", Kind::Power},
    {1, "PPT1", Kind::Power},
    {2, "PPT2", Kind::Power},
    {3, "PPT3", Kind::Power},
    {4, "SPL", Kind::Power},
    {5, "FPPT", Kind::Power},
    {6, "SPPT", Kind::Power},
    {7, "SPPT_APU", Kind::Power},
    {16, "TDC_GFX", Kind::Current},
    {17, "TDC_SOC", Kind::Current},
    {18, "TDC_MEM", Kind::Current},
    {19, "TDC_VDD", Kind::Current},
    {20, "TDC_CVIP", Kind::Current},
    {21, "EDC_CPU", Kind::Current},
    {22, "EDC_GFX", Kind::Current},
    {23, "APCC", Kind::Current},
    {32, "TEMP_GPU", Kind::Thermal},
    {33, "TEMP_CORE", Kind::Thermal},
    {34, "TEMP_MEM", Kind::Thermal},
    {35, "TEMP_EDGE", Kind::Thermal},
    {36, "TEMP_HOTSPOT", Kind::Thermal},
    {37, "TEMP_SOC", Kind::Thermal},
    {38, "TEMP_VR_GFX", Kind::Thermal},
    {39, "TEMP_VR_SOC", Kind::Thermal},
    {40, "TEMP_VR_MEM0", Kind::Thermal},
    {41, "TEMP_VR_MEM1", Kind::Thermal},
    {42, "TEMP_LIQUID0", Kind::Thermal},
    {43, "TEMP_LIQUID1", Kind::Thermal},
    {44, "VRHOT0", Kind::Thermal},
    {45, "VRHOT1", Kind::Thermal},
    {46, "PROCHOT_CPU", Kind::Thermal},
    {47, "PROCHOT_GFX", Kind::Thermal},
    {56, "PPM", Kind::Other},
    {57, "FIT", Kind::Other},
};

// Held down by heat (or a hot signal from the board): what gpu.health fails on before any load.
inline constexpr std::uint64_t kThermalMask = 0xFFFFull << 32;
// Held at a power or current limit: the limiter working, as NVIDIA's SW_POWER_CAP.
inline constexpr std::uint64_t kPowerMask = 0xFFFFFFFFull;

// The names of the set bits ("PPT0", "TEMP_HOTSPOT"); an unknown bit as "bit 50".
inline std::vector<std::string> names(std::uint64_t bits) {
    std::vector<std::string> out;
    for (int b = 0; b < 64; ++b) {
        if (!(bits >> b & 1)) continue;
        std::string n = "bit " + std::to_string(b);
        for (const Bit& k : kBits)
            if (k.bit == b) n = k.name;
        out.push_back(n);
    }
    return out;
}

// The same bits in NVIDIA's reason classes, for the rules both vendors share (burn, run, top): a
// power or current limiter is SW_POWER_CAP (the limit working), a temperature limiter
// SW_THERMAL_SLOWDOWN (the firmware slowing the clocks), a board's hot signal (VRHOT, PROCHOT)
// HW_SLOWDOWN. gpu.health and the inventory name AMD's own bits.
inline std::uint64_t as_clock_reasons(std::uint64_t bits) {
    std::uint64_t out = 0;
    if (bits & kPowerMask) out |= clock_reason::kSwPowerCap;
    if (bits & (0xFFFull << 32)) out |= clock_reason::kSwThermalSlowdown;  // TEMP_* (bits 32-43)
    if (bits & (0xFull << 44)) out |= clock_reason::kHwSlowdown;           // VRHOT0/1, PROCHOT_CPU/GFX
    return out;
}

inline std::string joined(std::uint64_t bits) {
    std::string s;
    for (const auto& n : names(bits)) s += (s.empty() ? "" : "|") + n;
    return s.empty() ? "none" : s;
}

}  // namespace gpuvet::amd_throttle
