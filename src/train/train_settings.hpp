// What `gpuvet bench train` (and check --full) asks of the training benchmark and the software probe.
#pragma once
#include <optional>
#include <string>

namespace gpuvet {

struct TrainSettings {
    std::string model = "resnet50";     // resnet50, bert-large, bert-base, gpt
    std::optional<std::string> python;  // --python
    std::optional<int> steps;           // --steps: timed steps (default: the script's, 100 for ResNet-50)
    std::optional<int> batch;           // --batch: per GPU (default: by memory, as the baseline)
    bool channels_last = false;         // --channels-last: ResNet-50's second figure
    bool explicit_run = false;          // asked for by name (bench train), not only through --full
};

// The watchdog: a script that sends no heartbeat for this long is hung (GPUVET_TRAIN_WATCHDOG_S
// overrides it, for tests and very slow first starts).
double train_watchdog_s(double fallback);
// GPUVET_TRAIN_ALLOW_CPU=1: a test run on the CPU with tiny shapes when no GPU is usable.
bool train_cpu_allowed();

}  // namespace gpuvet
