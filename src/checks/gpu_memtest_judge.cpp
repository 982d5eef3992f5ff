#include "checks/gpu_memtest_judge.hpp"

#include <cstdio>

#include "checks/gpu_measurement.hpp"
#include "specs/gpu_spec.hpp"
#include "core/units.hpp"

namespace gpuvet::measure {

namespace {

std::string hex(std::uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

std::string error_text(const MemtestError& e) {
    return "bit error at byte offset " + std::to_string(e.offset_bytes) + " of the memory tested (address " +
           hex(e.address) + "), pattern " + e.pattern + ": wrote " + hex(e.wrote) + ", read " + hex(e.read) +
           ", flipped bits " + hex(e.wrote ^ e.read);
}

void add_measurements(const MemtestRun& run, const GpuSpec* sp, CheckResult& r) {
    const int g = run.gpu;
    const double gib = double(run.tested_bytes) / kGiB;
    Measurement tm = Measurement::number("tested_gib", "Memory tested", gib, "GiB").on_gpu(g);
    if (sp && sp->memory_size_gib > 0) {
        Reference ref;
        ref.spec = sp->memory_size_gib;
        ref.warn_below = kTestedWarnFraction * sp->memory_size_gib;  // driver reserve + margin stay well under 15%
        ref.source = datasheet_source(*sp);
        tm.against(ref);
    }
    r.measurements.push_back(tm);
    r.measurements.push_back(
        Measurement::number("tested_bytes", "Bytes tested", double(run.tested_bytes), "bytes").on_gpu(g));
    r.measurements.push_back(Measurement::number("memory_total_bytes", "Memory total (" + run.runtime + ")",
                                                 double(run.memory_total_bytes), "bytes")
                                 .on_gpu(g));
    if (run.nvml_memory_total_bytes)
        r.measurements.push_back(Measurement::number("nvml_memory_total_bytes", "Memory total (" + run.management + ")",
                                                     double(*run.nvml_memory_total_bytes), "bytes")
                                     .on_gpu(g));
    r.measurements.push_back(Measurement::number("errors", "Memory errors", double(run.errors), "count").on_gpu(g));
    const double rounds = double(run.patterns) * double(run.passes);
    r.measurements.push_back(Measurement::number("patterns", "Patterns x passes", rounds, "count").on_gpu(g));
    if (run.ms_total > 0)  // each processed byte written once and read once
        r.measurements.push_back(Measurement::number("test_gbps", "Write + verify rate",
                                                     2.0 * double(run.processed_bytes) / (run.ms_total * 1e-3) / 1e9,
                                                     "GB/s")
                                     .on_gpu(g));
}

}  // namespace

void judge_memtest(const MemtestRun& run, const GpuSpec* sp, CheckResult& r) {
    r.verdict = Verdict::Pass;
    add_measurements(run, sp, r);
    const double gib = double(run.tested_bytes) / kGiB;
    std::string what = fixed(gib, 1) + " GiB tested with " + std::to_string(run.patterns) + " pattern(s) x " +
                       std::to_string(run.passes) + " pass(es)";
    if (run.errors) {
        r.verdict = Verdict::Fail;
        r.summary = std::to_string(run.errors) + " memory error(s) in " + what;
        if (!run.first_errors.empty()) r.summary += ": " + error_text(run.first_errors.front());
        for (const auto& e : run.first_errors) r.findings.push_back({Verdict::Fail, error_text(e), "errors"});
        if (run.interrupted)
            r.details.push_back(
                "interrupted before the whole memory was tested: the errors above were found before the stop");
        r.details.push_back(
            "a GPU with memory errors must be replaced or repaired: report it to the provider with this report");
        return;
    }
    if (run.interrupted) {  // no verdict on a test that did not cover the memory
        r.verdict = Verdict::Skip;
        r.summary = "interrupted before the whole memory was tested; no verdict";
        return;
    }
    grade_into(r, r.measurements.front());
    r.summary = r.verdict == Verdict::Pass
                    ? "no errors in " + what + "."
                    : "no errors, but only " + what + " of the " + fixed(sp->memory_size_gib, 0) +
                          " GiB sold: other processes hold memory, or the GPU has less";
}

}  // namespace gpuvet::measure
