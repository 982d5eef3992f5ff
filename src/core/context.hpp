// What a check can see: the options every check shares, the spec database, the facts read once
// before any check ran, and the results of the earlier checks it declared (Check::reads). A check's
// own knobs reach it through its constructor (cli/registry.cpp). Checks append time series to the
// report through it; their results are the runner's to append.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

class SpecDb;
class RunFacts;  // checks/run_facts.hpp

enum class Tier { Quick, Standard, Full };
const char* to_string(Tier t);

// What every check may need; everything else is a constructor argument of the check that uses it.
struct RunOptions {
    Tier tier = Tier::Standard;
    std::filesystem::path root = "/";  // seam for /proc and /sys fixtures (GPUVET_ROOT)
    std::vector<int> gpus;             // --gpus as given (empty = all); RunFacts holds the selection
};

// The results of earlier checks, as one check may read them: only the keys it declared in
// Check::reads(), so that what depends on what is stated once and the runner can order it.
class PriorResults {
public:
    PriorResults() = default;
    PriorResults(const std::vector<CheckResult>* results, std::vector<std::string> readable)
        : results_(results), readable_(std::move(readable)) {}
    // The first result of check `key` (nullptr: it did not run). Reading an undeclared key is a
    // programming error (internal_error).
    const CheckResult* result(std::string_view key) const;
    // The value of measurement `measurement` of check `key`, when it was measured.
    std::optional<double> value(std::string_view key, std::string_view measurement) const;

private:
    const std::vector<CheckResult>* results_ = nullptr;
    std::vector<std::string> readable_;
};

// Progress of long work. TTY: a live line; otherwise a log line every few seconds.
class Progress {
public:
    virtual ~Progress() = default;
    virtual void begin(std::string_view key, std::string_view title) = 0;
    virtual void update(std::string_view line) = 0;  // rate-limited by the implementation
    // Several lines at once (one per GPU during a burn). Default: joined into one line.
    virtual void update_lines(const std::vector<std::string>& lines) {
        std::string joined;
        for (const auto& l : lines) joined += (joined.empty() ? "" : " | ") + l;
        update(joined);
    }
    virtual void end() = 0;
};

struct CheckContext {
    RunOptions options;
    const SpecDb* specs = nullptr;
    const RunFacts* facts = nullptr;  // machine, driver, inventory, selected GPUs, their SKUs
    Report* report = nullptr;         // the document being written: checks add series to it
    PriorResults prior;               // set by the runner for checks that declared reads()
    Progress* progress = nullptr;
    const std::atomic<bool>* stop = nullptr;  // set on Ctrl-C / SIGTERM
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

    bool stop_requested() const { return stop && stop->load(); }
    // Polled between bounded pieces of work (a copy, a batch of kernels) so that a check stops
    // within a second of the signal: throws Interrupted (core/error.hpp) once a stop was asked.
    void throw_if_stopped() const;
    double elapsed_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

}  // namespace gpuvet
