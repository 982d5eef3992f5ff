#include "checks/gpu_memory_bandwidth_judge.hpp"

#include <algorithm>
#include <optional>

#include "checks/gpu_measurement.hpp"
#include "checks/gpu_memory_bandwidth.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet::measure {

namespace {

// The datasheet bandwidth, when the spec has one.
std::optional<double> spec_gbps(const GpuSpec* sp) {
    if (sp && sp->memory_bandwidth_gbps && *sp->memory_bandwidth_gbps > 0) return *sp->memory_bandwidth_gbps;
    return std::nullopt;
}

// STREAM reports copy and triad; they carry the verdict.
bool graded(const StreamOpRate& op) { return op.name == "copy" || op.name == "triad"; }

const StreamOpRate* op_named(const StreamRun& run, std::string_view name) {
    for (const auto& op : run.ops)
        if (op.name == name) return &op;
    return nullptr;
}

}  // namespace

std::vector<Measurement> stream_rate_measurements(const StreamRun& run, const GpuSpec* spec) {
    std::vector<Measurement> out;
    const std::optional<double> sg = spec_gbps(spec);
    for (const StreamOpRate& op : run.ops) {
        Measurement meas = Measurement::number(op.key, op.label, op.gbps, "GB/s").on_gpu(run.gpu);
        if (sg)
            meas.against(graded(op) ? of_spec(*sg, kMemExpected, kMemWarn, kMemFail,
                                              datasheet_source(*spec) + "; healthy 83-93% of spec (REFERENCES.md)")
                                    : Reference{*sg, kMemExpected, {}, {}, {}, {}, {}, datasheet_source(*spec)});
        out.push_back(std::move(meas));
    }
    return out;
}

void judge_stream(const StreamRun& run, const GpuSpec* spec, CheckResult& r) {
    r.verdict = Verdict::Pass;
    r.measurements = stream_rate_measurements(run, spec);
    std::optional<double> worst_graded;
    for (std::size_t i = 0; i < run.ops.size(); ++i) {
        const StreamOpRate& op = run.ops[i];
        if (graded(op) && r.measurements[i].reference) {
            grade_into(r, r.measurements[i]);
            worst_graded = std::min(worst_graded.value_or(op.gbps), op.gbps);
        }
        if (op.wrong)
            r.findings.push_back({Verdict::Fail, op.name + ": " + std::to_string(op.wrong) + " wrong results", op.key});
    }
    r.measurements.push_back(
        Measurement::number("buffer_bytes", "Bytes per buffer", double(run.buffer_bytes), "bytes").on_gpu(run.gpu));
    r.measurements.push_back(
        Measurement::number("l2_cache_bytes", "L2 cache", double(run.l2_cache_bytes), "bytes").on_gpu(run.gpu));

    const StreamOpRate *copy = op_named(run, "copy"), *triad = op_named(run, "triad");
    std::string figures;
    for (const StreamOpRate* op : {copy, triad})
        if (op) figures += (figures.empty() ? "" : ", ") + op->name + " " + fixed(op->gbps, 0) + " GB/s";
    if (!r.findings.empty()) {  // a fast wrong answer is a failure, whatever the rate
        r.verdict = Verdict::Fail;
        r.summary = "wrong data in device memory: " + r.findings.front().text + " (" + figures + ")";
        r.details.push_back(
            "a fast wrong answer is a failure: check ECC counters (gpuvet inventory) and dmesg for Xid errors");
        return;
    }
    if (!copy || !triad) {  // a run a stop cut short is not judged on speed
        r.verdict = Verdict::Skip;
        r.summary = "copy and triad were not both measured; no verdict";
        return;
    }
    const std::optional<double> sg = spec_gbps(spec);
    if (!sg) {
        r.verdict = Verdict::Pass;
        r.summary = figures + "; no datasheet bandwidth for this GPU, so no verdict on speed.";
        return;
    }
    std::string pct = fixed(100.0 * *worst_graded / *sg, 0) + "% of the " + fixed(*sg, 0) + " GB/s spec";
    if (r.verdict == Verdict::Pass) r.summary = figures + " (" + pct + "; healthy is 83-93%).";
    else
        r.summary = "memory bandwidth " + pct + ", below the " +
                    fixed(100 * (r.verdict == Verdict::Fail ? kMemFail : kMemWarn), 0) + "% floor: " + figures + ".";
}

}  // namespace gpuvet::measure
