// Verdicts of a burn, as pure functions of what was measured: telemetry samples, the achieved
// throughput per batch, compute-error counts and the GPU's own thresholds. Each finding carries
// the numbers behind it. Rules (docs/checks.md, gpu.burn):
//   HW slowdown, HW/SW thermal slowdown, power brake            -> FAIL (SW power cap alone: normal)
//   peak temperature within 5 C of the slowdown threshold       -> WARN
//   peak memory temperature within 5 C of the memory threshold  -> WARN (information when unknown)
//   enforced power limit below the default                      -> WARN
//   last window's throughput > 10% below the first window's     -> WARN
//   > 10% below the median of identical peers (same SKU)        -> FAIL
//   any mismatch or NaN, new uncorrectable ECC, critical Xid    -> FAIL
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/stats.hpp"
#include "gpu/telemetry.hpp"

namespace gpuvet {

// Finding: core/result.hpp.

// What the load side measured on one GPU.
struct GpuBurnOutcome {
    int gpu = 0;
    std::string name;                         // "NVIDIA H100 80GB HBM3"
    std::string sku;                          // peers are GPUs with the same non-empty SKU
    std::optional<double> slowdown_temp_c;    // NVML slowdown threshold
    std::optional<double> memory_max_temp_c;  // NVML memory threshold (MEM_MAX: SW slowdown from there)
    // Where the two thresholds come from, as the references name them (the vendor's library).
    std::string slowdown_source = "NVML slowdown threshold of this GPU";
    std::string memory_max_source = "NVML memory slowdown threshold of this GPU";
    std::optional<double> default_power_limit_w;
    std::string load;                        // "gemm bf16", "fma fp32", "memory", ...
    std::vector<double> batch_t_s;           // end time of each batch, seconds since start
    std::vector<double> batch_throughput;    // achieved throughput of each batch, in throughput_unit
    std::string throughput_unit = "TFLOPS";  // "GB/s" for a pure memory load
    std::uint64_t results_compared = 0;      // results checked against the reference
    std::uint64_t mismatches = 0, nans = 0;
    bool lost = false;               // fell off the bus / context died
    std::string load_error;          // the load could not run (-> ERROR)
    double duration_s = 0;           // how long the load ran
    std::vector<std::string> notes;  // how the load was chosen (e.g. FMA: no cuBLASLt)
};

struct BurnInput {
    double planned_s = 0;
    bool interrupted = false;
    std::vector<GpuBurnOutcome> gpus;
    TelemetryData telemetry;
};

// ---- single rules (exposed for tests) -----------------------------------------------------
// Throttle reasons seen in the samples. FAIL per bad reason; SW power cap as Pass info.
std::vector<Finding> throttle_findings(const std::vector<TelemetrySample>& s);
std::optional<Finding> temperature_finding(const std::vector<TelemetrySample>& s, std::optional<double> slowdown_c);
std::optional<Finding> memory_temperature_finding(const std::vector<TelemetrySample>& s,
                                                  std::optional<double> memory_max_c);
std::optional<Finding> power_limit_finding(const std::vector<TelemetrySample>& s,
                                           std::optional<double> default_limit_w);
// Window = min(60 s, run / 3): a short run compares its first and last thirds.
double throughput_window_s(double run_s);
std::optional<Finding> throughput_drop_finding(const std::vector<double>& t_s, const std::vector<double>& v,
                                               std::string_view unit);
// One entry per GPU in `gpus` order: a FAIL finding or nullopt.
std::vector<std::optional<Finding>> peer_findings(const std::vector<GpuBurnOutcome>& gpus);
std::optional<Finding> correctness_finding(const GpuBurnOutcome& g);
std::optional<Finding> ecc_finding(const std::vector<TelemetrySample>& s);
std::vector<Finding> xid_findings(const std::vector<XidEvent>& xids, int gpu);
// The load itself: it could not run (ERROR), or the GPU was lost under it (FAIL).
std::vector<Finding> load_findings(const GpuBurnOutcome& g, bool telemetry_lost);

// ---- one GPU's result, from the rules above ------------------------------------------------
// `tel` is null when the GPU was not sampled; `peer` is its entry of peer_findings().
// Every finding, in the order the summary picks the worst from: errors, then the rest.
std::vector<Finding> gpu_findings(const GpuBurnOutcome& g, const GpuTelemetry* tel, const std::optional<Finding>& peer,
                                  const std::vector<XidEvent>& xids);
// The worst finding; with nothing measured, ERROR, or SKIP when a stop came first.
Verdict burn_verdict(const std::vector<Finding>& f, bool measured, bool interrupted);
// The figures behind the verdicts: throughput, peak temperatures, power, clocks, error counts.
std::vector<Measurement> burn_measurements(const GpuBurnOutcome& g, const GpuTelemetry* tel);
// The worst finding with the count of the others, else one line saying how the run went.
std::string burn_summary(const std::vector<Finding>& f, Verdict v, const GpuBurnOutcome& g,
                         const std::vector<TelemetrySample>& s, bool interrupted);

// One CheckResult per GPU, key "gpu.burn".
std::vector<CheckResult> judge_burn(const BurnInput& in);

}  // namespace gpuvet
