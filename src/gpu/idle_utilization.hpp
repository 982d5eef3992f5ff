// GPU utilization while nothing of ours runs: NVML's counter sampled over a short window before any
// gpuvet load, and the judgement of a GPU that is busy although no process shows on it. Inside a
// container the processes of other containers and VMs are invisible to NVML, and a tenant using
// little memory passes the memory rule; the utilization counter still sees their kernels.
//
// What the counter is (nvml.h, nvmlUtilization_t): "Percent of time over the past sample period
// during which one or more kernels was executing on the GPU"; "each sample period may be between
// 1 second and 1/6 second, depending on the product being queried". So reads 100 ms apart often
// repeat one period's value; a window of about a second covers one to six periods, and the first
// read already describes the time before it.
#pragma once
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "gpu/device/backend.hpp"

namespace gpuvet {

// Thresholds on an idle GPU, whose counter reads 0%. A display server or a monitoring agent (DCGM
// profiling, a health probe) runs short kernels: a few % on average, an occasional blip in one
// sample period. So: WARN when the mean is above 10% (more than agents cause) or one sample is above
// 50% (a real burst of work); FAIL when the mean over the whole window is above 50%: kernels ran
// more than half the time, which no agent explains; someone is computing on the GPU.
inline constexpr double kIdleBusyMeanWarnPercent = 10;
inline constexpr double kIdleBusyMaxWarnPercent = 50;
inline constexpr double kIdleBusyMeanFailPercent = 50;

// One GPU's window: every successful read of the GPU's utilization (the backend's sample()).
struct IdleUtilization {
    std::vector<double> samples_percent;
    std::string absent_reason;  // why samples_percent is empty
};

struct IdleUtilizationJudgement {
    std::optional<double> mean_percent, max_percent;  // empty without samples
    Verdict verdict = Verdict::Pass;                  // Pass: nothing to report
    std::string finding;                              // the sentence, when not Pass
};

// Pure: the verdict on a window of samples. `visible_processes` counts the other processes NVML
// lists on the GPU; when there are any, their own finding covers the load and this says nothing.
IdleUtilizationJudgement judge_idle_utilization(const std::vector<double>& samples_percent, int visible_processes);

// Reads the utilization of every GPU in `gpus` (NVML indexes) `count` times, `period` apart, all
// GPUs in one loop so they share the window. Null or unusable `backend`: every GPU is absent with
// that reason. A GPU whose reading fails is not asked again. Stops early (keeping what was read)
// when `stop` is set.
std::map<int, IdleUtilization> sample_idle_utilization(const DeviceBackend* backend, const std::vector<int>& gpus,
                                                       int count, std::chrono::milliseconds period,
                                                       const std::atomic<bool>* stop = nullptr);

}  // namespace gpuvet
