#include "checks/gpu_tenancy.hpp"

#include <unistd.h>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "checks/gpu_measurement.hpp"
#include "order/order.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

const char* const kSource =
    "NVIDIA nvidia-smi documentation (compute mode, MIG, vGPU); gpuvet rule: a rented GPU is used by no one else";

const char* const kBusySource =
    "nvml.h nvmlUtilization_t (share of the last 1/6-1 s period a kernel ran); gpuvet rule: an idle GPU reads 0%, "
    "monitoring agents a few %";

std::string mib(std::uint64_t b) { return format_bytes(double(b)); }

// The run's device backend (NVIDIA's, AMD's or both), read at 10 Hz: 0.5 s in the
// quick tier, 1 s standard, 2 s full. Several NVML sample periods (1/6 s to 1 s) per window.
std::map<int, IdleUtilization> sample_with_nvml(CheckContext& ctx, const std::vector<int>& gpus) {
    if (ctx.progress) ctx.progress->update("reading GPU utilization while idle");
    int count = measure::by_tier(ctx, 5, 10, 20);
    return sample_idle_utilization(&ctx.facts->devices(), gpus, count, std::chrono::milliseconds(100), ctx.stop);
}

// Other processes on the GPU. Inside a container NVML reports host PIDs: a PID missing from our
// /proc is still someone else's.
struct ForeignProcesses {
    bool listed = false;  // the process list could be read
    int compute = 0, graphics = 0;
    std::uint64_t bytes = 0;  // memory they hold, when every process states it
    bool bytes_known = true;
    int total() const { return compute + graphics; }
};

ForeignProcesses foreign_processes(const GpuInfo& g, std::uint32_t self_pid, std::vector<std::string>& details) {
    ForeignProcesses p;
    p.listed = g.processes_absent_reason.empty();
    for (const GpuProcess& q : g.processes) {
        if (q.pid == self_pid) continue;
        (q.type == "graphics" ? p.graphics : p.compute)++;
        if (q.used_memory_bytes) p.bytes += *q.used_memory_bytes;
        else p.bytes_known = false;
        std::string who = "process " + std::to_string(q.pid) +
                          (q.name.empty() ? " (not visible here: another container or the host)" : " (" + q.name + ")");
        std::string mem = q.used_memory_bytes ? " holds " + mib(*q.used_memory_bytes) : "";
        details.push_back(who + mem + " [" + (q.type.empty() ? "compute" : q.type) + "]");
    }
    return p;
}

void judge_foreign_processes(const GpuInfo& g, const ForeignProcesses& p, CheckResult& r, Findings& f) {
    if (!p.listed) {
        r.measurements.push_back(
            Measurement::absent("foreign_processes", "Other processes", "count", g.processes_absent_reason));
        r.measurements.push_back(Measurement::absent("foreign_compute_processes", "Other compute processes", "count",
                                                     g.processes_absent_reason));
        return;
    }
    // Graded as judged below: any other process warns, another compute process fails.
    Reference any;
    any.warn_above = 0;
    any.expected_text = "none";
    any.source = kSource;
    Reference compute = any;
    compute.warn_above.reset();
    compute.fail_above = 0;
    r.measurements.push_back(
        Measurement::number("foreign_processes", "Other processes", p.total(), "count").against(any));
    r.measurements.push_back(
        Measurement::number("foreign_compute_processes", "Other compute processes", p.compute, "count")
            .against(compute));
    // A display server is a lesser matter than another compute tenant, so the verdict is by kind.
    if (p.compute > 0)
        f.add(Verdict::Fail, std::to_string(p.compute) + " other compute process" + (p.compute > 1 ? "es" : "") +
                                 " on the GPU" + (p.bytes_known ? " holding " + mib(p.bytes) : "") +
                                 ": another tenant or a leftover job shares it");
    else if (p.graphics > 0)
        f.add(Verdict::Warn, std::to_string(p.graphics) + " graphics process(es) (a display server?) use the GPU");
}

// Memory in use with no process listed: a tenant NVML cannot show. A listed process covers it.
void judge_memory_held(const GpuInfo& g, const ForeignProcesses& p, CheckResult& r, Findings& f) {
    if (!g.memory_used_bytes) {
        r.measurements.push_back(
            Measurement::absent("memory_used_gib", "Memory in use", "GiB", g.memory_used_bytes.absent_reason));
        return;
    }
    Reference ref;
    ref.warn_above = double(kIdleMemoryUsedBytes) / kGiB;
    ref.source = "gpuvet rule: an idle GPU's driver baseline stays well under 1 GiB";
    r.measurements.push_back(
        Measurement::number("memory_used_gib", "Memory in use", double(*g.memory_used_bytes) / kGiB, "GiB")
            .against(ref));
    if (p.listed && p.total() == 0 && *g.memory_used_bytes > kIdleMemoryUsedBytes)
        f.add(Verdict::Warn,
              mib(*g.memory_used_bytes) + " of memory in use by processes not visible here: another container or VM?");
}

// Busy while no process shows: the tenant NVML cannot list (another container or VM), or one
// using too little memory for the rule above. With a visible process its finding covers it.
// True when utilization was read.
bool judge_busy_while_idle(const IdleUtilization& u, const ForeignProcesses& p, CheckResult& r, Findings& f) {
    IdleUtilizationJudgement j = judge_idle_utilization(u.samples_percent, p.total());
    if (j.mean_percent) {
        Reference mean_ref;
        mean_ref.warn_above = kIdleBusyMeanWarnPercent;
        mean_ref.fail_above = kIdleBusyMeanFailPercent;
        mean_ref.expected_text = "0% (no process of ours runs yet)";
        mean_ref.source = kBusySource;
        Reference max_ref;
        max_ref.warn_above = kIdleBusyMaxWarnPercent;
        max_ref.source = kBusySource;
        r.measurements.push_back(
            Measurement::number("idle_utilization_mean_pct", "Idle utilization, mean", *j.mean_percent, "%")
                .against(mean_ref));
        r.measurements.push_back(
            Measurement::number("idle_utilization_max_pct", "Idle utilization, max", *j.max_percent, "%")
                .against(max_ref));
    } else {
        r.measurements.push_back(
            Measurement::absent("idle_utilization_mean_pct", "Idle utilization, mean", "%", u.absent_reason));
        r.measurements.push_back(
            Measurement::absent("idle_utilization_max_pct", "Idle utilization, max", "%", u.absent_reason));
    }
    if (j.verdict != Verdict::Pass)
        f.add(j.verdict, j.finding + (p.listed ? "" : " (the process list could not be read)"));
    return j.mean_percent.has_value();
}

void judge_compute_mode(const GpuInfo& g, CheckResult& r, Findings& f) {
    if (!g.compute_mode) {
        r.measurements.push_back(Measurement::absent("compute_mode", "Compute mode", "", g.compute_mode.absent_reason));
        return;
    }
    Reference ref;
    ref.expected_text = "Default";
    ref.source = kSource;
    r.measurements.push_back(Measurement::textual("compute_mode", "Compute mode", *g.compute_mode).against(ref));
    const std::string& m = *g.compute_mode;
    if (m == "Prohibited")
        f.add(Verdict::Fail, "compute mode is Prohibited: no process may create a CUDA context on this GPU");
    else if (m != "Default")
        f.add(Verdict::Warn, "compute mode is " + m +
                                 ": only one process may use the GPU at a time, so multi-process jobs and tools fail");
}

// MIG on is what was bought when the order asks for it (a WARN: whole-GPU figures do not apply).
void judge_mig(const GpuInfo& g, bool mig_expected, CheckResult& r, Findings& f) {
    if (!g.mig_enabled) {
        r.measurements.push_back(Measurement::absent("mig_mode", "MIG mode", "", g.mig_enabled.absent_reason));
        return;
    }
    Reference ref;
    ref.expected_text = mig_expected ? "enabled (ordered)" : "disabled";
    ref.source = kSource;
    r.measurements.push_back(
        Measurement::textual("mig_mode", "MIG mode", *g.mig_enabled ? "enabled" : "disabled").against(ref));
    if (*g.mig_enabled)
        f.add(
            mig_expected ? Verdict::Warn : Verdict::Fail,
            std::string(
                "MIG is enabled: the GPU is sliced into instances, each with a fraction of the SMs and memory") +
                (mig_expected ? " (as ordered; whole-GPU figures do not apply)" : ", which the order did not ask for"));
}

void judge_virtualization(const GpuInfo& g, CheckResult& r, Findings& f) {
    if (!g.virtualization_mode) {
        r.measurements.push_back(
            Measurement::absent("virtualization_mode", "Virtualization mode", "", g.virtualization_mode.absent_reason));
        return;
    }
    r.measurements.push_back(
        Measurement::textual("virtualization_mode", "Virtualization mode", *g.virtualization_mode));
    const std::string& m = *g.virtualization_mode;
    if (m == "vGPU")
        f.add(Verdict::Warn, "this is a virtual GPU (vGPU): it may be time-shared with other virtual machines");
    else if (m == "Host vGPU") f.add(Verdict::Warn, "this GPU is set up to be shared as vGPUs by a hypervisor");
}

const char* const kAmdPartitionSource =
    "AMD Instinct MI300 partitioning (amd-smi: compute SPX/DPX/QPX/CPX, memory NPS1/NPS4); gpuvet rule: a "
    "partitioned GPU is a slice unless the order asks for partitions";

// AMD's counterpart of MIG: compute partitions (each listed as a GPU) and memory partitions.
void judge_amd_partitions(const GpuInfo& g, bool partitions_expected, CheckResult& r, Findings& f) {
    auto add = [&](const char* key, const char* label, const Fact<std::string>& mode, const char* whole) {
        if (!mode) {
            r.measurements.push_back(Measurement::absent(key, label, "", mode.absent_reason));
            return;
        }
        Reference ref;
        ref.expected_text = partitions_expected ? std::string("partitioned (ordered)") : whole;
        ref.source = kAmdPartitionSource;
        r.measurements.push_back(Measurement::textual(key, label, *mode).against(ref));
    };
    add("compute_partition", "Compute partition", g.compute_partition, "SPX");
    add("memory_partition", "Memory partition", g.memory_partition, "NPS1");
    const bool compute = g.compute_partition && *g.compute_partition != "SPX";
    const bool memory = g.memory_partition && *g.memory_partition != "NPS1";
    if (!compute && !memory) return;
    std::string modes = g.compute_partition.value_or("?") + "/" + g.memory_partition.value_or("?");
    if (partitions_expected)
        f.add(Verdict::Warn, "the GPU is partitioned " + modes + " (as ordered; whole-GPU figures do not apply)");
    else if (compute)
        f.add(Verdict::Fail, "the GPU is partitioned " + modes +
                                 ": the driver lists each compute partition as a GPU with a share of the compute units"
                                 " and memory, which the order did not ask for (whole GPUs: amd-smi set "
                                 "--compute-partition SPX --memory-partition NPS1, then reload the driver)");
    else
        f.add(Verdict::Warn, "memory partition " + *g.memory_partition +
                                 ": the memory is split into NUMA domains (one GPU still sees all of it); NPS1 is "
                                 "the default for whole-GPU work");
}

}  // namespace

GpuTenancyCheck::GpuTenancyCheck(std::uint32_t self_pid, UtilizationSampler sampler, bool mig_expected)
    : mig_expected_(mig_expected),
      self_pid_(self_pid ? self_pid : std::uint32_t(::getpid())),
      sampler_(sampler ? std::move(sampler) : UtilizationSampler(sample_with_nvml)) {}

std::vector<CheckResult> GpuTenancyCheck::run(CheckContext& ctx) {
    // The GPUs InventoryCheck::run assesses; lost ones are not asked.
    std::vector<int> gpus;
    for (const GpuInfo* g : selected(ctx))
        if (!g->lost) gpus.push_back(g->index);
    idle_ = gpus.empty() ? std::map<int, IdleUtilization>{} : sampler_(ctx, gpus);
    return InventoryCheck::run(ctx);
}

CheckResult GpuTenancyCheck::assess(const GpuInfo& g, const GpuSpec* spec, CheckContext&) {
    CheckResult r;
    Findings f;
    const ForeignProcesses others = foreign_processes(g, self_pid_, r.details);
    judge_foreign_processes(g, others, r, f);
    judge_memory_held(g, others, r, f);
    auto it = idle_.find(g.index);
    const IdleUtilization none{{}, "not sampled"};
    const bool idle_seen = judge_busy_while_idle(it != idle_.end() ? it->second : none, others, r, f);
    const std::string label = gpu_label(g, spec);
    if (is_amd_gpu(g)) {
        judge_amd_partitions(g, mig_expected_, r, f);
        r.details.push_back(
            "not judged on AMD: compute mode, MIG and vGPU mode are NVIDIA settings (AMD's counterpart, the "
            "partition modes, is judged above)");
        f.apply(r, label,
                label + " is ours alone: no other KFD process" + (idle_seen ? ", no load before ours" : "") +
                    ", not partitioned.");
        return r;
    }
    judge_compute_mode(g, r, f);
    judge_mig(g, mig_expected_, r, f);
    judge_virtualization(g, r, f);
    f.apply(r, label,
            label + " is ours alone: no other process" + (idle_seen ? ", no load before ours" : "") +
                ", default compute mode, no MIG or vGPU slicing.");
    return r;
}

}  // namespace gpuvet
