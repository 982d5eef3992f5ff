// Keeping bad nodes out of jobs through Slurm, with LBNL NHC's ownership rule: gpuvet drains with a
// reason that starts "gpuvet:", never touches a node drained for any other reason (an operator's),
// and returns to service only nodes whose reason is its own, when the run that would resume them
// ran the checks the reason names and they pass now.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

inline constexpr const char* kDrainPrefix = "gpuvet:";
inline constexpr std::size_t kDrainReasonMaxChars = 200;

struct SlurmNodeState {
    std::string node;
    std::string state;     // sinfo's %T: idle, mixed, allocated, drained, draining, down, ...
    std::string reason;    // sinfo's %E, empty when none
    bool drained() const;  // drained, draining, or drain in a compound state
    bool ours() const;     // the reason starts with "gpuvet:"
};

struct NodeAction {
    std::string node;
    std::vector<std::string> argv;  // the scontrol command; empty: nothing to do
    std::string note;               // why nothing is done, or what the command does
};

// gpuvet's reason: "gpuvet: " + what failed + " (checks: gpu.health,fleet.bf16_tflops)", on one
// line, at most kDrainReasonMaxChars; the text is shortened, never the list of causes (the keys
// that caused the drain), which is what a later resume is held to.
std::string drain_reason(const std::string& what_failed, const std::vector<std::string>& causes);
// The causes a gpuvet reason records. A reason without the list (an older gpuvet's) gives its first
// word when that is a check key ("gpuvet: gpu.health GPU 1 ..."), else none.
std::vector<std::string> drain_causes(const std::string& reason);
// A failing node: drain it, unless an operator's drain reason is there (kept, said in the note).
// gpuvet's own drain is renewed: its earlier causes stay in the reason unless this run cleared them.
NodeAction plan_drain(const SlurmNodeState& s, const std::string& what_failed, const std::vector<std::string>& causes,
                      const std::vector<std::string>& cleared);
// A passing node: resume it only when gpuvet drained it and every cause its reason records is in
// `cleared` (this run ran that check and it passed, or judged that figure against the fleet): a
// passive health check never resumes a node drained for GEMM, burn or an outlier.
NodeAction plan_resume(const SlurmNodeState& s, const std::vector<std::string>& cleared);

// The state of `nodes` from sinfo (one call, at most timeout_s); a Runtime error when sinfo fails.
std::vector<SlurmNodeState> query_node_states(const std::vector<std::string>& nodes, double timeout_s = 60);
// Parses `sinfo -h -N -o '%N|%T|%E'` output (a node listed once per partition is kept once).
std::vector<SlurmNodeState> parse_node_states(const std::string& text);
// Runs the action's command (at most timeout_s): empty on success, else scontrol's words.
std::string apply_action(const NodeAction& a, double timeout_s = 60);

}  // namespace gpuvet
