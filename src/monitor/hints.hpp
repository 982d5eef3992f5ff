// Spec-aware hints beside a GPU's numbers on the monitor: what a person should notice that the
// raw figures do not say. Pure: the GPU's fixed facts, one sample and its datasheet (may be null)
// in, sentences out, each with the source of the figure it compares against (docs/monitor.md).
#pragma once
#include <string>
#include <vector>

#include "gpu/device/backend.hpp"
#include "monitor/usage_thresholds.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

enum class HintLevel { Info, Warn, Alert };

struct Hint {
    HintLevel level = HintLevel::Info;
    std::string text;    // "power-capped at 500 W of 700 W"
    std::string source;  // "NVML default power limit", "datasheet (data/gpus.toml)"
};

// Thresholds, named so docs and tests quote the same numbers; the ones `run` judges by too are in
// usage_thresholds.hpp (memory nearly full, launch-bound).
inline constexpr double kHintPowerCapFraction = 0.98;   // limit below 98% of the default (or TDP)
inline constexpr int kHintIdleUtilizationPercent = 5;   // memory full with utilization ≤ 5%
inline constexpr int kHintBusyUtilizationPercent = 20;  // a link judged only while this busy
inline constexpr int kHintHotMarginC = 5;               // within 5 °C of the slowdown temperature

std::vector<Hint> gpu_hints(const DeviceFacts& facts, const DeviceSample& s, const GpuSpec* spec);

}  // namespace gpuvet
