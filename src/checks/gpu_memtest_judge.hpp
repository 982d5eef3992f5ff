// gpu.memtest's judge: bytes tested, error counts and the first errors' addresses, as measured,
// turned into the result's measurements, verdict, summary and findings. No GPU, no I/O.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct GpuSpec;

namespace measure {

// One word that did not read back as written.
struct MemtestError {
    std::uint64_t offset_bytes = 0;  // into the memory tested, chunks laid end to end
    std::uint64_t address = 0;       // device address
    std::string pattern;             // "walking ones"
    std::uint64_t wrote = 0, read = 0;
};

struct MemtestRun {
    int gpu = 0;
    std::uint64_t tested_bytes = 0;
    std::uint64_t memory_total_bytes = 0;                  // as the runtime (CUDA, HIP) reports it
    std::optional<std::uint64_t> nvml_memory_total_bytes;  // as the management library reports it
    std::string runtime = "CUDA", management = "NVML";     // which ones, for the labels
    int patterns = 0, passes = 0;
    std::uint64_t errors = 0;                // every mismatch the device counted
    std::vector<MemtestError> first_errors;  // the first few, with their addresses
    double ms_total = 0;                     // write + verify time over all chunks
    std::uint64_t processed_bytes = 0;       // written and verified in that time: a stop cuts it short
    bool interrupted = false;                // a stop ended the test early
};

// Memory tested below 85% of the memory sold: WARN.
inline constexpr double kTestedWarnFraction = 0.85;

// Measurements, verdict, summary, findings (one FAIL per recorded error) and advice. Any error
// fails, interrupted or not; an interrupted run without errors gets no verdict (SKIP).
void judge_memtest(const MemtestRun& run, const GpuSpec* spec, CheckResult& r);

}  // namespace measure
}  // namespace gpuvet
