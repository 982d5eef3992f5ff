// NVML clock-event ("throttle") reason bits, values from nvml.h (nvmlClocksEventReason*).
// Test them as a bitmask: several are set at once (REFERENCES.md, a known gpu-fryer slip).
#pragma once
#include <cstdint>

namespace gpuvet::clock_reason {

inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;  // normal: the power limit is working
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
inline constexpr std::uint64_t kBoardLimit = 0x200;
inline constexpr std::uint64_t kReliability = 0x400;

// The reasons DCGM's watchers fail on: the hardware or its cooling is in trouble.
inline constexpr std::uint64_t kFailMask =
    kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;

}  // namespace gpuvet::clock_reason
