// Runs a framework script as a child process that cannot outlive gpuvet: no stdin, its own process
// group (killed as a whole when it hangs, at Ctrl-C, and after it exits, so no worker it spawned
// stays), SIGKILL when gpuvet dies (PR_SET_PDEATHSIG), a watchdog on its heartbeat lines.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuvet {

// The child's stdout protocol: "GPUVET_PROGRESS <json>" lines feed the watchdog, one
// "GPUVET_RESULT <json>" line carries the result (src/train/*.py).
inline constexpr const char* kProgressMark = "GPUVET_PROGRESS ";
inline constexpr const char* kResultMark = "GPUVET_RESULT ";

struct ChildOptions {
    std::vector<std::string> argv;                         // argv[0]: the program's path
    std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) gpuvet's
    double idle_timeout_s = 120;                           // no heartbeat for this long: hung
    double total_timeout_s = 1800;                         // whatever the heartbeat
    const std::atomic<bool>* stop = nullptr;               // Ctrl-C / SIGTERM
    std::function<void(const std::string&)> on_progress;   // the JSON of each heartbeat
};

enum class ChildEnd { Exited, Signaled, Hung, TimedOut, Stopped, NotStarted };

struct ChildOutcome {
    ChildEnd end = ChildEnd::NotStarted;
    int exit_status = 0;                   // Exited
    int signal = 0;                        // Signaled
    std::optional<std::string> result;     // the text after kResultMark
    std::vector<std::string> stderr_tail;  // its last lines
    std::vector<std::string> stdout_tail;  // its last lines that are not protocol lines
    std::string start_error;               // NotStarted: why
    double elapsed_s = 0;
};

ChildOutcome run_child(const ChildOptions& o);

// "the last lines it wrote to stderr: ...": for error messages; empty when it wrote none.
std::string last_lines(const std::vector<std::string>& lines, std::size_t n = 6);

}  // namespace gpuvet
