// gpuvet plan: from a workload to the VRAM, cards, speed, time and cost it needs.
// Exit 0 when at least one SKU fits, 1 when nothing fits, 2 on bad input.
#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "cli/image_options.hpp"
#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "plan/cost_search.hpp"
#include "plan/hf_config.hpp"
#include "plan/memory_model.hpp"
#include "plan/model_catalog.hpp"
#include "plan/quantization.hpp"
#include "plan/recommender.hpp"
#include "plan/vision_arch.hpp"
#include "core/strings.hpp"
#include "report/json.hpp"
#include "report/plan_html.hpp"
#include "report/plan_view.hpp"
#include "report/text_layout.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

struct PlanArgs {
    std::string model, config, params, task = "inference", scenario;  // scenario unset: by the model
    std::string measured, prices, lora_targets = "all", loss;
    std::optional<int> zero, gpus;
    Workload w;
    SpeedAssumptions a;
    double tokens = 0;
    std::optional<double> engine_fraction;  // unset: 0.9 for inference (vLLM's default), 1 for training
    std::optional<std::uint64_t> max_batched_tokens;
    std::optional<double> steps, deadline_h;
    bool list_models = false, all = false, html = false;
    int top = 10;
    ImageArgs image;
    const CLI::App* app = nullptr;  // to ask which options were given
};

// Every numeric option of plan, with the range it accepts. Bounds are wide enough for any real
// workload and small enough that the memory and speed arithmetic stays finite.
constexpr NumberRule kParamsRule{
    .min = 1, .max = 1e15, .whole = true, .unit = NumberUnit::Count, .what = "a parameter count", .example = "7B"};
constexpr NumberRule kBatchRule{
    .min = 1, .max = 4096, .whole = true, .what = "a batch size", .suffix = "sequences", .example = "8"};
constexpr NumberRule kSeqRule{
    .min = 1, .max = 1048576, .whole = true, .what = "a length", .suffix = "tokens", .example = "4096"};
constexpr NumberRule kLoraRankRule{.min = 1, .max = 4096, .whole = true, .what = "a rank", .example = "16"};
constexpr NumberRule kZeroRule{.min = 0, .max = 3, .whole = true, .what = "a ZeRO stage", .example = "3"};
constexpr NumberRule kTpRule{.min = 1, .max = 64, .whole = true, .what = "a tensor-parallel degree", .example = "8"};
constexpr NumberRule kGpusRule{.min = 1, .max = 1024, .whole = true, .what = "a card count", .example = "8"};
constexpr NumberRule kMarginRule{.min = 0, .max = 1, .what = "a share", .suffix = "(0.2 = 20%)", .example = "0.2"};
constexpr NumberRule kContextGibRule{.min = 0, .max = 64, .what = "a size", .suffix = "GiB", .example = "0.5"};
constexpr NumberRule kFractionRule{.min = 0, .max = 1, .min_open = true, .what = "a share", .example = "0.9"};
constexpr NumberRule kActivationsRule{.min = 0, .max = 65536, .what = "a size", .suffix = "GiB", .example = "12"};
constexpr NumberRule kTokensRule{
    .min = 1, .max = 1e15, .whole = true, .unit = NumberUnit::Count, .what = "a token count", .example = "2e9"};
constexpr NumberRule kStepsRule{
    .min = 1, .max = 1e12, .whole = true, .unit = NumberUnit::Count, .what = "a step count", .example = "1000"};
constexpr NumberRule kDeadlineRule{
    .min = 0, .max = 1e6, .min_open = true, .what = "a time", .suffix = "hours", .example = "12"};
constexpr NumberRule kMfuRule{.min = 0, .max = 1, .min_open = true, .what = "a utilization", .example = "0.4"};
constexpr NumberRule kBatchedTokensRule{
    .min = 1, .max = 1048576, .whole = true, .what = "a token count", .suffix = "tokens", .example = "8192"};
constexpr NumberRule kTopRule{.min = 1, .max = 1000, .whole = true, .what = "a row count", .example = "20"};
constexpr NumberRule kGradAccumRule{.min = 1, .max = 4096, .whole = true, .what = "a micro-step count", .example = "8"};

std::int64_t parse_count(const std::string& s) { return parse_whole_option("--params", s, kParamsRule); }

// Each --lora-targets name must match a linear layer of the model, or LoRA would train nothing.
void check_lora_targets(const ModelArch& m, const Workload& w) {
    if (w.lora_targets.empty())
        throw usage_error("--lora-targets: no layer named",
                          "give layer names, e.g. --lora-targets q_proj,v_proj, or all");
    auto linears = block_linears(m);
    if (linears.empty()) return;  // a fixed-size model has no layer list to check against
    std::string names;
    for (auto& l : linears)
        if (names.find(l.name) == std::string::npos) names += (names.empty() ? "" : ", ") + l.name;
    for (auto& t : w.lora_targets) {
        bool hit = t == "all";
        for (auto& l : linears) hit = hit || lora_target_matches(t, l.name);
        if (!hit)
            throw usage_error("--lora-targets: '" + t + "' matches no linear layer of " + m.name,
                              "choose among: " + names + " (or all)");
    }
}

Task parse_task(const std::string& t) {
    if (t == "inference") return Task::Inference;
    if (t == "full" || t == "finetune") return Task::FullFinetune;
    if (t == "lora") return Task::Lora;
    if (t == "qlora") return Task::Qlora;
    if (t == "pretrain") return Task::Pretrain;
    throw usage_error("unknown task '" + t + "'", "choose inference, full, lora, qlora or pretrain");
}

ModelArch resolve_model(const PlanArgs& a) {
    int given = !a.model.empty() + !a.config.empty() + !a.params.empty();
    if (given != 1)
        throw usage_error("give exactly one of --model, --config, --params",
                          "e.g. gpuvet plan --model llama-3-8b --task lora");
    if (!a.config.empty()) return load_hf_config(a.config);
    if (!a.params.empty()) {
        ModelArch m;
        m.model_type = "fixed";
        m.fixed_params = parse_count(a.params);
        m.key = m.name = a.params + " parameters";
        return m;
    }
    const ModelCatalog catalog = ModelCatalog::embedded();
    return catalog.find(a.model);
}

int run_plan(const GlobalOptions& g, PlanArgs a) {
    if (a.list_models) {
        // A named catalog: a range-for over a temporary's all() would read it after destruction.
        const ModelCatalog catalog = ModelCatalog::embedded();
        std::size_t key_w = 0, name_w = 0;
        for (auto& m : catalog.all()) {
            key_w = std::max(key_w, m.key.size());
            name_w = std::max(name_w, visible_width(m.name));
        }
        for (auto& m : catalog.all()) {
            double n = double(parameter_count(m));
            std::string count = n >= 1e9 ? fmt::format("{:.2f}B", n / 1e9) : fmt::format("{:.1f}M", n / 1e6);
            std::cout << fmt::format("{:<{}} {}{} {:>8} params\n", m.key, key_w, m.name,
                                     std::string(name_w - visible_width(m.name), ' '), count);
        }
        return 0;
    }
    a.w.task = parse_task(a.task);
    a.w.zero_stage = a.zero;
    a.w.gpus = a.gpus;
    JobBudget budget = job_budget(a.w, a.tokens > 0 ? std::optional<double>(a.tokens) : std::nullopt, a.steps);
    a.w.token_budget = a.tokens = budget.tokens;
    // Inference plans an engine that keeps 10% back (vLLM gpu_memory_utilization 0.9); a training
    // job may fill the card, its slack is the margin.
    a.w.engine_memory_fraction = a.engine_fraction.value_or(a.w.task == Task::Inference ? 0.9 : 1.0);
    if (a.max_batched_tokens) a.w.prefill_chunk = *(a.w.max_batched_tokens = std::int64_t(*a.max_batched_tokens));
    if (!a.loss.empty()) a.w.loss = a.loss;
    a.w.lora_targets.clear();
    for (auto& t : split(a.lora_targets, ','))
        if (!trim(t).empty()) a.w.lora_targets.push_back(trim(t));
    ModelArch m = resolve_model(a);
    apply_image_options(*a.app, a.image, m, a.w);
    // A checkpoint calibrated for an 8-bit KV cache (compressed-tensors kv_cache_scheme) is planned
    // with one unless --kv-dtype says otherwise.
    if (m.quant && m.quant->kv_cache_dtype && !a.app->count("--kv-dtype")) {
        a.w.kv_dtype = *m.quant->kv_cache_dtype;
        m.notes.push_back("kv_cache_scheme: the checkpoint is calibrated for an 8-bit (" + a.w.kv_dtype +
                          ") KV cache, planned at 1 B per value; serve it with the engine's 8-bit cache (vLLM "
                          "--kv-cache-dtype fp8), or give --kv-dtype bf16 for a 16-bit one");
    }
    if (a.w.task == Task::Lora || a.w.task == Task::Qlora) check_lora_targets(m, a.w);
    SpecDb db = load_specs(g);
    // A diffusion pipeline is ranked as the seeds rank diffusion work (VRAM and compute), not as an
    // LLM fine-tune, unless --scenario says otherwise.
    if (a.scenario.empty())
        a.scenario = m.vision && m.vision->kind == VisionKind::Diffusion ? "diffusion" : "llm-finetune";
    const Scenario& sc = find_scenario(a.scenario);
    std::map<std::string, MeasuredRates> measured;
    if (!a.measured.empty()) measured = read_measured_report(a.measured, db);
    // A report that gives no rate would silently plan with datasheet rates under a --measured flag.
    if (!a.measured.empty() && measured.empty())
        throw input_error("--measured " + a.measured + ": the report holds no measured rate for a known GPU model",
                          "pass the JSON of a 'gpuvet check' that ran gpu.identity with gpu.memory_bandwidth, "
                          "gpu.gemm or gpu.fp_peak (a plain 'gpuvet check --json'), or drop --measured");
    std::optional<PriceTable> prices;
    if (!a.prices.empty()) prices = read_prices(a.prices, db);
    if (a.deadline_h && (!prices || budget.tokens <= 0))
        throw usage_error("--deadline needs the job's size and prices to pick the cheapest configuration",
                          "add --tokens N (or --steps N) and --prices FILE, or drop --deadline");
    MemoryPlan one = plan_memory(m, a.w, a.w.gpus.value_or(1));
    one.notes.insert(one.notes.begin(), m.notes.begin(), m.notes.end());  // what reading --config assumed
    Recommendation rec = recommend(m, a.w, db, sc, a.a, measured, prices ? &*prices : nullptr);
    int code = rec.any_fits ? exit_code::ok : exit_code::check_failed;
    std::optional<CostSearch> cost;
    if (prices && budget.tokens > 0) cost = search_cost(m, a.w, db, sc, a.a, measured, *prices, a.deadline_h);

    PlanView view{m, a.w, a.a, sc, one, rec, prices ? &*prices : nullptr, !measured.empty(), a.tokens, a.all, a.top};
    view.budget = &budget;
    view.cost = cost ? &*cost : nullptr;
    if (a.html) std::cout << render_plan_html(finished_envelope(g), view);
    else if (g.json) std::cout << render_document(finished_envelope(g), plan_to_json(view));
    else std::cout << render_plan(view);
    return code;
}

}  // namespace

void add_plan_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("plan", "VRAM, cards, speed, time and cost a workload needs");
    auto a = std::make_shared<PlanArgs>();
    sub->add_option("--model", a->model, "model from the catalog (see --list-models)");
    sub->add_option("--config", a->config, "a Hugging Face config.json")->check(CLI::ExistingFile);
    sub->add_option("--params", a->params, "a bare parameter count: 70B, 350M, 7e9; " + describe_range(kParamsRule))
        ->type_name("COUNT");
    sub->add_flag("--list-models", a->list_models, "list the catalog");
    sub->add_option("--task", a->task, "inference, full, lora, qlora, pretrain")->capture_default_str();
    sub->add_option("--recipe", a->w.recipe,
                    "training recipe: mixed-adamw, bf16-adamw, adamw-8bit, paged-adamw-8bit, ... (docs/plan.md)")
        ->capture_default_str();
    add_number_option(*sub, "--batch", a->w.batch, kBatchRule, "sequences per GPU (default 1)");
    add_number_option(*sub, "--seq", a->w.seq, kSeqRule, "tokens per sequence, inference: context (default 2048)");
    sub->add_option("--dtype", a->w.weight_dtype, "inference weights: bf16, fp16, fp32, fp8, int8, int4")
        ->capture_default_str();
    sub->add_option("--kv-dtype", a->w.kv_dtype, "KV cache: bf16, fp16, fp8")->capture_default_str();
    add_number_option(*sub, "--lora-rank", a->w.lora_rank, kLoraRankRule, "LoRA rank r (default 16)");
    sub->add_option("--lora-targets", a->lora_targets, "comma list (q_proj,v_proj) or all")->capture_default_str();
    sub->add_flag("--checkpointing", a->w.checkpointing, "activation checkpointing");
    sub->add_flag("!--eager-attention", a->w.flash_attention, "attention without flash/SDPA (keeps s² scores)");
    sub->add_flag("--selective-checkpointing", a->w.selective_checkpointing,
                  "torchtitan op-level checkpointing: every other matmul output kept");
    sub->add_flag("--offload-activations", a->w.offload_activations, "saved activations to host RAM (torchtune)");
    sub->add_flag("--compile", a->w.compiled, "torch.compile: fused norms save no fp32 copy");
    sub->add_option("--loss", a->loss, "cross-entropy: full (default), chunked (8 chunks), fused (Liger/CCE)");
    add_number_option(*sub, "--grad-accum", a->w.grad_accum, kGradAccumRule, "micro-steps per step (default 1)");
    sub->add_flag("--optimizer-in-backward", a->w.optimizer_in_backward, "step each parameter as its gradient is made");
    add_number_option(*sub, "--zero", a->zero, kZeroRule, "ZeRO stage (default: 0 on one GPU, 3 on several)");
    sub->add_flag("--offload-optimizer", a->w.offload_optimizer);
    sub->add_flag("--offload-params", a->w.offload_params);
    add_number_option(*sub, "--tp", a->w.tp, kTpRule, "tensor-parallel degree, training (default 1)");
    add_number_option(*sub, "--gpus", a->gpus, kGpusRule, "evaluate exactly N cards per SKU");
    add_number_option(*sub, "--margin", a->w.margin, kMarginRule, "safety margin (default 0.2)");
    add_number_option(*sub, "--cuda-context-gib", a->w.cuda_context_gib, kContextGibRule,
                      "CUDA context and kernels per GPU (default 0.5)");
    add_number_option(*sub, "--engine-fraction", a->engine_fraction, kFractionRule,
                      "usable share of a card: vLLM's gpu_memory_utilization (default 0.9 for inference, "
                      "1 for training)");
    add_number_option(*sub, "--max-batched-tokens", a->max_batched_tokens, kBatchedTokensRule,
                      "serving: the engine's max_num_batched_tokens (default: vLLM's for the card, 8192 "
                      "on 70 GiB+ cards but A100, else 2048)");
    add_number_option(*sub, "--activations-gib", a->w.activations_gib, kActivationsRule,
                      "activation memory of a fixed model (CNN, UNet)");
    add_number_option(*sub, "--tokens", a->tokens, kTokensRule,
                      "the job's tokens: training D, or inference tokens to generate: 2e9, 300B");
    add_number_option(
        *sub, "--steps", a->steps, kStepsRule,
        "training steps instead of --tokens: tokens = steps × grad-accum × batch × seq × (--gpus ÷ --tp)");
    add_number_option(*sub, "--deadline", a->deadline_h, kDeadlineRule,
                      "with --prices: the cheapest configuration that finishes within this many hours");
    add_number_option(*sub, "--mfu", a->a.mfu, kMfuRule, "compute utilization for training/prefill (default 0.4)");
    sub->add_option("--scenario", a->scenario,
                    "llm-finetune, diffusion, video-render, quant-backtest, av-sim (default: diffusion for a "
                    "diffusion model, else llm-finetune)")
        ->capture_default_str();
    sub->add_option("--measured", a->measured, "use the rates a 'gpuvet check --json' report measured")
        ->check(CLI::ExistingFile);
    sub->add_option("--prices", a->prices, "TOML [prices] per card-hour")->check(CLI::ExistingFile);
    add_number_option(*sub, "--top", a->top, kTopRule, "rows of the card table (default 10)");
    sub->add_flag("--all", a->all, "every SKU, including those that do not fit");
    add_image_options(*sub, a->image);
    a->app = sub;
    add_output_flags(*sub, cli.global, {.report = false});
    sub->add_flag("--html", a->html, "print a self-contained HTML page: the memory bar and the card table")
        ->excludes("--json");
    sub->footer(
        "Examples:\n"
        "  gpuvet plan --model llama-3-70b --batch 8 --seq 8192            serve 8 chats of 8k tokens\n"
        "  gpuvet plan --model llama-2-70b --task qlora --checkpointing    fine-tune on one card\n"
        "  gpuvet plan --model mistral-7b --task full --seq 4096 --tokens 2e9 --prices prices.toml\n"
        "  gpuvet plan --model llama-3-8b --task pretrain --zero 3 --gpus 8 --checkpointing\n"
        "  gpuvet plan --model llama-3-8b --task lora --steps 2000 --batch 4 --prices p.toml --deadline 6\n"
        "  gpuvet plan --config ./config.json --task lora --lora-targets q_proj,v_proj\n"
        "  gpuvet plan --params 7B --task inference --dtype int4           a bare parameter count\n"
        "  gpuvet plan --model sdxl --batch 4 --resolution 1024            4 images at 1024² (fp16)\n"
        "  gpuvet check --json > box.json; gpuvet plan --model llama-3-8b --measured box.json\n"
        "prices.toml:  currency = \"USD\"  [prices]  \"H100 SXM\" = 2.49  \"A100 80GB\" = 1.29\n"
        "Exit: 0 something fits, 1 nothing fits (the last line says what would), 2 bad input.");
    on_chosen(cli, *sub, "plan", [a](const GlobalOptions& g) { return run_plan(g, *a); });
}

}  // namespace gpuvet
