#include "compare/offer_figures.hpp"

#include <set>

namespace gpuvet {

const std::vector<MetricDef>& offer_metrics() {
    static const std::vector<MetricDef> defs = {
        {"sustained_tflops", "Sustained burn throughput", "TFLOPS", "gpu.burn", "throughput_tflops", true},
        {"bf16_tflops", "BF16 GEMM", "TFLOPS", "gpu.gemm", "bf16_tflops", true},
        {"fp16_tflops", "FP16 GEMM", "TFLOPS", "gpu.gemm", "fp16_tflops", true},
        {"fp8_tflops", "FP8 GEMM", "TFLOPS", "gpu.gemm", "fp8_tflops", true},
        {"hbm_gbps", "Device memory (triad)", "GB/s", "gpu.memory_bandwidth", "triad_gbps", true},
        {"h2d_gbps", "Host to GPU", "GB/s", "gpu.h2d_d2h", "h2d_gbps", false},
        {"p2p_gbps", "Slowest GPU pair", "GB/s", "gpu.p2p", "uni_gbps_min", false},
        {"allreduce_gbps", "All-reduce bus bandwidth", "GB/s", "gpu.allreduce", "peak_busbw_gbps", false},
        // What holds a GPU back without being a throughput itself: a cut power limit, a slower link.
        {"power_limit_w", "Power limit", "W", "gpu.health", "power_limit_w", false},
        {"pcie_gen", "PCIe generation", "gen", "gpu.pcie_link", "pcie_gen", false},
        {"host_memory_gbps", "Host memory (triad)", "GB/s", "host.memory", "triad_gbps", false},
        {"storage_read_gbps", "Storage sequential read", "GB/s", "host.storage", "seq_read_gbps", false},
        {"network_gbitps", "Network download", "Gbit/s", "host.network", "download_gbitps", false},
        // Between the nodes: the RDMA line rate host.fabric found, and the all-reduce across nodes
        // (the fleet's figure of a node, from the fabric section: no node report carries it).
        {"rdma_gbitps", "RDMA line rate, total", "Gbit/s", "host.fabric", "rdma_total_gbitps", false},
        {"fabric_busbw_gbps", "All-reduce busbw across nodes, best pair", "GB/s", "fabric.allreduce", "node_busbw_gbps",
         false},
    };
    return defs;
}

std::vector<MetricSample> metric_samples(const Report& r, const MetricDef& def) {
    std::vector<MetricSample> out;
    for (auto& c : r.checks) {
        if (c.key != def.check) continue;
        for (auto& m : c.measurements) {
            if (m.key != def.measurement || !m.value) continue;
            MetricSample s;
            s.gpu = c.gpu ? c.gpu : m.gpu;
            s.value = *m.value;
            if (m.reference) {
                s.spec = m.reference->spec;
                s.healthy_floor = m.reference->warn_below;
                // Without a warn bound, 90% of the typical share is the least a healthy card shows.
                if (!s.healthy_floor && m.reference->spec && m.reference->expected_fraction)
                    s.healthy_floor = 0.9 * *m.reference->expected_fraction * *m.reference->spec;
                s.source = m.reference->source;
            }
            out.push_back(s);
        }
    }
    return out;
}

std::string gpu_model_of(const Report& r) {
    std::set<std::string> skus, names;
    bool all_identified = !r.gpus.empty();
    for (auto& g : r.gpus) {
        if (g.sku) skus.insert(*g.sku);
        else all_identified = false;
        names.insert(g.name.value_or("unknown GPU"));
    }
    const auto& pick = all_identified ? skus : names;
    std::string out;
    for (auto& s : pick) out += (out.empty() ? "" : " + ") + s;
    return out.empty() ? "no GPU" : out;
}

}  // namespace gpuvet
