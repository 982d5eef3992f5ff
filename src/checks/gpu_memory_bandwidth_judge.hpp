// gpu.memory_bandwidth's judge: STREAM rates and on-device verification counts, as measured, turned
// into the result's measurements, verdict, summary and findings. No GPU, no I/O.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct GpuSpec;

namespace measure {

// One STREAM operation as measured on one GPU.
struct StreamOpRate {
    std::string name;         // "copy", "read", "write", "triad"
    std::string key;          // "copy_gbps"
    std::string label;        // "Copy (read + write)"
    double gbps = 0;          // median over the timed samples
    std::uint64_t wrong = 0;  // results the device found wrong after the last launch
};

struct StreamRun {
    int gpu = 0;
    std::vector<StreamOpRate> ops;  // copy, read, write, triad; fewer when a stop cut the run
    std::uint64_t buffer_bytes = 0;
    std::uint64_t l2_cache_bytes = 0;
};

// The rate measurements of the operations in `run.ops`, each held against the datasheet
// bandwidth when `spec` has one: copy and triad carry the verdict, read and write show % of spec.
std::vector<Measurement> stream_rate_measurements(const StreamRun& run, const GpuSpec* spec);

// The whole judgement of a complete run (every operation measured): rates, buffer and L2 sizes,
// verdict, summary, findings (wrong data: FAIL) and advice. Below 80% of spec WARN, 70% FAIL.
void judge_stream(const StreamRun& run, const GpuSpec* spec, CheckResult& r);

}  // namespace measure
}  // namespace gpuvet
