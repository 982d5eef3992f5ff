// NVML clock-event ("throttle") reason bits, values from nvml.h (nvmlClocksEventReason*). In core:
// the burn's "bitmask" series carry them, and printers decode them.
// Test them as a bitmask: several are set at once (REFERENCES.md, a known gpu-fryer slip).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

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

// Every bit above with its names: as nvidia-smi -q spells it, and in short words for a live view.
struct Name {
    std::uint64_t bit;
    const char* nvml;
    const char* words;
};
inline constexpr Name kNames[] = {
    {kGpuIdle, "GPU_IDLE", "idle"},
    {kApplicationsClocksSetting, "APPLICATIONS_CLOCKS_SETTING", "app clocks"},
    {kSwPowerCap, "SW_POWER_CAP", "power cap"},
    {kHwSlowdown, "HW_SLOWDOWN", "HW slowdown"},
    {kSyncBoost, "SYNC_BOOST", "sync boost"},
    {kSwThermalSlowdown, "SW_THERMAL_SLOWDOWN", "thermal (SW)"},
    {kHwThermalSlowdown, "HW_THERMAL_SLOWDOWN", "thermal (HW)"},
    {kHwPowerBrakeSlowdown, "HW_POWER_BRAKE_SLOWDOWN", "power brake"},
    {kDisplayClockSetting, "DISPLAY_CLOCK_SETTING", "display clocks"},
    {kBoardLimit, "BOARD_LIMIT", "board limit"},
    {kReliability, "RELIABILITY", "reliability"},
};

// The names of the bits set in `mask` (nvml or words), then any bit a newer driver defines as
// `unknown_prefix` + hex, kept visible rather than dropped.
std::vector<std::string> names_of(std::uint64_t mask, bool nvml_names, const char* unknown_prefix);

}  // namespace gpuvet::clock_reason
