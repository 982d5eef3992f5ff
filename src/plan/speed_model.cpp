#include "plan/speed_model.hpp"

namespace gpuvet {

SpeedEstimate estimate_speed(const ModelArch& m, const Workload& w, const MemoryPlan& p, const CardRates& r,
                             const SpeedAssumptions& a) {
    SpeedEstimate s;
    const double n = p.gpus;
    const double N = double(p.active_params);
    if (w.task == Task::Inference) {
        if (r.bandwidth_gbps) {
            // Bytes read per decode step across all cards: weights + the batch's KV cache.
            double bytes = (p.item("weights") + p.item("kv_cache")) * n;
            if (m.is_moe() && p.params > 0) bytes *= double(p.active_params) / double(p.params);
            double steps = n * *r.bandwidth_gbps * 1e9 * a.bandwidth_eff / bytes;
            s.decode_tokens_per_s = steps * double(w.batch);
        }
        if (r.tflops) s.prefill_tokens_per_s = n * *r.tflops * 1e12 * a.mfu / (2.0 * N);
    } else if (r.tflops) {
        double flops_per_token = (w.task == Task::Lora || w.task == Task::Qlora) ? 4.0 * N : 6.0 * N;
        if (w.checkpointing) flops_per_token += 2.0 * N;
        s.train_tokens_per_s = n * *r.tflops * 1e12 * a.mfu / flops_per_token;
        if (w.token_budget > 0) s.hours_for_budget = w.token_budget / *s.train_tokens_per_s / 3600.0;
    }
    if (!r.tflops && !r.bandwidth_gbps) s.absent_reason = "no bandwidth or TFLOPS figure for this card";
    else if (!r.tflops) s.absent_reason = "no dense tensor TFLOPS figure for this card";
    return s;
}

}  // namespace gpuvet
