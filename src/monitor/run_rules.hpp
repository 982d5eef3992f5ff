// The trial run's diagnosis: a documented rule table (docs/run.md, research in
// shared/docs/research/run-diagnosis.md §2) as data. Each row carries a rule whole: its id,
// family, title, severity, party, rank, signals, thresholds (text built from the constants
// below), the source of those thresholds and its judge, a pure function of the evidence that
// returns only the message and the action. Sources are tagged [N] an NVIDIA document, [P] a peer
// tool's default, [G] gpuvet's own, to calibrate.
// The primary verdict is the fired rule of the lowest rank; the others follow in table order.
//
// The rules live by family: run_rules_host.cpp (B: the host does not feed the GPU; H: host-only
// runs), run_rules_gpu.cpp (A: is the GPU used; C: fed unevenly; D: communication; E: what limits
// the GPU), run_rules_hardware.cpp (F: the server's hardware limits), run_rules_table.cpp (the
// table, the shared verdicts and the diagnosis).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/run_result.hpp"
#include "monitor/run_summary.hpp"
#include "monitor/usage_thresholds.hpp"

namespace gpuvet {

// Thresholds, named so messages and the docs table are built from the same numbers.
namespace run_rule {
inline constexpr double kIdleBusyPercent = 10;  // a tick below this is "GPU idle" [P: SageMaker]
// A4: a GPU whose mean utilization stays below this did no work ([P: SageMaker] asks for exactly 0;
// [G] allows a little for the driver's own housekeeping).
inline constexpr double kIdleGpuMeanPercent = 2;
inline constexpr double kOtherGpuBusyP95 = 50;  // A4: while another GPU's p95 is above this [G]
// A4: where the job's processes cannot be matched on the GPUs, this much memory in use on an idle
// GPU is taken as a context held there: a CUDA context takes 250-500 MiB, an unused GPU a few MiB
// beside the driver's reserve [G].
inline constexpr double kContextMemoryMib = 128;
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
inline constexpr double kWantsCpuCores = 0.1;             // B7: run-queue wait judged from this much CPU use [G]
inline constexpr double kStealPercent = 5;                // [G]
inline constexpr double kPsiMemoryPercent = 10;           // [G]
inline constexpr double kGap_s = 0.5;                     // [N: Nsight GPU starvation]
inline constexpr double kBurstyP95 = 70, kBurstyP5 = 10;  // [P: SageMaker LowGPUUtilization]
// C3 judges by kLaunchBoundBusyPercent and kSmIneffectivePercent (usage_thresholds.hpp).
inline constexpr double kLowPowerFraction = 0.40;  // without GPM, power as the SM proxy [G]
// C3: kernels this light leave DRAM below this, PCIe below this share of the link's capacity
// (both directions together; more is D1/E5 territory) and NVLink below this rate [G].
inline constexpr double kLaunchDramLow = 30, kLaunchPcieShare = 0.20, kLaunchNvlinkBytesPerS = 1e9;
inline constexpr double kCommSm = 30, kCommBusy = 50, kCommLinkShare = 0.50, kCommTicks = 0.10;  // [P/G]
inline constexpr double kLinkSaturated = 0.70;   // D2: a direction at >= 70 % of the link's capacity [G]
inline constexpr double kStragglerClock = 0.90;  // D3: SM clock <= 90 % of the peers' median [G]
inline constexpr double kStragglerPower = 0.80;  // D3: or power <= 80 % of the peers' at the same work [G]
inline constexpr double kSameWorkPoints = 10;    // D3: "the same work": utilization within 10 points [G]
inline constexpr double kStragglerReason = 0.20, kPeersReasonMax = 0.05;  // D3: a reason there, not elsewhere [G]
inline constexpr double kCopyRxShare = 0.60, kCopyTxShareMax = 0.20;      // [G]
inline constexpr double kDramBound = 60, kTensorLow = 20;                 // [N/G]
inline constexpr double kDramPracticalPeakPercent = 80;                   // E1 [N: DCGM]
inline constexpr double kSmBound = 80, kTensorUsed = 30;                  // [N/G]
inline constexpr double kSmTensorless = 50, kTensorNone = 5;              // [G]
inline constexpr double kOccupancySmBusy = 80, kOccupancyLow = 20, kOccupancyDramLow = 30;  // [G]
inline constexpr double kGpuBoundBusy = 90, kGpuBoundPower = 0.60;                          // without GPM [G]
// E6 judges by kMemoryFullFraction (usage_thresholds.hpp).
inline constexpr double kUnderP95 = 70;                                // [P: SageMaker BatchSize]
inline constexpr double kPowerCapTicks = 0.20, kClockFraction = 0.90;  // [G]
inline constexpr double kProviderLimit = 0.95;                         // enforced < 95 % of default [G]
inline constexpr double kThermalTicks = 0.05;                          // [G]
inline constexpr double kSeedPeakPercent = 90;                         // the seed articles' trial-run test
inline constexpr double kShortWindow_s = 60;                           // [G]
inline constexpr double kHostCpuBound = 0.80;                          // mean runnable processes [G]
inline constexpr double kHostIdleCores = 0.05;                         // [G]
inline constexpr double kHostBlocked = 0.30;                           // mean processes in D state [G]
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

// The B family's verdicts that other rules depend on (B3 on B1; C1 and C2 stand back when any of
// them explains the idle time), each with the share of the idle time its cause was present in.
struct InputVerdicts {
    double cpu_share = kUnmeasured;      // B1: workers or host CPU saturated
    double main_share = kUnmeasured;     // B2: the main process saturated, no workers
    double host_share = kUnmeasured;     // B4: every core busy
    double storage_share = kUnmeasured;  // B5: waiting on storage, workers not saturated
    bool cpu_preprocessing = false;      // B1
    bool main_process = false;           // B2
    bool host_cpu = false;               // B4
    bool storage = false;                // B5
    bool network = false;                // B6
    bool any() const { return cpu_preprocessing || main_process || host_cpu || storage || network; }
};

// What every rule would otherwise work out again: computed once per diagnosis.
struct SharedVerdicts {
    // The GPUs the job used: busy at some tick, or holding one of the job's processes, less the
    // ones A4 names (idle while the others worked), so one unused GPU does not make the job look
    // input-bound.
    std::vector<std::size_t> job;
    double idle_share = kUnmeasured;  // the job's GPUs' mean idle fraction over the window
    bool host_only = false;           // no GPU visible, or none used: the H rules judge
    InputVerdicts input;
};

// The families, in the order of docs/run.md.
enum class RuleFamily {
    kGpuUse,         // A: is the GPU used at all
    kInput,          // B: the host does not feed the GPU
    kFeed,           // C: the GPU is fed unevenly, or by a slow host thread
    kCommunication,  // D
    kGpuLimit,       // E: what the GPU itself is limited by
    kHardware,       // F: the server's hardware or the provider's limits
    kHostOnly,       // H: host-only runs
};

// What a judge says when its rule fires. Severity and party are the row's unless the measure
// decides them (B1's severity grows with the idle share; B7 and E5 name two different causes).
struct RuleVerdict {
    std::string message;
    std::string action;
    std::optional<RuleSeverity> severity;
    std::optional<RuleParty> party;
};

using RuleJudge = std::optional<RuleVerdict> (*)(const RunEvidence&, const SharedVerdicts&);

struct RuleDef {
    std::string id;
    RuleFamily family;
    std::string title;
    RuleSeverity severity;
    RuleParty party;
    int rank;  // the primary verdict is the fired rule of the lowest rank
    std::string signals;
    std::string threshold;  // built from run_rule's constants
    std::string source;     // with its tag [N]/[P]/[G]
    RuleJudge judge;
};

// Every rule, in table order (the order `others` are listed in).
const std::vector<RuleDef>& run_rules();
// The row of `id`; null for an id no rule has.
const RuleDef* run_rule_of(std::string_view id);
// The ids by rank: the first that fired is the primary verdict.
std::vector<std::string> primary_order();
// The rule table as docs/run.md prints it (a test keeps the two the same).
std::string run_rules_markdown();
// What every rule reads beside the evidence, computed once.
SharedVerdicts shared_verdicts(const RunEvidence& e);
// Runs every rule.
Diagnosis diagnose(const RunEvidence& e);

}  // namespace gpuvet
