// gpuvet plan: from a workload to the VRAM, cards, speed, time and cost it needs.
// Exit 0 when at least one SKU fits, 1 when nothing fits, 2 on bad input.
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "plan/hf_config.hpp"
#include "plan/model_catalog.hpp"
#include "plan/recommender.hpp"
#include "core/strings.hpp"
#include "report/json.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct PlanArgs {
    std::string model, config, params, task = "inference", scenario = "llm-finetune";
    std::string measured, prices, lora_targets = "all";
    std::optional<int> zero, gpus;
    Workload w;
    SpeedAssumptions a;
    double tokens = 0;
    bool list_models = false;
};

std::int64_t parse_count(const std::string& s) {
    try {
        std::size_t pos = 0;
        double v = std::stod(s, &pos);
        std::string unit = s.substr(pos);
        double mult = unit == "B" || unit == "b" ? 1e9 : unit == "M" || unit == "m" ? 1e6 : unit == "T" || unit == "t" ? 1e12 : unit.empty() ? 1 : -1;
        if (mult < 0 || v <= 0 || v * mult > 1e15) throw 0;
        return std::int64_t(v * mult);
    } catch (...) {
        throw usage_error("--params '" + s + "' is not a count", "write e.g. 70B, 350M or 7000000000");
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
    if (given != 1) throw usage_error("give exactly one of --model, --config, --params",
                                      "e.g. gpuvet plan --model llama-3-8b --task lora");
    if (!a.config.empty()) return load_hf_config(a.config);
    if (!a.params.empty()) {
        ModelArch m;
        m.model_type = "fixed";
        m.fixed_params = parse_count(a.params);
        m.key = m.name = a.params + " parameters";
        return m;
    }
    return ModelCatalog::embedded().find(a.model);
}

std::string g2(double bytes) { return fmt::format("{:.2f}", bytes / kGiB); }

nlohmann::json to_json(const MemoryPlan& p) {
    nlohmann::json items = nlohmann::json::array();
    for (auto& i : p.items)
        items.push_back({{"key", i.key}, {"label", i.label}, {"bytes_per_gpu", i.bytes_per_gpu},
                         {"gib_per_gpu", i.bytes_per_gpu / kGiB}, {"bytes_total", i.bytes_per_gpu * p.gpus}, {"how", i.how}});
    return {{"gpus", p.gpus}, {"zero_stage", p.zero_stage}, {"bytes_per_param", p.bytes_per_param},
            {"bytes_per_param_how", p.bytes_per_param_how}, {"items", items},
            {"subtotal_bytes_per_gpu", p.subtotal_per_gpu}, {"margin_bytes_per_gpu", p.margin_bytes},
            {"need_bytes_per_gpu", p.need_per_gpu}, {"need_gib_per_gpu", p.need_per_gpu / kGiB},
            {"need_bytes_total", p.total()}, {"cpu_offload_bytes", p.cpu_bytes}, {"notes", p.notes}};
}

template <class T>
nlohmann::json opt(const std::optional<T>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

int run_plan(const GlobalOptions& g, PlanArgs a) {
    if (a.list_models) {
        for (auto& m : ModelCatalog::embedded().all())
            std::cout << fmt::format("{:<16} {:<22} {:>8.2f}B params\n", m.key, m.name, parameter_count(m) / 1e9);
        return 0;
    }
    a.w.task = parse_task(a.task);
    a.w.zero_stage = a.zero;
    a.w.gpus = a.gpus;
    a.w.token_budget = a.tokens;
    a.w.lora_targets.clear();
    for (auto& t : split(a.lora_targets, ',')) a.w.lora_targets.push_back(trim(t));
    ModelArch m = resolve_model(a);
    SpecDb db = load_specs(g);
    const Scenario& sc = find_scenario(a.scenario);
    std::map<std::string, MeasuredRates> measured;
    if (!a.measured.empty()) measured = read_measured_report(a.measured, db);
    std::optional<PriceTable> prices;
    if (!a.prices.empty()) prices = read_prices(a.prices, db);
    MemoryPlan one = plan_memory(m, a.w, a.w.gpus.value_or(1));
    Recommendation rec = recommend(m, a.w, db, sc, a.a, measured, prices ? &*prices : nullptr);
    int code = rec.any_fits ? exit_code::ok : exit_code::check_failed;

    if (g.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (auto& r : rec.rows)
            rows.push_back({{"sku", r.spec->key}, {"name", r.spec->name}, {"memory_gib", r.spec->memory_size_gib},
                            {"usable_gib", r.usable_gib}, {"cards", opt(r.cards)},
                            {"need_bytes_per_gpu", r.plan ? nlohmann::json(r.plan->need_per_gpu) : nlohmann::json(nullptr)},
                            {"nvlink_needed", r.nvlink_needed}, {"has_nvlink", r.has_nvlink},
                            {"decode_tokens_per_s", opt(r.speed.decode_tokens_per_s)},
                            {"prefill_tokens_per_s", opt(r.speed.prefill_tokens_per_s)},
                            {"train_tokens_per_s", opt(r.speed.train_tokens_per_s)},
                            {"hours_for_budget", opt(r.speed.hours_for_budget)}, {"cost", opt(r.cost)},
                            {"rates_source", r.rates_source}, {"score", r.score}});
        nlohmann::json j{{"schema_version", kSchemaVersion}, {"command", "plan"},
                         {"model", {{"key", m.key}, {"name", m.name}, {"params", parameter_count(m)},
                                    {"active_params", active_parameter_count(m)}, {"source", m.source}}},
                         {"task", to_string(a.w.task)}, {"scenario", sc.key},
                         {"assumptions", {{"mfu", a.a.mfu}, {"bandwidth_efficiency", a.a.bandwidth_eff}, {"margin", a.w.margin}}},
                         {"memory", to_json(one)}, {"gpus", rows}, {"fits", rec.any_fits}, {"suggestion", rec.suggestion},
                         {"currency", prices ? nlohmann::json(prices->currency) : nlohmann::json(nullptr)}};
        std::cout << j.dump(2) << "\n";
        return code;
    }
    std::cout << fmt::format("{} — {} — {:.3f}B parameters{}\n", m.name, to_string(a.w.task), one.params / 1e9,
                             m.is_moe() ? fmt::format(" ({:.2f}B active per token)", one.active_params / 1e9) : "");
    if (one.bytes_per_param > 0) std::cout << "  " << one.bytes_per_param_how << "\n";
    if (one.trainable_params && one.trainable_params != one.params)
        std::cout << fmt::format("  trainable: {} parameters (LoRA rank {})\n", one.trainable_params, a.w.lora_rank);
    std::cout << fmt::format("\nMemory on {} GPU(s), per GPU{}:\n", one.gpus, one.zero_stage ? fmt::format(", ZeRO-{}", one.zero_stage) : "");
    std::cout << fmt::format("  {:<34} {:>16} {:>9}  {}\n", "item", "bytes", "GiB", "how");
    auto line = [&](const std::string& l, double b, const std::string& how) {
        std::string h = how.size() > 36 ? how.substr(0, 35) + "…" : how;
        std::cout << fmt::format("  {:<34} {:>16.0f} {:>9}  {}\n", l, b, g2(b), h);
    };
    for (auto& i : one.items) line(i.label, i.bytes_per_gpu, i.how);
    line(fmt::format("margin ({:.0f}%)", a.w.margin * 100), one.margin_bytes, "seed articles' ×1.2");
    line("need per GPU", one.need_per_gpu, "");
    if (one.gpus > 1) line("need in total", one.total(), fmt::format("× {} GPUs", one.gpus));
    if (one.cpu_bytes > 0) line("host RAM for offload", one.cpu_bytes, "DeepSpeed estimate");
    for (auto& n : one.notes) std::cout << "  note: " << n << "\n";

    std::cout << fmt::format("\nCards (scenario {}; speed at {:.0f}% utilization, decode at {:.0f}% of bandwidth):\n",
                             sc.key, a.a.mfu * 100, a.a.bandwidth_eff * 100);
    bool train = is_training(a.w.task);
    std::cout << fmt::format("  {:<24} {:>6} {:>5} {:>9} {:<8} {:>12} {:>10} {:>10}\n", "GPU", "GiB", "cards", "GiB/GPU",
                             "NVLink", train ? "train tok/s" : "decode tok/s", "hours", "cost");
    for (auto& r : rec.rows) {
        std::string name = r.spec->name.size() > 24 ? r.spec->name.substr(0, 24) : r.spec->name;
        if (!r.cards) {
            std::cout << fmt::format("  {:<24} {:>6.0f} {:>5} {:>9} {}\n", name, r.spec->memory_size_gib, "—", "", "does not fit");
            continue;
        }
        auto tok = train ? r.speed.train_tokens_per_s : r.speed.decode_tokens_per_s;
        std::string nv = r.nvlink_needed ? (r.has_nvlink ? "needed" : "MISSING") : (r.has_nvlink ? "has" : "—");
        std::cout << fmt::format("  {:<24} {:>6.0f} {:>5} {:>9} {:<8} {:>12} {:>10} {:>10}{}\n", name, r.spec->memory_size_gib,
                                 *r.cards, g2(r.plan->need_per_gpu), nv, tok ? fmt::format("{:.0f}", *tok) : "—",
                                 r.speed.hours_for_budget ? fmt::format("{:.1f}", *r.speed.hours_for_budget) : "—",
                                 r.cost ? fmt::format("{:.0f}", *r.cost) : "—", r.rates_source == "measured" ? " (measured)" : "");
    }
    std::cout << "\n" << (rec.any_fits ? "Fits. Best: " : "Does not fit: ") << rec.suggestion << "\n";
    return code;
}

}  // namespace

void add_plan_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("plan", "VRAM, cards, speed, time and cost a workload needs");
    auto a = std::make_shared<PlanArgs>();
    sub->add_option("--model", a->model, "model from the catalog (see --list-models)");
    sub->add_option("--config", a->config, "a Hugging Face config.json")->check(CLI::ExistingFile);
    sub->add_option("--params", a->params, "a bare parameter count: 70B, 350M");
    sub->add_flag("--list-models", a->list_models, "list the catalog");
    sub->add_option("--task", a->task, "inference, full, lora, qlora, pretrain")->capture_default_str();
    sub->add_option("--recipe", a->w.recipe, "mixed-adamw, amp-adamw, fp32-adamw, bf16-adamw, adamw-8bit, sgd")->capture_default_str();
    sub->add_option("--batch", a->w.batch, "sequences per GPU")->capture_default_str();
    sub->add_option("--seq", a->w.seq, "tokens per sequence (inference: context)")->capture_default_str();
    sub->add_option("--dtype", a->w.weight_dtype, "inference weights: bf16, fp16, fp32, fp8, int8, int4")->capture_default_str();
    sub->add_option("--kv-dtype", a->w.kv_dtype, "KV cache: bf16, fp16, fp8")->capture_default_str();
    sub->add_option("--lora-rank", a->w.lora_rank)->capture_default_str();
    sub->add_option("--lora-targets", a->lora_targets, "comma list (q_proj,v_proj) or all")->capture_default_str();
    sub->add_flag("--checkpointing", a->w.checkpointing, "activation checkpointing");
    sub->add_flag("!--eager-attention", a->w.flash_attention, "attention without flash/SDPA (keeps s² scores)");
    sub->add_option("--zero", a->zero, "ZeRO stage 0-3 (default: 0 on one GPU, 3 on several)");
    sub->add_flag("--offload-optimizer", a->w.offload_optimizer);
    sub->add_flag("--offload-params", a->w.offload_params);
    sub->add_option("--tp", a->w.tp, "tensor-parallel degree (training)")->capture_default_str();
    sub->add_option("--gpus", a->gpus, "evaluate exactly N cards per SKU");
    sub->add_option("--margin", a->w.margin, "safety margin, 0.2 = 20%")->capture_default_str();
    sub->add_option("--cuda-context-gib", a->w.cuda_context_gib)->capture_default_str();
    sub->add_option("--engine-fraction", a->w.engine_memory_fraction, "usable share of a card (vLLM: 0.9)")->capture_default_str();
    sub->add_option("--activations-gib", a->w.activations_gib, "activation memory of a fixed model (CNN, UNet)");
    sub->add_option("--tokens", a->tokens, "training token budget D (time = 6·N·D / rate)");
    sub->add_option("--mfu", a->a.mfu, "compute utilization for training/prefill")->capture_default_str();
    sub->add_option("--scenario", a->scenario, "llm-finetune, diffusion, video-render, quant-backtest, av-sim")->capture_default_str();
    sub->add_option("--measured", a->measured, "use the rates a 'gpuvet check --json' report measured")->check(CLI::ExistingFile);
    sub->add_option("--prices", a->prices, "TOML [prices] per card-hour")->check(CLI::ExistingFile);
    add_output_flags(*sub, cli.global, false, true);
    sub->footer("Examples:\n  gpuvet plan --model llama-3-70b --task lora --seq 4096 --checkpointing\n"
                "  gpuvet plan --config config.json --task inference --batch 8 --seq 8192 --engine-fraction 0.9\n"
                "  gpuvet plan --params 7B --task full --recipe amp-adamw --tokens 1e9 --prices prices.toml");
    sub->callback([&g = cli.global, &action = cli.action, a] {
        g.command = "plan";
        action = [&g, a] { return run_plan(g, *a); };
    });
}

}  // namespace gpuvet
