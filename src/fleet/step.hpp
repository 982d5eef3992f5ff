// Running one gpuvet subcommand on many Slurm nodes as one job step, and collecting what each node
// printed, over the step's own output (srun --label): no shared filesystem is assumed.
//
// On each node srun starts `gpuvet fleet agent`, which says hello (its version, node, host, job and
// step) on the first line, runs the subcommand with the same stdout, and closes with an end line
// carrying the subcommand's exit status. A node that has said no end line when its deadline passes
// (counted from its hello), or when a stop comes, did not finish: the step is cancelled (scancel)
// and that node is named. srun -v names each node as the step launches there, so a node whose
// gpuvet never starts is named too, and the step can be cancelled before any node has spoken.
//
// This is the layer fleet check and the multi-node tests build on: it knows Slurm, not checks.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

inline constexpr const char* kStepMark = "@gpuvet-step ";

struct StepRequest {
    std::vector<std::string> command;       // the subcommand on each node: {"check", "--quick", "--json"}
    std::vector<std::string> srun_options;  // which nodes and GPUs: -N 3, --partition p, --gpus-per-node 8
    int tasks_per_node = 1;                 // one agent per task: the multi-node all-reduce runs one per GPU
    // From the node's hello line (from the step's launch for a node that says none), so that a wait
    // for the allocation never counts: a node not done by then is named, the step cancelled.
    double deadline_s = 1800;
    std::vector<std::string> expected_nodes;  // when known beforehand: named even if none says hello
    std::string gpuvet;                       // gpuvet's path on the nodes
    std::string version;                      // what the nodes must run (the agent refuses another)
    std::string srun = "srun", scancel = "scancel", scontrol = "scontrol", squeue = "squeue";
    // Left out of srun's environment: the caller's own GPU selection would reach a node where Slurm
    // bound no GPU and hide that it did not (srun exports the caller's environment).
    std::vector<std::string> drop_env = {"CUDA_VISIBLE_DEVICES"};
};

// One task's output (one per node, or per GPU with tasks_per_node above 1).
struct NodeOutput {
    std::string task;  // srun's task id
    std::string node, host, version, job_id, step_id;
    bool finished = false;         // the end line came
    std::optional<int> exit_code;  // the subcommand's (128 + signal when a signal ended it)
    std::string refused;           // the agent did not run the subcommand: why
    std::string out;               // its stdout, the protocol lines left out
    std::string err;               // its stderr (the last 64 KiB)
};

struct StepOutcome {
    std::vector<NodeOutput> nodes;  // every node of the step, finished or not, in node order
    bool deadline_passed = false;
    bool stopped = false;  // the stop flag ended it
    std::optional<int> srun_status;
    std::string srun_messages;  // srun's own lines (allocation errors and the like)
    std::string job_id, step_id;
};

// Runs the step; `on_done` is called once for each node as soon as its end line arrives (so its
// report can be written and its text released), `stop` ends the step early. Throws a Runtime error
// only when srun cannot be started.
StepOutcome run_step(const StepRequest& req, const std::atomic<bool>& stop,
                     const std::function<void(NodeOutput&)>& on_done);

// "n2" before "n10": node names in the order people read them (digit runs compare as numbers).
bool node_name_less(const std::string& a, const std::string& b);

// `scontrol show hostnames LIST`: "n[1-3]" as n1 n2 n3. An Input error when Slurm refuses it.
std::vector<std::string> expand_hostlist(const std::string& list, const std::string& scontrol = "scontrol");

// The node side: prints the hello line, refuses when `expected_version` differs from `version`,
// runs `self` with `args` and prints the end line. Returns the subcommand's exit status.
int run_agent(const std::string& self, const std::vector<std::string>& args, const std::string& version,
              const std::string& expected_version);

}  // namespace gpuvet
