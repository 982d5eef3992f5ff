#include "plan/speed_model.hpp"
#include "specs/pcie.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace gpuvet {

void set_link(CardRates& r, std::optional<int> nv_gen, std::optional<double> nv_bidir_gbps, std::optional<int> pcie_gen,
              std::optional<int> pcie_lanes) {
    if (nv_gen && nv_bidir_gbps) {
        r.link_gbps = *nv_bidir_gbps / 2;  // NVIDIA quotes both directions together
        r.link = fmt::format("NVLink {}", *nv_gen);
    } else if (pcie_gen && pcie_lanes && *pcie_gen >= 1 && *pcie_gen <= 6) {
        r.link_gbps = *pcie_gbps_per_direction(*pcie_gen, *pcie_lanes);
        r.link = fmt::format("PCIe {}.0 x{}", *pcie_gen, *pcie_lanes);
    }
}

double comm_bytes_per_step(const MemoryPlan& p, double dp) {
    if (dp <= 1) return 0;
    // Bytes each card sends per step in ring collectives, (dp-1)/dp of the full tensor: sharded
    // weights (ZeRO-3/FSDP) are all-gathered for forward and again for backward, gradients
    // reduce-scattered; unsharded training all-reduces gradients (2×).
    double w_shard = p.exchanged_weight_bytes > 0 ? p.exchanged_weight_bytes : p.item("weights");
    double g_shard = p.exchanged_gradient_bytes > 0 ? p.exchanged_gradient_bytes : p.item("gradients");
    double full_weights = p.zero_stage == 3 ? w_shard * dp : 0;
    double full_grads = g_shard * (p.zero_stage >= 2 ? dp : 1);
    double ring = (dp - 1) / dp;
    return p.zero_stage == 3 ? ring * (2 * full_weights + full_grads) : ring * 2 * full_grads;
}

SpeedEstimate estimate_speed(const ModelArch& m, const Workload& w, const MemoryPlan& p, const CardRates& r,
                             const SpeedAssumptions& a) {
    SpeedEstimate s;
    if (m.vision) {  // the roofline below counts tokens; images per second are not modelled
        s.absent_reason = "images per second are not modelled";
        return s;
    }
    const double n = p.gpus;
    const double N = double(p.active_params);
    if (w.task == Task::Inference) {
        if (r.bandwidth_gbps) {
            // Bytes read per decode step across all cards: weights + the batch's KV cache.
            double bytes = (p.item("weights") + p.item("kv_cache")) * n;
            if (m.is_moe() && p.params > 0) bytes *= double(p.active_params) / double(p.params);
            double steps = n * *r.bandwidth_gbps * 1e9 * a.bandwidth_eff / bytes;
            s.decode_tokens_per_s = steps * double(w.batch);
            // Tokens to generate: decoded by the whole batch together (prefill not counted).
            if (w.token_budget > 0) s.hours_for_budget = w.token_budget / *s.decode_tokens_per_s / 3600.0;
        }
        if (r.tflops) s.prefill_tokens_per_s = n * *r.tflops * 1e12 * a.mfu / (2.0 * N);
    } else if (r.tflops) {
        double flops_per_token = (w.task == Task::Lora || w.task == Task::Qlora) ? 4.0 * N : 6.0 * N;
        if (w.checkpointing) flops_per_token += 2.0 * N;
        const int tp = std::max(1, w.tp);
        const double dp = n / tp;
        const double step_tokens = dp * double(w.batch) * double(w.seq);
        double compute_s = step_tokens * flops_per_token / (n * *r.tflops * 1e12 * a.mfu);
        double comm_s = 0;
        if (dp > 1 && r.link_gbps) {
            const double link_gbps = n > a.cards_per_box ? std::min(*r.link_gbps, a.inter_box_gbps) : *r.link_gbps;
            comm_s = comm_bytes_per_step(p, dp) / (link_gbps * 1e9);
        }
        s.compute_s_per_step = compute_s;
        s.comm_s_per_step = comm_s;
        // No overlap assumed: the step waits for both (an upper bound on step time).
        s.train_tokens_per_s = step_tokens / (compute_s + comm_s);
        if (w.token_budget > 0) s.hours_for_budget = w.token_budget / *s.train_tokens_per_s / 3600.0;
    }
    if (!r.tflops && !r.bandwidth_gbps) s.absent_reason = "no bandwidth or TFLOPS figure for this card";
    else if (!r.tflops) s.absent_reason = "no dense tensor TFLOPS figure for this card";
    return s;
}

}  // namespace gpuvet
