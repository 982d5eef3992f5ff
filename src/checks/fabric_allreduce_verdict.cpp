#include "checks/fabric_allreduce_verdict.hpp"

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

namespace {

void add(CheckResult& r, Verdict v, std::string text, std::string about = {}) {
    r.verdict = worst(r.verdict, v);
    r.findings.emplace_back(v, std::move(text), std::move(about));
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
        nics = std::min(nics, n->rdma_nics);
        rate = std::min(rate, *n->nic_gbitps);
    }
    if (m.nodes.size() < 2) return std::nullopt;
    if (m.rail) nics = 1;
    source = std::to_string(nics) + " NIC(s) per node x " + format_number(per_nic_busbw_gbps(rate)) +
             " GB/s: " + per_nic_source(rate) +
             "; PASS from 90% (nccl-tests' NCCL_TESTS_MIN_BW rule), FAIL below 67% (Azure's "
             "ND H100 v5 baseline: ~450 GB/s, out of service below 300)";
    return nics * per_nic_busbw_gbps(rate);
}

std::string what(const Measured& m) {
    if (m.rail) return "rail " + std::to_string(*m.rail);
    if (m.nodes.size() == 2) return "pair " + join(m.nodes, "+");
    return "all " + std::to_string(m.nodes.size()) + " nodes";
}

std::string key_of(const Measured& m) {
    if (m.rail) return "rail" + std::to_string(*m.rail) + "_busbw_gbps";
    if (m.nodes.size() == 2) return "pair_" + join(m.nodes, "_") + "_busbw_gbps";
    return "busbw_gbps";
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
                " GB/s its fabric should give",
            x.key);
    return v != Verdict::Pass;
}

// The node that every slow pair includes is the culprit, not the pairs.
void judge_pairs(CheckResult& r, const FabricRun& run) {
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
        add(r, Verdict::Fail,
            "node " + common[0] + " is the slow one: every slow pair includes it (" + join(pairs) +
                "), and the pairs without it are within the band. Fix: host.fabric and ib_write_bw on " + common[0] +
                "'s NICs name the port");
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

// Sockets where RDMA NICs exist, channels without GPUDirect RDMA, NICs left unused: from NCCL's log.
void judge_node_log(CheckResult& r, const NodeFabric& n) {
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
        add(r, Verdict::Fail,
            "NCCL on node " + n.node +
                " could not initialise its RDMA network (\"Failed to initialize any NET "
                "plugin\"), as asked instead of falling back to TCP: host.fabric on " +
                n.node + " says why");
    if (socket)
        add(r, Verdict::Fail,
            "NCCL used sockets on a fabric with RDMA NICs: node " + n.node + " has " + std::to_string(n.rdma_nics) +
                " RDMA NIC(s), and its inter-node traffic went over TCP (NET/Socket). Causes: /dev/infiniband not "
                "in the container, libibverbs missing, NCCL_IB_DISABLE set; host.fabric on " +
                n.node + " names it");
    if (!socket && net_channels > 0 && without_gdr > 0)
        add(r, Verdict::Fail,
            "no GPUDirect RDMA on node " + n.node + ": " + std::to_string(without_gdr) + " of " +
                std::to_string(net_channels) + " inter-node channels lack /GDRDMA" +
                (gdr_off.empty() ? std::string()
                                 : " (NCCL disabled it for " + join({gdr_off.begin(), gdr_off.end()}) + ")") +
                ", so every byte bounces through host memory. Fix: `modprobe nvidia-peermem`, or DMA-BUF (the open "
                "kernel module); host.fabric checks both");
    if (!socket && !used.empty() && int(used.size()) < n.rdma_nics)
        add(r, Verdict::Warn,
            "NCCL on node " + n.node + " used " + std::to_string(used.size()) + " of its " +
                std::to_string(n.rdma_nics) + " RDMA NICs (" + join({used.begin(), used.end()}) +
                "): the others carry nothing. Check NCCL_IB_HCA and the NICs' port state");
}

}  // namespace

CheckResult judge(const FabricRun& run) {
    CheckResult r;
    r.key = "fabric.allreduce";
    r.title = "All-reduce across nodes";
    r.verdict = Verdict::Pass;
    for (const NodeFabric& n : run.nodes) judge_node_log(r, n);
    if (run.all) grade_one(r, run, *run.all, true);
    for (const Measured& rail : run.rails) grade_one(r, run, rail, true);
    judge_pairs(r, run);
    if (!run.all && run.rails.empty() && run.pairs.empty()) {
        r.verdict = worst(r.verdict, Verdict::Error);
        r.summary = "Nothing was measured across nodes.";
        return r;
    }
    int problems = 0;
    for (const Finding& f : r.findings) problems += f.verdict != Verdict::Pass;
    r.summary = (run.all ? "all-reduce across " + std::to_string(run.all->nodes.size()) +
                               " nodes: " + format_number(run.all->busbw_gbps) + " GB/s busbw"
                         : std::string("pairs and rails measured")) +
                (problems ? "; " + std::to_string(problems) + " finding(s), first: " +
                                r.findings.front().text.substr(0, r.findings.front().text.find(": ")) + "."
                          : "; within the band of its fabric.");
    return r;
}

}  // namespace gpuvet::fabric_allreduce
