// Two run reports of the same job (say, on two servers): which was faster, by how much, and why —
// the differences in verdicts, hardware limits and the key figures that explain the time.
// A pure function over two RunResults (read back by read_run_report); `gpuvet compare` prints it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/run_result.hpp"

namespace gpuvet {

// Wall times within 3 % are "about the same" (run-to-run noise of a training job) [G].
inline constexpr double kRunSameWithin = 0.03;

struct RunComparison {
    std::string label_a, label_b;
    bool same_command = false;
    double wall_a_s = kUnmeasured, wall_b_s = kUnmeasured;
    // How each job ended, as a shell gives it (128+N for signal N); none when it did not start.
    std::optional<int> exit_a, exit_b;
    std::string end_a, end_b;  // "exit 0", "killed by signal 9", "did not start"
    // Why the two runs cannot be ranked (a job failed, was killed or stopped); empty when they can.
    // A run that failed is never "faster": it stopped early.
    std::vector<std::string> not_comparable;
    std::optional<int> faster;         // 0: a, 1: b; none: about the same or unknown
    double speedup = kUnmeasured;      // slower wall / faster wall
    std::vector<std::string> reasons;  // why, most telling first
    struct Row {
        std::string metric, unit;
        double a = kUnmeasured, b = kUnmeasured;
    };
    std::vector<Row> rows;
};

// How a run's job ended, in words ("exit 1", "killed by signal 9", "did not start").
std::string job_end_words(const RunResult& r);

// labels: what to call each run (its --tag, else the file name).
RunComparison compare_runs(const RunResult& a, const RunResult& b, const std::string& label_a,
                           const std::string& label_b);

}  // namespace gpuvet
