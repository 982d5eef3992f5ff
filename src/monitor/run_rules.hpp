// The trial run's diagnosis: a documented rule table (docs/run.md, research in
// shared/docs/research/run-diagnosis.md §2) as data, each rule a pure function of the summary
// and the steady-state window. Every rule names its signals, its thresholds and where they come
// from: [N] an NVIDIA document, [P] a peer tool's default, [G] gpuvet's own, to calibrate.
// The primary verdict is the first rule of kPrimaryOrder that fired; the others follow.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/run_result.hpp"
#include "monitor/run_summary.hpp"

namespace gpuvet {

// Thresholds, named so messages and docs are built from the same numbers.
namespace run_rule {
inline constexpr double kIdleBusyPercent = 10;  // a tick below this is "GPU idle" [P: SageMaker]
// A4: a GPU whose mean utilization stays below this did no work ([P: SageMaker] asks for exactly 0;
// [G] allows a little for the driver's own housekeeping).
inline constexpr double kIdleGpuMeanPercent = 2;
inline constexpr double kOtherGpuBusyP95 = 50;  // A4: while another GPU's p95 is above this [G]
// A4: where the job's processes cannot be matched on the GPUs, this much memory in use on an idle
// GPU is taken as a context held there: a CUDA context takes 250-500 MiB, an unused GPU a few MiB
// beside the driver's reserve [G].
inline constexpr double kContextMemoryBytes = 128.0 * 1024 * 1024;
// Share of idle time: high at 20 % as xprof; moderate from 10 %, not xprof's 5 %: xprof measures
// step time waiting for input exactly, while NVML's coarse windows read a GPU-bound job at 90-100 %.
inline constexpr double kIdleModerate = 0.10, kIdleHigh = 0.20;  // [P: xprof 20 %; G: 10 %]
inline constexpr double kCoOccur = 0.50;                  // share of idle ticks with the cause present [G/P: SageMaker]
inline constexpr double kSaturatedCores = 0.90;           // a process at >= 0.9 cores is saturated [P: SageMaker]
inline constexpr double kWorkersRunnable = 0.75;          // or this share of workers runnable [G]
inline constexpr double kHostSaturatedPercent = 90;       // [P: SageMaker CPUBottleneck]
inline constexpr double kWorkersPerCpuMin = 0.70;         // [P: SageMaker Dataloader]
inline constexpr double kPsiIoPercent = 20;               // [G]
inline constexpr double kBlockedProcesses = 0.5;          // mean processes in D state [G]
inline constexpr double kNetRxBytesPerS = 100e6;          // [G]
inline constexpr double kDiskQuietBytesPerS = 1e6;        // [G]
inline constexpr double kRqWaitFraction = 0.20;           // [G]
inline constexpr double kStealPercent = 5;                // [G]
inline constexpr double kPsiMemoryPercent = 10;           // [G]
inline constexpr double kGap_s = 0.5;                     // [N: Nsight GPU starvation]
inline constexpr double kBurstyP95 = 70, kBurstyP5 = 10;  // [P: SageMaker LowGPUUtilization]
inline constexpr double kBusyPercent = 80;                // [G]
inline constexpr double kSmIneffective = 50;              // [N: DCGM: < 0.5 likely ineffective]
inline constexpr double kLowPowerFraction = 0.40;         // without GPM, power as the SM proxy [G]
inline constexpr double kCommSm = 30, kCommBusy = 50, kCommLinkShare = 0.50, kCommTicks = 0.10;  // [P/G]
inline constexpr double kLinkSaturated = 0.70;   // D2: a direction at >= 70 % of the link's capacity [G]
inline constexpr double kStragglerClock = 0.90;  // D3: SM clock <= 90 % of the peers' median [G]
inline constexpr double kStragglerPower = 0.80;  // D3: or power <= 80 % of the peers' at the same work [G]
inline constexpr double kSameWorkPoints = 10;    // D3: "the same work": utilization within 10 points [G]
inline constexpr double kStragglerReason = 0.20, kPeersReasonMax = 0.05;  // D3: a reason there, not elsewhere [G]
inline constexpr double kCopyRxShare = 0.60, kCopyTxShareMax = 0.20;      // [G]
inline constexpr double kDramBound = 60, kTensorLow = 20;                 // [N/G]
inline constexpr double kSmBound = 80, kTensorUsed = 30;                  // [N/G]
inline constexpr double kSmTensorless = 50, kTensorNone = 5;              // [G]
inline constexpr double kOccupancySmBusy = 80, kOccupancyLow = 20, kOccupancyDramLow = 30;  // [G]
inline constexpr double kGpuBoundBusy = 90, kGpuBoundPower = 0.60;                          // without GPM [G]
inline constexpr double kMemoryFull = 0.90;                                                 // [P: TB plugin]
inline constexpr double kUnderP95 = 70;                                                     // [P: SageMaker BatchSize]
inline constexpr double kPowerCapTicks = 0.20, kClockFraction = 0.90;                       // [G]
inline constexpr double kProviderLimit = 0.95;  // enforced < 95 % of default [G]
inline constexpr double kThermalTicks = 0.05;   // [G]
inline constexpr double kSeedPeakPercent = 90;  // the seed articles' trial-run test
inline constexpr double kShortWindow_s = 60;    // [G]
inline constexpr double kHostCpuBound = 0.80;   // mean runnable processes [G]
inline constexpr double kHostIdleCores = 0.05;  // [G]
inline constexpr double kHostBlocked = 0.30;    // mean processes in D state [G]
}  // namespace run_rule

// What the rules read.
struct RunEvidence {
    WindowView window;
    const std::vector<RunPoint>* all = nullptr;
    std::vector<GpuRunSummary> gpus;
    HostRunSummary host;
    double window_s = 0;
    bool gpus_visible = false;
    // Why a signal was not measured ("gpu3.processes" -> reason); null when not known.
    const std::map<std::string, std::string>* absent = nullptr;
};

struct RuleDef {
    const char* id;
    const char* title;
    const char* signals;
    const char* threshold;
    const char* source;  // with its tag [N]/[P]/[G]
    std::optional<RuleFinding> (*judge)(const RunEvidence&);
};

// Every rule, in table order (the order `others` are listed in).
const std::vector<RuleDef>& run_rules();
// The ids whose first firing one is the primary verdict.
const std::vector<std::string>& primary_order();
// Runs every rule.
Diagnosis diagnose(const RunEvidence& e);

}  // namespace gpuvet
