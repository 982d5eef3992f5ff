// host.memory's STREAM part, judged: the four kernels' rates against the DIMMs' theoretical rate
// (only triad graded), the run's shape, and the sentence that explains the verdict. Pure: the
// check measures, these functions judge.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "checks/host_memory.hpp"
#include "core/result.hpp"
#include "host/stream.hpp"

namespace gpuvet {

// What one STREAM run measured, and how it ran.
struct StreamRun {
    StreamResult result;
    int repeats = 5;             // best of this many
    std::size_t cpus_used = 0;   // threads planned, one per CPU
    std::size_t numa_nodes = 1;  // nodes the threads were spread over (1 without NUMA information)
};

// The host figures the verdict depends on.
struct StreamHost {
    std::optional<std::uint64_t> memory_total_bytes;
    std::optional<int> cpu_threads;  // CPUs of the host: fewer used means the triad is not graded
};

// The references of copy/scale/add (shown against the rate, ungraded) and of triad (WARN below
// kStreamWarnFraction of the theoretical rate when STREAM used every CPU).
struct StreamReferences {
    Reference kernels;
    Reference triad;
    bool all_cpus = true;
};
StreamReferences stream_references(const StreamRun& run, const StreamHost& host, const DimmFindings& dimms);

// The four kernels absent with `why`, the result SKIP: bandwidth was not measured.
void stream_not_measured(CheckResult& r, const std::string& why);

// Adds the STREAM figures to r and sets its verdict and summary: FAIL when the results were
// wrong, WARN when triad is below its floor or the DIMMs warn, else r's verdict stays.
void judge_stream(CheckResult& r, const StreamRun& run, const StreamHost& host, const DimmFindings& dimms);

}  // namespace gpuvet
