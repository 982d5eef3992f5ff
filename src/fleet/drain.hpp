// Keeping bad nodes out of jobs through Slurm, with LBNL NHC's ownership rule: gpuvet drains with a
// reason that starts "gpuvet:", never touches a node drained for any other reason (an operator's),
// and returns to service only nodes whose reason is its own and that now pass.
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

// "gpuvet: " + what failed, on one line, at most kDrainReasonMaxChars.
std::string drain_reason(const std::string& what_failed);
// A failing node: drain it, unless an operator's drain reason is there (kept, said in the note).
NodeAction plan_drain(const SlurmNodeState& s, const std::string& reason);
// A passing node: resume it only when gpuvet drained it.
NodeAction plan_resume(const SlurmNodeState& s);

// The state of `nodes` from sinfo (one call); a Runtime error when sinfo fails.
std::vector<SlurmNodeState> query_node_states(const std::vector<std::string>& nodes,
                                              const std::string& sinfo = "sinfo");
// Parses `sinfo -h -N -o '%N|%T|%E'` output (a node listed once per partition is kept once).
std::vector<SlurmNodeState> parse_node_states(const std::string& text);
// Runs the action's command: empty on success, else scontrol's words.
std::string apply_action(const NodeAction& a);

}  // namespace gpuvet
