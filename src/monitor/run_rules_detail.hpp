// What the run rules' files share and nothing else includes: the words numbers are written in
// (messages and the docs table alike), the evidence helpers several families read, and each
// family's judges for the table (run_rules_table.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "monitor/run_rules.hpp"

namespace gpuvet::run_rule {

// ---- words -------------------------------------------------------------------------------------
std::string fmt(double v, int digits = 0);  // fixed digits, "n/a" when unmeasured
std::string num(double v);                  // as few digits as the value needs: 60, 0.5, 0.05
std::string pct(double fraction);           // a fraction with no decimals: "70 %"
std::string pct_num(double fraction);       // a fraction as few digits need: "70 %", "2.5 %"
std::string gbps(double bytes_per_s);       // "12.3 GB/s"
std::string mbps(double bytes_per_s);       // "12.3 MB/s"
std::string gpu_list(const std::vector<int>& gpus);

// ---- evidence ----------------------------------------------------------------------------------
// A GPU that did no work while another of the run's GPUs was busy (A4's GPUs).
bool idle_among_busy(const RunEvidence& e, const GpuRunSummary& g);
// The job's GPUs' mean utilization at a tick; unmeasured where none was read.
double tick_busy(const RunPoint& p, const std::vector<std::size_t>& job);

// How idle the job's GPUs were. NVML's utilization is the share of its sample period (1/6 to 1 s)
// in which a kernel ran, so sub-second input stalls show as partial utilization, not as 0 %: the
// idle share is the time-weighted mean of (100 - busy) %, and a host cause is weighed by how idle
// each tick was. Whole idle ticks (< kIdleBusyPercent) are what C1's gaps count.
struct Idle {
    const std::vector<std::size_t>& job;
    double operator()(const RunPoint& p) const;  // this tick's idle fraction
    bool whole_tick(const RunPoint& p) const;
};

// PCIe bytes/s per direction for a generation and width (specs/pcie: the one table of lane rates).
double pcie_capacity(double gen, double width);
inline double fact_or_unmeasured(const Fact<int>& f) { return f ? double(*f) : kUnmeasured; }
// The same at a tick's current link, the GPU's maximum where the tick did not read it.
double pcie_capacity_at(const GpuPoint& g, const RunGpuFacts& f);
// SM work low at this tick: SM activity when GPM reads it, else power below kLowPowerFraction of
// the limit.
bool low_sm(const GpuPoint& g, double sm_threshold);

// ---- the families' judges ----------------------------------------------------------------------
using Judged = std::optional<RuleVerdict>;
#define GPUVET_RUN_RULE(name) Judged name(const RunEvidence& e, const SharedVerdicts& s)
// A: run_rules_gpu.cpp
GPUVET_RUN_RULE(rule_a1);
GPUVET_RUN_RULE(rule_a3);
GPUVET_RUN_RULE(rule_a4);
// B, H: run_rules_host.cpp
InputVerdicts input_verdicts(const RunEvidence& e, const std::vector<std::size_t>& job, double idle_share);
GPUVET_RUN_RULE(rule_b1);
GPUVET_RUN_RULE(rule_b2);
GPUVET_RUN_RULE(rule_b3);
GPUVET_RUN_RULE(rule_b4);
GPUVET_RUN_RULE(rule_b5);
GPUVET_RUN_RULE(rule_b6);
GPUVET_RUN_RULE(rule_b7);
GPUVET_RUN_RULE(rule_b8);
GPUVET_RUN_RULE(rule_h1);
GPUVET_RUN_RULE(rule_h2);
GPUVET_RUN_RULE(rule_h3);
// C, D, E: run_rules_gpu.cpp
GPUVET_RUN_RULE(rule_c1);
GPUVET_RUN_RULE(rule_c2);
GPUVET_RUN_RULE(rule_c3);
GPUVET_RUN_RULE(rule_d1);
GPUVET_RUN_RULE(rule_d2);
GPUVET_RUN_RULE(rule_d3);
GPUVET_RUN_RULE(rule_e1);
GPUVET_RUN_RULE(rule_e2);
GPUVET_RUN_RULE(rule_e3);
GPUVET_RUN_RULE(rule_e4);
GPUVET_RUN_RULE(rule_e5);
GPUVET_RUN_RULE(rule_e6);
GPUVET_RUN_RULE(rule_e7);
// F: run_rules_hardware.cpp
GPUVET_RUN_RULE(rule_f1);
GPUVET_RUN_RULE(rule_f2);
GPUVET_RUN_RULE(rule_f3);
GPUVET_RUN_RULE(rule_f4);
#undef GPUVET_RUN_RULE

}  // namespace gpuvet::run_rule
