#include "plan/planned_job.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text_limits.hpp"
#include "plan/model_catalog.hpp"

namespace gpuvet {

namespace {

using Json = nlohmann::json;

Task task_named(const std::string& s, const std::string& origin) {
    for (Task t : {Task::Inference, Task::FullFinetune, Task::Lora, Task::Qlora, Task::Pretrain})
        if (s == to_string(t)) return t;
    throw input_error(origin + ": workload.task '" + s + "' is not a task this build plans",
                      "write the plan again with this gpuvet: gpuvet plan ... --json");
}

// The workload's knobs; a missing or mistyped one is an error, not a silent default.
void read_knobs(const Json& k, Workload& w, SpeedAssumptions& a) {
    w.recipe = k.at("recipe").get<std::string>();
    w.batch = k.at("batch").get<std::int64_t>();
    w.seq = k.at("seq").get<std::int64_t>();
    w.weight_dtype = k.at("weight_dtype").get<std::string>();
    w.kv_dtype = k.at("kv_dtype").get<std::string>();
    w.lora_rank = k.at("lora_rank").get<int>();
    w.lora_targets = k.at("lora_targets").get<std::vector<std::string>>();
    w.checkpointing = k.at("checkpointing").get<bool>();
    w.flash_attention = k.at("flash_attention").get<bool>();
    if (!k.at("zero_stage").is_null()) w.zero_stage = k.at("zero_stage").get<int>();
    w.offload_optimizer = k.at("offload_optimizer").get<bool>();
    w.offload_params = k.at("offload_params").get<bool>();
    w.tp = k.at("tp").get<int>();
    if (!k.at("gpus").is_null()) w.gpus = k.at("gpus").get<int>();
    w.margin = k.at("margin").get<double>();
    w.cuda_context_gib = k.at("cuda_context_gib").get<double>();
    w.engine_memory_fraction = k.at("engine_memory_fraction").get<double>();
    if (!k.at("activations_gib").is_null()) w.activations_gib = k.at("activations_gib").get<double>();
    w.prefill_chunk = k.at("prefill_chunk").get<std::int64_t>();
    w.token_budget = k.at("token_budget").get<double>();
    // Written since serving capacity; an older plan's engine took vLLM's default for each card.
    if (k.contains("max_batched_tokens") && !k.at("max_batched_tokens").is_null())
        w.max_batched_tokens = k.at("max_batched_tokens").get<std::int64_t>();
    // Recipe knobs added later: a workload file written before them plans as it did.
    if (k.contains("selective_checkpointing")) w.selective_checkpointing = k.at("selective_checkpointing").get<bool>();
    if (k.contains("offload_activations")) w.offload_activations = k.at("offload_activations").get<bool>();
    if (k.contains("compiled")) w.compiled = k.at("compiled").get<bool>();
    if (k.contains("loss") && !k.at("loss").is_null()) w.loss = k.at("loss").get<std::string>();
    if (k.contains("grad_accum")) w.grad_accum = k.at("grad_accum").get<int>();
    if (k.contains("optimizer_in_backward")) w.optimizer_in_backward = k.at("optimizer_in_backward").get<bool>();
    a.mfu = k.at("mfu").get<double>();
    a.bandwidth_eff = k.at("bandwidth_efficiency").get<double>();
    // Image workloads (plans written before these fields existed have none: the model's defaults).
    w.image_width = k.value("image_width", std::int64_t(0));
    w.image_height = k.value("image_height", std::int64_t(0));
    w.vae_slicing = k.value("vae_slicing", false);
    if (k.contains("guidance_cfg") && !k.at("guidance_cfg").is_null())
        w.guidance_cfg = k.at("guidance_cfg").get<bool>();
}

}  // namespace

PlannedJob parse_planned_job(std::string_view text, const std::string& origin) {
    const std::string fix = "give the JSON that 'gpuvet plan ... --json' printed (gpuvet plan ... --json > job.json)";
    check_json_nesting(text, origin);
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded()) throw input_error(origin + ": not JSON (truncated or edited?)", fix);
    if (!j.is_object() || j.value("command", Json()).is_null() || !j["command"].is_string() ||
        j["command"].get<std::string>() != "plan")
        throw input_error(origin + ": not a plan document (its \"command\" is not \"plan\")", fix);
    if (!j.contains("workload") || !j["workload"].is_object())
        throw input_error(origin + ": the plan has no \"workload\" (an older gpuvet wrote it)", fix);
    const Json& k = j["workload"];
    PlannedJob job;
    try {
        job.w.task = task_named(k.at("task").get<std::string>(), origin);
        read_knobs(k, job.w, job.a);
        job.scenario = j.at("scenario").get<std::string>();
        std::string type = k.at("model_type").get<std::string>(), key = k.at("model_key").get<std::string>();
        if (type == "fixed") {
            job.model.model_type = "fixed";
            job.model.fixed_params = k.at("fixed_params").get<std::int64_t>();
            job.model.key = job.model.name = key;
        } else {
            const ModelCatalog catalog = ModelCatalog::embedded();
            job.model = catalog.find(key);
            if (job.model.key != key) throw usage_error("not the same model", "");  // a near name is not the model
        }
    } catch (const Json::exception& e) {
        throw input_error(origin + ": malformed plan workload (" + std::string(e.what()) + ")", fix);
    } catch (const Error&) {
        throw input_error(origin + ": the plan's model '" + k.value("model_key", std::string()) +
                              "' is not in this build's catalog (a plan made with --config cannot be rebuilt)",
                          "plan with --model or --params, or compare with the same gpuvet version");
    }
    if (job.w.batch < 1 || job.w.seq < 1 || job.w.tp < 1 || (job.w.gpus && *job.w.gpus < 1) || job.a.mfu <= 0 ||
        job.a.mfu > 1 || job.a.bandwidth_eff <= 0 || job.a.bandwidth_eff > 1 || job.w.token_budget < 0 ||
        job.w.image_width < 0 || job.w.image_height < 0)
        throw input_error(origin + ": the plan's workload holds a value out of range (edited?)", fix);
    return job;
}

}  // namespace gpuvet
