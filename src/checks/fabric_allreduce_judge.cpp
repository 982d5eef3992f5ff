#include "checks/fabric_allreduce_judge.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/strings.hpp"

namespace gpuvet::fabric_allreduce {

double per_nic_busbw_gbps(double nic_gbitps) {
    if (nic_gbitps == 100) return 12;
    if (nic_gbitps == 200) return 24;
    if (nic_gbitps == 400) return 47;
    return 0.94 * nic_gbitps / 8;
}

std::string per_nic_source(double nic_gbitps) {
    if (nic_gbitps == 100 || nic_gbitps == 200)
        return "NCCL all-reduce busbw per " + format_number(nic_gbitps) +
               "G NIC at large sizes (sjeaugey, NVIDIA/nccl-tests#119)";
    if (nic_gbitps == 400) return "NCCL all-reduce busbw per 400G NDR NIC, 46-48 GB/s (NVIDIA/nccl-tests#290, #267)";
    return "gpuvet's extrapolation: 94% of the " + format_number(nic_gbitps) +
           " Gbit/s line rate in bytes, the ratio of NVIDIA's published 100/200/400G figures";
}

int nics_in_use(const NodeFabric& n) { return n.gpus > 0 ? std::min(n.rdma_nics, n.gpus) : n.rdma_nics; }

namespace {

void add(CheckResult& r, Verdict v, std::string text, std::string about = {}) {
    r.verdict = worst(r.verdict, v);
    r.findings.emplace_back(v, std::move(text), std::move(about));
}

// A finding that names `node` as at fault.
void blame(Judged& j, const std::string& node, Verdict v, std::string text) {
    add(j.result, v, text);
    j.blamed.emplace_back(node, std::move(text));
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

const NodeFabric* node_of(const FabricRun& run, const std::string& name) {
    for (const NodeFabric& n : run.nodes)
        if (n.node == name) return &n;
    return nullptr;
}

// NICs per node x the per-NIC figure, over the nodes a communicator spans (a rail: one NIC).
std::optional<double> expected_gbps(const FabricRun& run, const Measured& m, std::string& source) {
    int nics = 1 << 30;
    double rate = 1e18;
    for (const std::string& name : m.nodes) {
        const NodeFabric* n = node_of(run, name);
        if (!n || n->rdma_nics <= 0 || !n->nic_gbitps) return std::nullopt;
        nics = std::min(nics, nics_in_use(*n));
        rate = std::min(rate, *n->nic_gbitps);
    }
    if (m.nodes.size() < 2) return std::nullopt;
    if (m.rail) nics = 1;
    source = std::to_string(nics) + (m.rail ? " NIC (the rail's)" : " NIC(s) in use per node (a GPU drives one)") +
             " x " + format_number(per_nic_busbw_gbps(rate)) + " GB/s: " + per_nic_source(rate) +
             "; PASS from 90% (nccl-tests' NCCL_TESTS_MIN_BW rule), FAIL below 67% (Azure's "
             "ND H100 v5 baseline: ~450 GB/s, out of service below 300)";
    return nics * per_nic_busbw_gbps(rate);
}

std::string what(const Measured& m) {
    if (m.rail) return "rail " + std::to_string(*m.rail) + " (GPU " + std::to_string(*m.rail) + " of every node)";
    if (m.nodes.size() == 2) return "pair " + join(m.nodes, "+");
    return "all " + std::to_string(m.nodes.size()) + " nodes";
}

std::string key_of(const Measured& m) {
    if (m.rail) return "rail" + std::to_string(*m.rail) + "_busbw_gbps";
    if (m.nodes.size() == 2) return "pair_" + join(m.nodes, "_") + "_busbw_gbps";
    return "busbw_gbps";
}

// "; its NICs: mlx5_1 on n1, n2, n3" for a rail, from host.fabric's GPU-NIC pairing.
std::string rail_nics_text(const FabricRun& run, const Measured& m) {
    if (!m.rail) return "";
    std::map<std::string, std::vector<std::string>> by_nic;
    for (const std::string& name : m.nodes)
        if (const NodeFabric* n = node_of(run, name);
            n && std::size_t(*m.rail) < n->rail_nics.size() && !n->rail_nics[std::size_t(*m.rail)].empty())
            by_nic[n->rail_nics[std::size_t(*m.rail)]].push_back(name);
    std::string s;
    for (auto& [nic, nodes] : by_nic) s += (s.empty() ? "" : "; ") + nic + " on " + join(nodes);
    return s.empty() ? "" : "; its NICs: " + s + ". Check those ports (host.fabric, ibstat) and cables";
}

// The figure with its band; true when it is below the band's PASS line.
bool grade_one(CheckResult& r, const FabricRun& run, const Measured& m, bool name_it) {
    std::string source;
    auto expected = expected_gbps(run, m, source);
    Measurement x = Measurement::number(key_of(m), "All-reduce busbw, " + what(m), m.busbw_gbps, "GB/s");
    if (m.wrong > 0)
        add(r, Verdict::Fail,
            what(m) + ": " + std::to_string(m.wrong) + " of " + std::to_string(m.checked) +
                " reduced elements are wrong: data is corrupted between nodes, whatever the speed",
            x.key);
    if (!expected) {
        r.measurements.push_back(x);
        return false;
    }
    Reference ref;
    ref.spec = *expected;
    ref.warn_below = kPassFraction * *expected;
    ref.fail_below = kWarnFraction * *expected;
    ref.source = source;
    r.measurements.push_back(x.against(ref));
    const Verdict v = grade(m.busbw_gbps, ref);
    if (v != Verdict::Pass && name_it)
        add(r, v,
            what(m) + " reaches " + format_number(m.busbw_gbps) + " GB/s busbw, " +
                format_number(100 * m.busbw_gbps / *expected, 3) + "% of the " + format_number(*expected) +
                " GB/s its fabric should give" + rail_nics_text(run, m),
            x.key);
    return v != Verdict::Pass;
}

// The node that every slow pair includes is the culprit, not the pairs.
void judge_pairs(Judged& j, const FabricRun& run) {
    CheckResult& r = j.result;
    std::vector<const Measured*> slow;
    for (const Measured& p : run.pairs)
        if (grade_one(r, run, p, false)) slow.push_back(&p);
    if (slow.empty()) return;
    std::map<std::string, int> in;
    for (const Measured* p : slow)
        for (const std::string& n : p->nodes) ++in[n];
    std::vector<std::string> common, pairs;
    for (auto& [n, k] : in)
        if (k == int(slow.size())) common.push_back(n);
    for (const Measured* p : slow) pairs.push_back(join(p->nodes, "+"));
    if (slow.size() >= 2 && common.size() == 1)
        blame(j, common[0], Verdict::Fail,
              "node " + common[0] + " is the slow one: every slow pair includes it (" + join(pairs) +
                  "), and the pairs without it are within the band. Fix: host.fabric and the RDMA write test on " +
                  common[0] + "'s NICs name the port");
    else if (slow.size() == 1)
        add(r, Verdict::Fail,
            "pair " + pairs[0] +
                " is slow, and it alone cannot say which of its nodes is at fault: pair each with "
                "a third node");
    else
        add(r, Verdict::Fail,
            "slow pairs " + join(pairs) +
                " with no node common to all: more than one node or link is slow; pair each with a node known "
                "to be good to tell which");
}

// "; host.fabric on n1: no verbs device in /dev/infiniband" when the node's reading names a cause.
std::string hints_text(const NodeFabric& n) {
    return n.hints.empty() ? std::string() : "; host.fabric on " + n.node + ": " + join(n.hints, "; ");
}

// Sockets where RDMA NICs exist, channels without GPUDirect RDMA, NICs left unused: from NCCL's log.
void judge_node_log(Judged& j, const NodeFabric& n) {
    if (n.rdma_nics <= 0) return;
    bool socket = false, no_plugin = false;
    int net_channels = 0, without_gdr = 0;
    std::set<std::string> used, gdr_off;
    for (const NcclLog& log : n.logs) {
        socket = socket || (log.network && *log.network == "Socket");
        no_plugin = no_plugin || log.no_net_plugin;
        for (const NcclNic& nic : log.nics) used.insert(nic.name);
        for (const std::string& h : log.gdr_disabled) gdr_off.insert(h);
        for (const NcclChannel& c : log.channels) {
            if (!c.network()) continue;
            socket = socket || c.socket();
            ++net_channels;
            without_gdr += !c.gdr();
        }
    }
    if (no_plugin)
        blame(j, n.node, Verdict::Fail,
              "NCCL on node " + n.node +
                  " could not initialise its RDMA network (\"Failed to initialize any NET "
                  "plugin\"), as asked instead of falling back to TCP: a job there would have run over sockets" +
                  (n.hints.empty() ? ". Causes: /dev/infiniband not in the container, libibverbs missing, "
                                     "NCCL_IB_DISABLE set"
                                   : hints_text(n)));
    if (socket)
        blame(j, n.node, Verdict::Fail,
              "NCCL used sockets on a fabric with RDMA NICs: node " + n.node + " has " + std::to_string(n.rdma_nics) +
                  " RDMA NIC(s), and its inter-node traffic went over TCP (NET/Socket). Causes: /dev/infiniband not "
                  "in the container, libibverbs missing, NCCL_IB_DISABLE set" +
                  (n.hints.empty() ? "; host.fabric on " + n.node + " names it" : hints_text(n)));
    if (!socket && net_channels > 0 && without_gdr > 0)
        blame(j, n.node, Verdict::Fail,
              "no GPUDirect RDMA on node " + n.node + ": " + std::to_string(without_gdr) + " of " +
                  std::to_string(net_channels) + " inter-node channels lack /GDRDMA" +
                  (gdr_off.empty() ? std::string()
                                   : " (NCCL disabled it for " + join({gdr_off.begin(), gdr_off.end()}) + ")") +
                  ", so every byte bounces through host memory. Fix: `modprobe nvidia-peermem`, or DMA-BUF (the "
                  "open kernel module); host.fabric checks both");
    CheckResult& r = j.result;
    if (!socket && !used.empty() && int(used.size()) < nics_in_use(n))
        add(r, Verdict::Warn,
            "NCCL on node " + n.node + " used " + std::to_string(used.size()) + " of its " +
                std::to_string(n.rdma_nics) + " RDMA NICs (" + join({used.begin(), used.end()}) +
                "): the others carry nothing. Check NCCL_IB_HCA and the NICs' port state");
}

}  // namespace

CheckResult judge(const FabricRun& run) { return judge_run(run).result; }

Judged judge_run(const FabricRun& run) {
    Judged j;
    CheckResult& r = j.result;
    r.key = "fabric.allreduce";
    r.title = "All-reduce across nodes";
    r.verdict = Verdict::Pass;
    for (const NodeFabric& n : run.nodes) judge_node_log(j, n);
    if (run.all) grade_one(r, run, *run.all, true);
    for (const Measured& rail : run.rails) grade_one(r, run, rail, true);
    judge_pairs(j, run);
    if (!run.all && run.rails.empty() && run.pairs.empty()) {
        // A named cause (RDMA that did not initialise) is a FAIL; nothing measured and no cause, an ERROR.
        if (r.verdict != Verdict::Fail) r.verdict = worst(r.verdict, Verdict::Error);
        r.summary = "Nothing was measured across nodes" +
                    (r.findings.empty() ? std::string(".") : ": " + r.findings.front().text.substr(0, 160) + ".");
        return j;
    }
    int problems = 0;
    for (const Finding& f : r.findings) problems += f.verdict != Verdict::Pass;
    r.summary = (run.all ? "all-reduce across " + std::to_string(run.all->nodes.size()) +
                               " nodes: " + format_number(run.all->busbw_gbps) + " GB/s busbw"
                         : std::string("pairs and rails measured")) +
                (problems ? "; " + std::to_string(problems) + " finding(s), first: " +
                                r.findings.front().text.substr(0, r.findings.front().text.find(": ")) + "."
                          : "; within the band of its fabric.");
    return j;
}

}  // namespace gpuvet::fabric_allreduce
