// Serving capacity the way vLLM sizes its paged KV cache: per GPU, budget = total memory × the
// engine fraction (gpu_memory_utilization) − weights − the activation peak of a profile run −
// memory outside PyTorch (kernels, NCCL); what is left holds KV blocks of 16 tokens. The tokens
// give the most concurrent requests of a context, and the roofline gives their speed.
// Pure arithmetic: the caller passes the card and the engine's settings.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/model_arch.hpp"
#include "plan/speed_model.hpp"
#include "plan/workload.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

// How the engine sizes its profile run and what its budget subtracts; the settings differ between
// vLLM versions, so a comparison with a published log names the version it reproduces.
struct ServingEngine {
    std::string name;                        // "vLLM V1 server defaults", "vLLM 0.6.4 (V0)"
    std::int64_t max_batched_tokens = 8192;  // max_num_batched_tokens: tokens of one step
    bool chunked_prefill = true;             // off: a step holds a whole prompt of max_model_len
    std::int64_t max_num_seqs = 256;         // sequences of one step (the profile's sampled rows)
    double sampler_bytes_per_logit = 10;     // the profile's sampler, per vocabulary entry of a row
    bool counts_cuda_context = false;        // ≤ 0.6.4 subtracted all memory outside PyTorch
    std::int64_t block_tokens = 16;          // tokens per KV block
};

// vLLM V1's defaults for `vllm serve` on a card (vllm/engine/arg_utils.py get_batch_defaults,
// 0.8–0.11): 8192 batched tokens and 1024 sequences on cards of 70 GiB or more other than the
// A100, else 2048 and 256; chunked prefill always on.
ServingEngine vllm_server_defaults(double card_total_bytes, const std::string& card_name);
// vLLM 0.6.x (V0 engine): chunked prefill switches on above 32K of max_model_len with 512-token
// steps; below it a step holds max(max_model_len, 2048) tokens; 256 sequences; the profile's
// sampler held only the bf16 logits. `counts_cuda_context`: 0.6.4 and older (before PR #10511).
ServingEngine vllm_v0_engine(std::int64_t max_model_len, bool counts_cuda_context);

struct ServingCard {
    std::string name;
    double total_bytes = 0;     // what the driver reports (vLLM's total_gpu_memory)
    bool nvlink_sharp = false;  // NVSwitch with NVLink SHARP (HGX Hopper and later): NCCL's NVLS buffers
};

// The card as the planner serves on it: the driver's total (specs/driver_memory), and NVLS on
// NVLink 4+ SXM boards (HGX, NVSwitch).
ServingCard serving_card_for(const GpuSpec& g);

struct ServingTerm {
    std::string key, label;  // "weights", "profile_activations", "non_torch", "collectives", "cuda_context"
    double bytes_per_gpu = 0;
    std::string how;
};

struct ServingCapacity {
    std::string card;
    int gpus = 1;  // tensor-parallel degree: every card holds a shard
    ServingEngine engine;
    double fraction = 0.9;
    double total_bytes = 0;          // per GPU
    double budget_bytes = 0;         // total × fraction
    std::vector<ServingTerm> terms;  // subtracted from the budget
    double kv_bytes = 0;             // budget − terms; ≤ 0: nothing left
    double kv_bytes_per_token = 0;   // per GPU, all layers
    std::string kv_how;
    std::int64_t profile_tokens = 0;
    std::int64_t blocks = 0, kv_tokens = 0;
    std::int64_t seq = 0;        // --seq: max_model_len
    double max_concurrency = 0;  // requests of `seq` tokens the cache holds at once
    bool fits = false;           // at least one request of `seq`
    std::string problem;         // when it does not fit
    std::vector<std::string> ideas;
    std::vector<std::string> notes;
    // Rates of `rate_batch` requests at once (speed_model's roofline), all cards together.
    std::int64_t rate_batch = 0;
    std::optional<double> decode_tokens_per_s, prefill_tokens_per_s;
    std::string rates_absent_reason;

    double term(const std::string& key) const;
};

// KV bytes per token on each of `tp` ranks: K and V of the KV heads a rank holds (split over the
// ranks, replicated when fewer heads than ranks), or MLA's latent on every rank.
double kv_bytes_per_token_per_gpu(const ModelArch& m, double kv_value_bytes, int tp);
// Tokens `kv_bytes` hold in whole blocks.
std::int64_t kv_tokens_in(double kv_bytes, double bytes_per_token, std::int64_t block_tokens);

// Throws usage_error for a model without shapes (a bare parameter count) or bad settings.
ServingCapacity serving_capacity(const ModelArch& m, const Workload& w, const ServingCard& card, int gpus,
                                 const ServingEngine& e);
// Decode and prefill rates at the capacity's concurrency, from estimate_speed.
void add_serving_rates(ServingCapacity& c, const ModelArch& m, const Workload& w, const CardRates& r,
                       const SpeedAssumptions& a);

}  // namespace gpuvet
