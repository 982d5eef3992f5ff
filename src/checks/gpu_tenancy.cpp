#include "checks/gpu_tenancy.hpp"

#include <unistd.h>


#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "checks/gpu_measurement.hpp"
#include "gpu/device/nvml_backend.hpp"
#include "order/order.hpp"

namespace gpuvet {

namespace {

const char* const kSource = "NVIDIA nvidia-smi documentation (compute mode, MIG, vGPU); gpuvet rule: a rented GPU is used by no one else";

const char* const kBusySource =
    "nvml.h nvmlUtilization_t (share of the last 1/6-1 s period a kernel ran); gpuvet rule: an idle GPU reads 0%, "
    "monitoring agents a few %";

std::string mib(std::uint64_t b) { return format_bytes(double(b)); }

// The run's device backend, read at 10 Hz: 0.5 s in the
// quick tier, 1 s standard, 2 s full. Several NVML sample periods (1/6 s to 1 s) per window.
std::map<int, IdleUtilization> sample_with_nvml(CheckContext& ctx, const std::vector<int>& gpus) {
    if (ctx.progress) ctx.progress->update("reading GPU utilization while idle");
    int count = measure::by_tier(ctx, 5, 10, 20);
    return sample_idle_utilization(&NvmlBackend::shared(), gpus, count, std::chrono::milliseconds(100), ctx.stop);
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
    auto finding = [&](Verdict fv, std::string text) { f.add(fv, std::move(text)); };
    const std::string label = gpu_label(g, spec);

    // Other processes. Inside a container NVML reports host PIDs: a PID missing from our /proc is
    // still someone else's.
    int foreign_compute = 0, foreign_graphics = 0;
    std::uint64_t foreign_bytes = 0;
    bool foreign_bytes_known = true;
    for (const GpuProcess& p : g.processes) {
        if (p.pid == self_pid_) continue;
        (p.type == "graphics" ? foreign_graphics : foreign_compute)++;
        if (p.used_memory_bytes) foreign_bytes += *p.used_memory_bytes;
        else foreign_bytes_known = false;
        std::string who = "process " + std::to_string(p.pid) + (p.name.empty() ? " (not visible here: another container or the host)" : " (" + p.name + ")");
        std::string mem = p.used_memory_bytes ? " holds " + mib(*p.used_memory_bytes) : "";
        r.details.push_back(who + mem + " [" + (p.type.empty() ? "compute" : p.type) + "]");
    }
    if (!g.processes_absent_reason.empty()) {
        r.measurements.push_back(Measurement::absent("foreign_processes", "Other processes", "count", g.processes_absent_reason));
    } else {
        Reference ref;
        ref.fail_above = 0;
        ref.expected_text = "none";
        ref.source = kSource;
        r.measurements.push_back(Measurement::number("foreign_processes", "Other processes", foreign_compute + foreign_graphics, "count").against(ref));
        if (foreign_compute > 0)
            finding(Verdict::Fail, std::to_string(foreign_compute) + " other compute process" + (foreign_compute > 1 ? "es" : "") +
                                       " on the GPU" + (foreign_bytes_known ? " holding " + mib(foreign_bytes) : "") +
                                       ": another tenant or a leftover job shares it");
        else if (foreign_graphics > 0)
            finding(Verdict::Warn, std::to_string(foreign_graphics) + " graphics process(es) (a display server?) use the GPU");
    }

    if (g.memory_used_bytes) {
        Reference ref;
        ref.warn_above = double(kIdleMemoryUsedBytes) / double(1ull << 30);
        ref.source = "gpuvet rule: an idle GPU's driver baseline stays well under 1 GiB";
        r.measurements.push_back(Measurement::number("memory_used_gib", "Memory in use", double(*g.memory_used_bytes) / double(1ull << 30), "GiB").against(ref));
        bool nobody = g.processes_absent_reason.empty() && foreign_compute + foreign_graphics == 0;
        if (nobody && *g.memory_used_bytes > kIdleMemoryUsedBytes)
            finding(Verdict::Warn, mib(*g.memory_used_bytes) + " of memory in use by processes not visible here: another container or VM?");
    } else {
        r.measurements.push_back(Measurement::absent("memory_used_gib", "Memory in use", "GiB", g.memory_used_bytes.absent_reason));
    }

    bool idle_seen = false;
    // Busy while no process shows: the tenant NVML cannot list (another container or VM), or one
    // using too little memory for the rule above. With a visible process its finding covers it.
    {
        auto it = idle_.find(g.index);
        IdleUtilization none{{}, "not sampled"};
        const IdleUtilization& u = it != idle_.end() ? it->second : none;
        bool list_read = g.processes_absent_reason.empty();
        IdleUtilizationJudgement j = judge_idle_utilization(u.samples_pct, foreign_compute + foreign_graphics);
        if (j.mean_pct) {
            Reference mean_ref;
            mean_ref.warn_above = kIdleBusyMeanWarnPct;
            mean_ref.fail_above = kIdleBusyMeanFailPct;
            mean_ref.expected_text = "0% (no process of ours runs yet)";
            mean_ref.source = kBusySource;
            Reference max_ref;
            max_ref.warn_above = kIdleBusyMaxWarnPct;
            max_ref.source = kBusySource;
            r.measurements.push_back(Measurement::number("idle_utilization_mean_pct", "Idle utilization, mean", *j.mean_pct, "%").against(mean_ref));
            r.measurements.push_back(Measurement::number("idle_utilization_max_pct", "Idle utilization, max", *j.max_pct, "%").against(max_ref));
        } else {
            r.measurements.push_back(Measurement::absent("idle_utilization_mean_pct", "Idle utilization, mean", "%", u.absent_reason));
            r.measurements.push_back(Measurement::absent("idle_utilization_max_pct", "Idle utilization, max", "%", u.absent_reason));
        }
        if (j.verdict != Verdict::Pass)
            finding(j.verdict, j.finding + (list_read ? "" : " (the process list could not be read)"));
        idle_seen = j.mean_pct.has_value();
    }

    if (g.compute_mode) {
        Reference ref;
        ref.expected_text = "Default";
        ref.source = kSource;
        r.measurements.push_back(Measurement::textual("compute_mode", "Compute mode", *g.compute_mode).against(ref));
        const std::string& m = *g.compute_mode;
        if (m == "Prohibited")
            finding(Verdict::Fail, "compute mode is Prohibited: no process may create a CUDA context on this GPU");
        else if (m != "Default")
            finding(Verdict::Warn, "compute mode is " + m + ": only one process may use the GPU at a time, so multi-process jobs and tools fail");
    } else {
        r.measurements.push_back(Measurement::absent("compute_mode", "Compute mode", "", g.compute_mode.absent_reason));
    }

    const bool mig_expected = mig_expected_;
    if (g.mig_enabled) {
        Reference ref;
        ref.expected_text = mig_expected ? "enabled (ordered)" : "disabled";
        ref.source = kSource;
        r.measurements.push_back(Measurement::textual("mig_mode", "MIG mode", *g.mig_enabled ? "enabled" : "disabled").against(ref));
        if (*g.mig_enabled)
            finding(mig_expected ? Verdict::Warn : Verdict::Fail,
                    std::string("MIG is enabled: the GPU is sliced into instances, each with a fraction of the SMs and memory") +
                        (mig_expected ? " (as ordered; whole-GPU figures do not apply)" : ", which the order did not ask for"));
    } else {
        r.measurements.push_back(Measurement::absent("mig_mode", "MIG mode", "", g.mig_enabled.absent_reason));
    }

    if (g.virtualization_mode) {
        r.measurements.push_back(Measurement::textual("virtualization_mode", "Virtualization mode", *g.virtualization_mode));
        const std::string& m = *g.virtualization_mode;
        if (m == "vGPU")
            finding(Verdict::Warn, "this is a virtual GPU (vGPU): it may be time-shared with other virtual machines");
        else if (m == "Host vGPU")
            finding(Verdict::Warn, "this GPU is set up to be shared as vGPUs by a hypervisor");
    } else {
        r.measurements.push_back(Measurement::absent("virtualization_mode", "Virtualization mode", "", g.virtualization_mode.absent_reason));
    }

    f.apply(r, label, label + " is ours alone: no other process" + (idle_seen ? ", no load before ours" : "") +
                          ", default compute mode, no MIG or vGPU slicing.");
    return r;
}

}  // namespace gpuvet
