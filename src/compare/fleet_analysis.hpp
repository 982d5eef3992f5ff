// A fleet's verdict from its nodes' check reports (gpuvet fleet check, gpuvet compare --fleet).
//
// Each node is read into a small summary (FleetNodeInput: verdict, failed checks, its worst GPU per
// figure), so that ten thousand reports fit in memory. A node that sent no report, an unreadable
// one, or one of another GPU model is named on its own line and left out of the statistics: one bad
// node never hides the fleet.
//
// Outliers, per figure (throughputs and links: lower is worse). A node's value is its worst GPU
// (the minimum, as Azure's fleet rules take it). The centre is the median of a baseline: first the
// nodes that passed their own checks (SuperBench drops failing nodes from its baseline), then,
// round by round, the baseline's own outliers are dropped and the median taken again until none is
// left. Spread is the median absolute deviation (MAD), held to at least 1% of the median, so nodes
// that agree to within noise (MAD near 0) never flag each other. A node is an outlier when its
// modified z-score 0.6745·|x − median| / MAD is above 3.5 (Iglewicz and Hoaglin, 1993) and it lies
// more than 5% from the median (SuperBench's -5% rule). A low outlier fails the node; a high one is
// listed only. With fewer than 3 baseline nodes a figure has no fleet-relative rule.
//
// A GPU UUID that two nodes report is a finding on both (NO-GO): two Slurm nodes handing out the
// same GPU (two slurmd on one host whose gres.conf lists the same devices), or a report copied
// under another node's name.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/slurm_env.hpp"

namespace gpuvet {

inline constexpr double kOutlierModifiedZ = 3.5;
inline constexpr double kOutlierMinDeviation = 0.05;
inline constexpr double kOutlierMadFloor = 0.01;  // of the median
inline constexpr std::size_t kOutlierMinNodes = 3;

// One figure of a node: its worst GPU's value (or the box's), and the floor a healthy card of the
// class reaches (the check's warn bound), when the check states one.
struct FleetFigure {
    std::string metric, label, unit;
    std::optional<int> gpu;
    double value = 0;
    std::optional<double> floor;
};

struct FleetNodeInput {
    std::string name, path;
    std::string problem;  // set: no usable report (why), the node is ERROR
    std::string hostname, tool_version, gpu_model;
    std::vector<std::string> gpu_ids;     // "GPU 0 GPU-fa4e...", UUID or serial, in index order
    std::vector<std::string> gpu_uuids;   // the UUIDs the driver gave, "GPU-fa4e..." (GPU i at [i])
    std::vector<std::string> gpu_models;  // per GPU: its SKU key or name
    std::optional<SlurmContext> slurm;
    RunVerdict verdict = RunVerdict::CouldNotRun;
    int exit_code = 3;
    std::vector<std::string> failed;         // "gpu.health GPU 1 FAIL: ..."
    std::vector<std::string> failed_checks;  // the keys that FAILed (not ERROR), once each: "gpu.health"
    std::vector<std::string> passed_checks;  // keys that ran (PASS or WARN) and failed on no GPU
    std::vector<FleetFigure> worst;          // one per figure the node measured
    std::vector<std::string> drift;          // history.drift's WARN findings: the node against its own past
};

// The node's name (a file's stem, a Slurm node) and a problem's text are made visible_text: they
// come from outside and reach the terminal, the NHC line and Markdown.
FleetNodeInput summarise_node(std::string name, std::string path, const Report& r);
FleetNodeInput failed_node(std::string name, std::string path, std::string problem);

enum class NodeStatus { Go, NoGo, Error };
const char* to_string(NodeStatus s);  // GO, NO-GO, ERROR

struct FleetOutlier {
    std::string node;
    std::optional<int> gpu;
    std::string metric, label, unit;
    double value = 0, median = 0;
    double gap_fraction = 0;  // (value - median) / median
    double modified_z = 0;
    bool low = true;
};

struct FleetMetric {
    std::string id, label, unit;
    std::size_t samples = 0;         // nodes that measured it
    std::size_t baseline_nodes = 0;  // nodes the centre was taken over
    int rounds = 0;                  // baseline rounds until no outlier was left in it
    double median = 0, mad = 0, mad_used = 0, min = 0, max = 0;
};

struct FleetNode {
    FleetNodeInput in;
    NodeStatus status = NodeStatus::Error;
    std::optional<FleetFigure> worst_vs_floor;  // the figure nearest (or furthest below) its floor
    bool other_model = false;                   // its GPUs are not the fleet's model
    std::vector<std::string> shared_gpus;       // "GPU 0 GPU-fa4e... is also GPU 0 of n3"
};

// The fabric between the nodes (gpuvet fleet allreduce, fleet check --allreduce): the judged
// all-reduce across nodes, the whole job's sweep, what NCCL used on each node, and the nodes the
// judge named as at fault (NO-GO, with the finding).
struct FleetFabricNode {
    std::string node;
    int gpus = 0, rdma_nics = 0;
    std::optional<double> nic_gbitps;
    std::string network;            // NCCL's choice: "IB", "Socket"; "not initialised"; "" when no log said
    std::string nccl_net;           // what gpuvet asked for (NCCL_NET), "" when nothing
    std::vector<std::string> nics;  // the NICs NCCL opened
    int net_channels = 0, gdr_channels = 0;
    std::vector<std::string> hints;  // host.fabric's causes of a fallback
};
struct FleetFabricRow {
    std::uint64_t bytes = 0;
    double busbw_gbps = 0, algbw_gbps = 0;
    std::uint64_t checked = 0, wrong = 0;
};
// One RDMA write link between two nodes' NICs of a rail (the ib_write_bw class).
struct FleetRdmaLink {
    int rail = 0;
    std::string from_node, from_nic, to_node, to_nic;
    std::optional<double> gbps, expected_gbps;  // measured; the ports' data rate in bytes
    std::string memory, memory_why;             // "GPU" or "host", and why
    std::uint64_t verified_bytes = 0, wrong_bytes = 0;
    std::string problem;  // why there is no figure (an error, or a reason it was not measured)
};
struct FleetFabric {
    CheckResult result;  // fabric.allreduce (with the RDMA write links' figures and findings)
    std::vector<FleetFabricRow> sweep;
    std::vector<FleetFabricNode> nodes;
    std::vector<FleetRdmaLink> rdma;
    std::vector<std::pair<std::string, std::string>> blamed;  // node, the finding that names it
    // A node's figure for the fleet's outliers: the best all-reduce busbw of the pairs it is in
    // (a node with a bad link reaches the band in none of them).
    std::vector<std::pair<std::string, double>> node_busbw_gbps;
    std::string nccl;                // "libnccl.so.2 2.28.9"
    std::vector<std::string> notes;  // communicators that could not run
};
inline constexpr const char* kFabricMetric = "fabric_busbw_gbps";
inline constexpr const char* kFabricCheck = "fabric.allreduce";

struct Fleet {
    std::string gpu_model;  // the model most nodes have
    std::vector<FleetNode> nodes;
    std::vector<FleetMetric> metrics;
    std::vector<FleetOutlier> outliers;
    std::vector<std::string> notes;  // nodes not reached, a cancelled step, and the like
    std::optional<FleetFabric> fabric;
};

// With `fabric`: the nodes it blames are NO-GO (cause fabric.allreduce), the others have passed
// it when it passed, and each node's fabric figure joins the outlier figures.
Fleet analyse_fleet(std::vector<FleetNodeInput> nodes, std::optional<FleetFabric> fabric = std::nullopt);

// Why a NO-GO node is NO-GO, as the keys a drain records: the check keys that failed
// ("gpu.health"), "fleet.<figure id>" for a low outlier ("fleet.bf16_tflops"), "fleet.gpu_model"
// for another GPU model and "fleet.gpu_uuid" for a GPU another node also reported.
inline constexpr const char* kCauseGpuModel = "fleet.gpu_model";
inline constexpr const char* kCauseGpuUuid = "fleet.gpu_uuid";
std::vector<std::string> node_causes(const Fleet& f, const FleetNode& n);
// The causes this run has shown to be gone for the node: the checks it ran that passed, the
// figures the fleet judged (3 nodes or more) that the node measured without being a low outlier,
// the GPU model when 3 nodes or more were compared, the UUIDs when another node's were.
std::vector<std::string> node_cleared(const Fleet& f, const FleetNode& n);
// 0 every node GO; 1 a node NO-GO (a failed check, a low outlier, another GPU model) or the fabric
// failed; else 3 when a node did not report or the fabric could not be measured; 3 as well for an
// empty fleet.
int fleet_exit_code(const Fleet& f);
// What is wrong with a node, in words ("gpu.health GPU 1 FAIL: ...; low outlier: ..."); empty when GO.
std::vector<std::string> node_problems(const Fleet& f, const FleetNode& n);
// "node-07 | Healthy" or "node-07 | ERROR: gpuvet: gpu.health GPU 1 failed: ...; low outlier: ...".
std::string nhc_line(const Fleet& f, const FleetNode& n);

}  // namespace gpuvet
