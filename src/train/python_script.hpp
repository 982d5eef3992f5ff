// Runs one of the embedded Python scripts (src/train/*.py) with the chosen interpreter and turns
// what came back into a JSON result or a failure in words (hung, crashed, no result, garbage).
#pragma once
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "train/child_run.hpp"

namespace gpuvet {

enum class ScriptFailure { None, NotStarted, Hung, TimedOut, Interrupted, Crashed, NoResult, Garbage };

struct ScriptOutcome {
    ScriptFailure failure = ScriptFailure::None;
    nlohmann::json result;  // the result object when failure == None
    std::string message;    // the failure in words, with the child's last stderr lines
    std::vector<std::string> stderr_tail;
    double elapsed_s = 0;
};

struct ScriptRun {
    std::string python;             // the interpreter
    std::string_view script;        // the script's text (embedded)
    std::string name;               // "train_bench.py": the temporary file's name
    std::vector<std::string> args;  // after the script's path
    std::vector<std::pair<std::string, std::string>> env;
    double idle_timeout_s = 120;
    double total_timeout_s = 1800;
    const std::atomic<bool>* stop = nullptr;
    std::function<void(const std::string&)> on_progress;
};

ScriptOutcome run_script(const ScriptRun& run);
// The judging half, apart for the tests: what a child's outcome means.
ScriptOutcome interpret(const ChildOutcome& c, const ScriptRun& run);

std::string_view train_bench_script();
std::string_view software_probe_script();

}  // namespace gpuvet
