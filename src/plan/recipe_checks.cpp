#include "plan/recipe_checks.hpp"

#include "core/error.hpp"
#include "plan/recipes.hpp"

namespace gpuvet {

namespace {

void refuse_on_inference(bool given, const std::string& option, const std::string& why) {
    if (given)
        throw usage_error(option + " applies to training, not inference (" + why + ")",
                          "drop " + option + ", or choose --task full, lora, qlora or pretrain");
}

}  // namespace

void check_recipe_options(const Workload& w) {
    if (w.task == Task::Inference) {
        refuse_on_inference(w.recipe != "mixed-adamw", "--recipe " + w.recipe, "inference keeps no optimizer state");
        refuse_on_inference(w.loss.has_value(), "--loss", "no loss is computed");
        refuse_on_inference(w.checkpointing, "--checkpointing", "nothing is saved for a backward pass");
        refuse_on_inference(w.selective_checkpointing, "--selective-checkpointing", "no backward pass");
        refuse_on_inference(w.offload_activations, "--offload-activations", "no backward pass");
        refuse_on_inference(w.grad_accum > 1, "--grad-accum", "no gradients");
        refuse_on_inference(w.optimizer_in_backward, "--optimizer-in-backward", "no optimizer");
        return;
    }
    if (w.loss && *w.loss != "full" && *w.loss != "chunked" && *w.loss != "fused")
        throw usage_error(
            "unknown --loss '" + *w.loss + "'",
            "choose full (fp32 loss over all logits), chunked (8 chunks) or fused (Liger/cut cross-entropy)");
    if (w.grad_accum < 1)
        throw usage_error("--grad-accum must be at least 1", "1 steps the optimizer after every micro-batch");
    if (w.checkpointing && w.selective_checkpointing)
        throw usage_error("--checkpointing and --selective-checkpointing are two granularities of one thing",
                          "keep --checkpointing (every block recomputed) or --selective-checkpointing");
    if (w.optimizer_in_backward && w.grad_accum > 1)
        throw usage_error("--optimizer-in-backward cannot accumulate gradients: each is applied and freed at once",
                          "drop --grad-accum (torchtune refuses the two together) or --optimizer-in-backward");
    const Recipe& r = find_recipe(w.recipe);
    if (r.pageable_optimizer && (w.offload_optimizer || w.offload_params))
        throw usage_error("--recipe " + r.key + " pages its states to host already; ZeRO/FSDP offload moves them too",
                          "drop --offload-optimizer/--offload-params, or use --recipe bf16-adamw with offload");
}

}  // namespace gpuvet
