// DeepSpeed's own model-states estimators, reproduced formula for formula so gpuvet's ZeRO
// figures equal DeepSpeed's: deepspeed/runtime/zero/stage_1_and_2.py
// estimate_zero2_model_states_mem_needs and deepspeed/runtime/zero/stage3.py
// estimate_zero3_model_states_mem_needs (DeepSpeed docs, "Memory Requirements").
#pragma once
#include <cstdint>

namespace gpuvet {

struct ZeroEstimate {
    std::int64_t cpu_bytes = 0;
    std::int64_t gpu_bytes = 0;
    std::int64_t largest_layer_bytes = 0;  // stage 3 only
};

ZeroEstimate deepspeed_zero2_estimate(std::int64_t total_params, int gpus_per_node, int nodes, bool cpu_offload,
                                      double additional_buffer_factor = 1.5);
ZeroEstimate deepspeed_zero3_estimate(std::int64_t total_params, std::int64_t largest_layer_params, int gpus_per_node,
                                      int nodes, bool cpu_offload, bool cpu_offload_params, bool zero_init = true,
                                      double additional_buffer_factor = 1.5);

}  // namespace gpuvet
