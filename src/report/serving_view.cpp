#include "report/serving_view.hpp"

#include <cmath>
#include <fmt/format.h>

#include "core/strings.hpp"
#include "report/text_layout.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

template <class T>
Json opt(const std::optional<T>& v) {
    return v ? Json(*v) : Json(nullptr);
}

std::string rate(const std::optional<double>& v) { return v ? format_number(*v) + " tok/s" : "—"; }

// Label, GiB and how, with the explanation wrapped under the item when the line would pass 100.
void line(std::ostream& o, const std::string& label, double bytes, const std::string& how) {
    std::string head = fmt::format("  {:<36} {:>9}", label, format_fixed(bytes / kGiB, 2));
    if (how.empty()) o << head << "\n";
    else if (visible_width(head) + 2 + visible_width(how) <= 100) o << head << "  " << how << "\n";
    else o << head << "\n" << wrap("      ", how, 100, 6) << "\n";
}

}  // namespace

const SkuRow* serving_row(const PlanView& v) {
    const SkuRow *fitting = nullptr, *any = nullptr;
    for (auto& r : v.rec.rows) {
        if (!r.serving) continue;
        if (r.cards && *r.cards == v.memory.gpus) return &r;
        if (r.cards && !fitting) fitting = &r;
        if (!any) any = &r;
    }
    return fitting ? fitting : any;
}

Json serving_to_json(const ServingCapacity& c) {
    Json terms = Json::array();
    for (auto& t : c.terms)
        terms.push_back({{"key", t.key},
                         {"label", t.label},
                         {"bytes_per_gpu", t.bytes_per_gpu},
                         {"gib_per_gpu", t.bytes_per_gpu / kGiB},
                         {"how", t.how}});
    return Json{{"card", c.card},
                {"gpus", c.gpus},
                {"engine",
                 {{"name", c.engine.name},
                  {"max_batched_tokens", c.engine.max_batched_tokens},
                  {"chunked_prefill", c.engine.chunked_prefill},
                  {"max_num_seqs", c.engine.max_num_seqs},
                  {"block_tokens", c.engine.block_tokens}}},
                {"engine_fraction", c.fraction},
                {"total_bytes_per_gpu", c.total_bytes},
                {"budget_bytes_per_gpu", c.budget_bytes},
                {"profile_tokens", c.profile_tokens},
                {"terms", terms},
                {"kv_cache_bytes_per_gpu", c.kv_bytes},
                {"kv_cache_gib_per_gpu", c.kv_bytes / kGiB},
                {"kv_bytes_per_token_per_gpu", c.kv_bytes_per_token},
                {"kv_bytes_per_token_how", c.kv_how},
                {"kv_cache_blocks", c.blocks},
                {"kv_cache_tokens", c.kv_tokens},
                {"seq_tokens", c.seq},
                {"max_concurrent_sequences", c.max_concurrency},
                {"fits", c.fits},
                {"problem", c.problem.empty() ? Json(nullptr) : Json(c.problem)},
                {"ideas", c.ideas},
                {"notes", c.notes},
                {"rate_sequences", c.rate_batch},
                {"decode_tokens_per_s", opt(c.decode_tokens_per_s)},
                {"prefill_tokens_per_s", opt(c.prefill_tokens_per_s)},
                {"rates_absent_reason", c.rates_absent_reason.empty() ? Json(nullptr) : Json(c.rates_absent_reason)}};
}

void render_serving(std::ostream& o, const PlanView& v) {
    const SkuRow* row = serving_row(v);
    if (!row) return;
    const ServingCapacity& c = *row->serving;
    const ServingEngine& e = c.engine;
    o << "\n"
      << wrap("",
              fmt::format("Serving capacity on {}× {}, per GPU ({}: {} batched tokens, {} sequences, blocks of "
                          "{} tokens; --max-batched-tokens, --engine-fraction):",
                          c.gpus, c.card, e.name, e.max_batched_tokens, e.max_num_seqs, e.block_tokens),
              100, 2)
      << "\n";
    o << fmt::format("  {:<36} {:>9}  {}\n", "item", "GiB", "how it is counted");
    line(o, "budget", c.budget_bytes,
         fmt::format("{:.2f} GiB reported × {:.2f} (--engine-fraction)", c.total_bytes / kGiB, c.fraction));
    for (auto& t : c.terms) line(o, "− " + t.label, t.bytes_per_gpu, t.how);
    line(o, "= KV cache", c.kv_bytes, "");
    o << wrap("  ", fmt::format("KV per token per GPU: {:.0f} B ({})", c.kv_bytes_per_token, c.kv_how), 100, 4) << "\n";
    o << fmt::format("  KV cache: {} tokens ({} blocks of {})\n", c.kv_tokens, c.blocks, e.block_tokens);
    o << fmt::format("  Maximum concurrency for {} tokens per request (--seq): {:.2f}x\n", c.seq, c.max_concurrency);
    if (c.fits)
        o << wrap("  ",
                  fmt::format("At {} requests at once (speed model, all {} card(s)): decode {}, prefill {}{}",
                              c.rate_batch, c.gpus, rate(c.decode_tokens_per_s), rate(c.prefill_tokens_per_s),
                              c.rates_absent_reason.empty() ? "" : "; " + c.rates_absent_reason),
                  100, 4)
          << "\n";
    else {
        o << wrap("  Does not serve: ", c.problem, 100, 4) << "\n";
        std::string ideas;
        for (auto& i : c.ideas) ideas += (ideas.empty() ? "" : "; ") + i;
        if (!ideas.empty()) o << wrap("  would help: ", ideas, 100, 4) << "\n";
    }
    if (!row->cards)
        o << wrap("  note: ",
                  "the memory plan above, with its --margin, does not fit this card; these are the engine's own "
                  "figures at the asked card count",
                  100, 8)
          << "\n";
    for (auto& n : c.notes) o << wrap("  note: ", n, 100, 8) << "\n";
}

std::string kv_tokens_cell(const ServingCapacity& c) {
    if (c.kv_tokens >= 10000000) return format_fixed(double(c.kv_tokens) / 1e6, 1) + "M";
    return std::to_string(c.kv_tokens);
}

std::string concurrency_cell(const ServingCapacity& c) {
    if (!c.fits) return "<1";
    double x = c.max_concurrency;
    return format_fixed(x, x < 10 ? 2 : (x < 100 ? 1 : 0));
}

}  // namespace gpuvet
