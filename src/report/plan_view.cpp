#include "report/plan_view.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <sstream>
#include <vector>

#include "core/strings.hpp"
#include "plan/quantization.hpp"
#include "report/plan_cost_view.hpp"
#include "report/plan_levers_view.hpp"
#include "report/serving_view.hpp"
#include "report/text_layout.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

std::string g2(double bytes) { return format_fixed(bytes / kGiB, 2); }

const char* phase_name(Phase ph) {
    switch (ph) {
        case Phase::Always: return "always";
        case Phase::Loss: return "loss";
        case Phase::Saved: return "saved";
        case Phase::Backward: return "backward";
        case Phase::Gradients: return "gradients";
        case Phase::Pageable: return "pageable";
    }
    return "?";
}
const char* moment_name(Moment m) {
    switch (m) {
        case Moment::Loss: return "loss";
        case Moment::BackwardStart: return "backward_start";
        case Moment::BackwardEnd: return "backward_end";
    }
    return "?";
}

// Training items that live in one phase only are marked, so the peak reads as a maximum.
bool has_phases(const MemoryPlan& p) {
    for (auto& i : p.items)
        if (i.phase != Phase::Always) return true;
    return false;
}
// The moments (1 loss, 2 start of backward, 3 end of backward) an item is alive at.
std::string phase_mark(Phase ph) {
    if (ph == Phase::Always) return "";
    if (ph == Phase::Pageable) return " [P]";
    std::vector<std::string> m;
    for (Moment t : {Moment::Loss, Moment::BackwardStart, Moment::BackwardEnd})
        if (alive_at(ph, t)) m.push_back(fmt::format("{}", int(t) + 1));
    return fmt::format(" [{}]", fmt::join(m, ","));
}

Json moments_json(Phase ph) {
    Json a = Json::array();
    for (Moment t : {Moment::Loss, Moment::BackwardStart, Moment::BackwardEnd})
        if (alive_at(ph, t)) a.push_back(moment_name(t));
    return a;
}

Json to_json(const MemoryPlan& p) {
    Json items = Json::array();
    for (auto& i : p.items)
        items.push_back({{"key", i.key},
                         {"label", i.label},
                         {"bytes_per_gpu", i.bytes_per_gpu},
                         {"gib_per_gpu", i.bytes_per_gpu / kGiB},
                         {"bytes_total", i.bytes_per_gpu * p.gpus},
                         {"how", i.how},
                         {"phase", phase_name(i.phase)},
                         {"moments", moments_json(i.phase)}});
    return {{"gpus", p.gpus},
            {"zero_stage", p.zero_stage},
            {"bytes_per_param", p.bytes_per_param},
            {"bytes_per_param_how", p.bytes_per_param_how},
            {"items", items},
            {"subtotal_bytes_per_gpu", p.subtotal_per_gpu},
            {"margin_bytes_per_gpu", p.margin_bytes},
            {"need_bytes_per_gpu", p.need_per_gpu},
            {"need_gib_per_gpu", p.need_per_gpu / kGiB},
            {"need_bytes_total", p.total()},
            {"cpu_offload_bytes", p.cpu_bytes},
            {"forward_peak_bytes_per_gpu", p.forward_peak},
            {"backward_start_peak_bytes_per_gpu", p.backward_start_peak},
            {"backward_peak_bytes_per_gpu", p.backward_peak},
            {"peak_moment", has_phases(p) ? Json(moment_name(p.peak_moment())) : Json(nullptr)},
            {"pageable_bytes_per_gpu", p.pageable_bytes},
            {"notes", p.notes}};
}

// The checkpoint's quantization as its config.json states it: which modules keep which dtype.
Json quantization_json(const ModelArch& m) {
    if (!m.quant) return nullptr;
    const Quantization& q = *m.quant;
    Json parts = Json::array();
    for (const WeightPart& p : q.parts) {
        const char* kind = p.kind == WeightPart::Quantized     ? "quantized"
                           : p.kind == WeightPart::Unconverted ? "unconverted"
                                                               : "rest";
        parts.push_back({{"kind", kind},
                         {"dtype", p.dtype},
                         {"params", p.params},
                         {"bytes", p.bytes},
                         {"modules", p.modules},
                         {"why", p.why}});
    }
    return {{"method", q.method},
            {"dtype", q.dtype},
            {"kv_cache_dtype", q.kv_cache_dtype ? Json(*q.kv_cache_dtype) : Json(nullptr)},
            {"not_converted_field", q.not_converted_field},
            {"weight_bytes", q.weight_bytes()},
            {"parts", parts}};
}

template <class T>
Json opt(const std::optional<T>& v) {
    return v ? Json(*v) : Json(nullptr);
}

void render_memory(std::ostream& o, const PlanView& v) {
    // Wrapped: a --config path makes the name as long as the folder it sits in.
    o << wrap("",
              fmt::format(
                  "{} — {} — {:.3f}B parameters{}", v.model.name, to_string(v.w.task), v.memory.params / 1e9,
                  v.model.is_moe() ? fmt::format(" ({:.2f}B active per token)", v.memory.active_params / 1e9) : ""),
              100, 2)
      << "\n";
    if (v.memory.bytes_per_param > 0) o << wrap("  ", v.memory.bytes_per_param_how, 100, 4) << "\n";
    if (v.memory.trainable_params && v.memory.trainable_params != v.memory.params)
        o << fmt::format("  trainable: {} parameters (LoRA rank {})\n", v.memory.trainable_params, v.w.lora_rank);
    o << fmt::format("\nMemory on {} GPU(s), per GPU{}:\n", v.memory.gpus,
                     v.memory.zero_stage ? fmt::format(", ZeRO-{}", v.memory.zero_stage) : "");
    o << fmt::format("  {:<36} {:>9}  {}\n", "item", "GiB", "how it is counted");
    // The explanation goes on the same line when it fits in 100 columns, else wrapped under the item.
    auto line = [&](const std::string& l, double b, const std::string& how) {
        std::string head = fmt::format("  {:<36} {:>9}", l, g2(b));
        if (how.empty()) {
            o << head << "\n";
            return;
        }
        if (visible_width(head) + 2 + visible_width(how) <= 100) {
            o << head << "  " << how << "\n";
            return;
        }
        o << head << "\n" << wrap("      ", how, 100, 6) << "\n";
    };
    const bool phased = has_phases(v.memory);
    for (auto& i : v.memory.items) line(i.label + (phased ? phase_mark(i.phase) : ""), i.bytes_per_gpu, i.how);
    if (phased) {
        const Moment peak = v.memory.peak_moment();
        auto mark = [&](Moment t) { return std::string(t == peak ? "  <- peak" : ""); };
        line("1 at the loss", v.memory.forward_peak, "unmarked + items marked 1" + mark(Moment::Loss));
        line("2 at the start of backward", v.memory.backward_start_peak,
             "unmarked + items marked 2" + mark(Moment::BackwardStart));
        line("3 at the end of backward", v.memory.backward_peak,
             "unmarked + items marked 3" + mark(Moment::BackwardEnd));
        line("peak (the largest, not the sum)", v.memory.subtotal_per_gpu, "");
    }
    line(fmt::format("margin ({:.0f}%)", v.w.margin * 100), v.memory.margin_bytes, "--margin");
    line("need per GPU", v.memory.need_per_gpu, "");
    if (v.memory.gpus > 1) line("need in total", v.memory.total(), fmt::format("× {} GPUs", v.memory.gpus));
    if (v.memory.cpu_bytes > 0)
        line("host RAM for offload", v.memory.cpu_bytes,
             v.memory.cpu_how.empty() ? "DeepSpeed estimate" : v.memory.cpu_how);
    if (v.memory.pageable_bytes > 0)
        o << wrap("  note: ",
                  fmt::format("[P] paged optimizer states ({} GiB) are in CUDA unified memory, outside the need: they "
                              "stay on the GPU while it has room and page to host RAM when it runs short",
                              g2(v.memory.pageable_bytes)),
                  100, 8)
          << "\n";
    for (auto& n : v.memory.notes) o << wrap("  note: ", n, 100, 8) << "\n";
}

void render_cards(std::ostream& o, const PlanView& v) {
    bool train = is_training(v.w.task);
    // Models without a rate model (image pipelines) get no rate column rather than a column of "—".
    bool show_tok = false;
    std::string no_rate;
    for (auto& r : v.rec.rows) {
        if (train ? r.speed.train_tokens_per_s : r.speed.decode_tokens_per_s) show_tok = true;
        if (r.cards && no_rate.empty()) no_rate = r.speed.absent_reason;
    }
    if (show_tok)
        o << fmt::format("\nCards, best first for scenario {} (speed at {:.0f}% utilization{}):\n", v.scenario.key,
                         v.a.mfu * 100,
                         train ? "" : fmt::format(", decode at {:.0f}% of bandwidth", v.a.bandwidth_eff * 100));
    else
        o << fmt::format("\nCards, best first for scenario {} (memory only: {}):\n", v.scenario.key,
                         no_rate.empty() ? "no rate for this workload" : no_rate);
    std::string cur = v.prices ? v.prices->currency : "";
    // Columns without data for this workload (no --tokens, no --prices, inference) are left out.
    bool show_comm = train, show_hours = v.tokens > 0, show_cost = (v.prices != nullptr);
    bool show_kv = serving_row(v) != nullptr;  // serving: KV tokens and requests of --seq per row
    auto row = [&](const std::string& gpu, const std::string& gib, const std::string& cards, const std::string& need,
                   const std::string& nv, const std::string& tok, const std::string& comm, const std::string& hours,
                   const std::string& cost, const std::string& kv = "", const std::string& conc = "") {
        std::string l = fmt::format("  {:<22} {:>4} {:>5} {:>8} {:<7}", gpu, gib, cards, need, nv);
        if (show_tok) l += fmt::format(" {:>12}", tok);
        if (show_comm) l += fmt::format(" {:>5}", comm);
        if (show_hours) l += fmt::format(" {:>8}", hours);
        if (show_cost) l += fmt::format(" {:>10}", cost);
        if (show_kv) l += fmt::format(" {:>7} {:>5}", kv, conc);
        while (!l.empty() && l.back() == ' ') l.pop_back();
        o << l << "\n";
    };
    row("GPU", "GiB", "cards", "GiB/card", "NVLink", train ? "train tok/s" : "decode tok/s", "comm", "hours",
        "cost " + cur, "KV tok", "conc");
    row("", "", "", "need", "", "per box", "%", "", "", "", "@seq");
    int shown = 0, hidden = 0;
    for (auto& r : v.rec.rows) {
        if (!v.all && (shown >= v.top || !r.cards)) {
            ++hidden;
            continue;
        }
        ++shown;
        if (!r.cards) {
            o << fmt::format("  {:<22} {:>4.0f} {:>5}  does not fit within {} cards\n", r.spec->name,
                             r.spec->memory_size_gib, "—", v.w.gpus.value_or(64));
            continue;
        }
        auto tok = train ? r.speed.train_tokens_per_s : r.speed.decode_tokens_per_s;
        std::string nv = r.nvlink_needed ? (r.has_nvlink ? "needed" : "MISSING") : (r.has_nvlink ? "has" : "—");
        std::string comm = "—";
        if (r.speed.comm_s_per_step && r.speed.compute_s_per_step && *r.speed.comm_s_per_step > 0)
            comm = fmt::format(
                "{:.0f}", 100 * *r.speed.comm_s_per_step / (*r.speed.comm_s_per_step + *r.speed.compute_s_per_step));
        row(r.spec->name + (r.rates_source == "measured" ? "*" : ""), fmt::format("{:.0f}", r.spec->memory_size_gib),
            std::to_string(*r.cards), g2(r.plan->need_per_gpu), nv, tok ? format_number(*tok) : "—", comm,
            r.speed.hours_for_budget ? format_fixed(*r.speed.hours_for_budget, 1) : "—",
            r.cost ? format_fixed(*r.cost, 0) : "—", r.serving ? kv_tokens_cell(*r.serving) : "—",
            r.serving ? concurrency_cell(*r.serving) : "—");
    }
    if (hidden)
        o << fmt::format("  ({} more SKU(s){}; --all lists every one)\n", hidden, v.rec.any_fits ? "" : " (none fits)");
    std::string legend = show_tok ? "per box: tokens per second of all the row's cards together." : "";
    if (show_comm)
        legend +=
            " comm: share of a training step spent exchanging weights and gradients over the card's link "
            "(NVLink, else PCIe), no overlap assumed.";
    if (show_kv)
        legend +=
            " KV tok: tokens of KV cache vLLM would allocate on the row's cards (tensor parallel: "
            "each card holds its KV heads of every token); conc: requests of --seq tokens held at once.";
    legend += std::string(legend.empty() ? "" : " ") +
              "NVLink MISSING: the plan splits the model across cards that only have PCIe.";
    if (v.measured) legend += " *: rates measured by the --measured report.";
    o << wrap("  ", legend, 100, 2) << "\n";
    if (v.prices && show_cost)
        for (auto& n : v.prices->notes) o << wrap("  prices: ", n, 100, 10) << "\n";
    render_levers(o, v.rec.levers);
    o << "\n" << wrap(v.rec.any_fits ? "Fits: " : "Does not fit: ", v.rec.suggestion, 100, 2) << "\n";
}

// Every knob of the workload, so `gpuvet compare --workload` plans the same job again on measured rates.
Json workload_json(const PlanView& v) {
    const Workload& w = v.w;
    return Json{{"task", to_string(w.task)},
                {"model_key", v.model.key},
                {"model_type", v.model.model_type},
                {"fixed_params", v.model.fixed_params},
                {"recipe", w.recipe},
                {"batch", w.batch},
                {"seq", w.seq},
                {"weight_dtype", w.weight_dtype},
                {"kv_dtype", w.kv_dtype},
                {"lora_rank", w.lora_rank},
                {"lora_targets", w.lora_targets},
                {"checkpointing", w.checkpointing},
                {"selective_checkpointing", w.selective_checkpointing},
                {"offload_activations", w.offload_activations},
                {"compiled", w.compiled},
                {"loss", w.loss ? Json(*w.loss) : Json(nullptr)},
                {"grad_accum", w.grad_accum},
                {"optimizer_in_backward", w.optimizer_in_backward},
                {"flash_attention", w.flash_attention},
                {"zero_stage", opt(w.zero_stage)},
                {"offload_optimizer", w.offload_optimizer},
                {"offload_params", w.offload_params},
                {"tp", w.tp},
                {"gpus", opt(w.gpus)},
                {"margin", w.margin},
                {"cuda_context_gib", w.cuda_context_gib},
                {"engine_memory_fraction", w.engine_memory_fraction},
                {"activations_gib", opt(w.activations_gib)},
                {"prefill_chunk", w.prefill_chunk},
                {"token_budget", w.token_budget},
                {"max_batched_tokens", opt(w.max_batched_tokens)},
                {"mfu", v.a.mfu},
                {"bandwidth_efficiency", v.a.bandwidth_eff},
                {"image_width", w.image_width},
                {"image_height", w.image_height},
                {"vae_slicing", w.vae_slicing},
                {"guidance_cfg", opt(w.guidance_cfg)}};
}

}  // namespace

namespace {
Json plan_body(const PlanView& v) {
    Json rows = Json::array();
    for (auto& r : v.rec.rows)
        rows.push_back({{"sku", r.spec->key},
                        {"name", r.spec->name},
                        {"memory_gib", r.spec->memory_size_gib},
                        {"usable_gib", r.usable_gib},
                        {"cards", opt(r.cards)},
                        {"need_bytes_per_gpu", r.plan ? Json(r.plan->need_per_gpu) : Json(nullptr)},
                        {"nvlink_needed", r.nvlink_needed},
                        {"has_nvlink", r.has_nvlink},
                        {"decode_tokens_per_s", opt(r.speed.decode_tokens_per_s)},
                        {"prefill_tokens_per_s", opt(r.speed.prefill_tokens_per_s)},
                        {"train_tokens_per_s", opt(r.speed.train_tokens_per_s)},
                        {"hours_for_budget", opt(r.speed.hours_for_budget)},
                        {"cost", opt(r.cost)},
                        {"compute_s_per_step", opt(r.speed.compute_s_per_step)},
                        {"comm_s_per_step", opt(r.speed.comm_s_per_step)},
                        {"rates_source", r.rates_source},
                        {"score", r.score},
                        {"serving", r.serving ? serving_to_json(*r.serving) : Json(nullptr)}});
    return Json{
        {"model",
         {{"key", v.model.key},
          {"name", v.model.name},
          {"params", parameter_count(v.model)},
          {"active_params", active_parameter_count(v.model)},
          {"source", v.model.source},
          {"quantization", quantization_json(v.model)}}},
        {"task", to_string(v.w.task)},
        {"workload", workload_json(v)},
        {"scenario", v.scenario.key},
        {"assumptions", {{"mfu", v.a.mfu}, {"bandwidth_efficiency", v.a.bandwidth_eff}, {"margin", v.w.margin}}},
        {"memory", to_json(v.memory)},
        {"gpus", rows},
        {"serving", serving_row(v) ? serving_to_json(*serving_row(v)->serving) : Json(nullptr)},
        {"fits", v.rec.any_fits},
        {"suggestion", v.rec.suggestion},
        {"levers", levers_to_json(v.rec.levers)},
        {"currency", v.prices ? Json(v.prices->currency) : Json(nullptr)},
        {"price_notes", v.prices ? Json(v.prices->notes) : Json::array()}};
}
}  // namespace

std::string render_plan(const PlanView& v) {
    std::ostringstream o;
    render_memory(o, v);
    render_serving(o, v);
    render_cards(o, v);
    render_cost(o, v);
    return o.str();
}

Json plan_to_json(const PlanView& v) {
    Json body = plan_body(v);
    add_cost_json(body, v);
    return body;
}

}  // namespace gpuvet
