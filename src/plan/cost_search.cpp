#include "plan/cost_search.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {
// "100M", "2B", "16.4M": a token count for people (the JSON keeps the exact figure).
std::string si_count(double v) {
    static const std::pair<double, const char*> units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    for (auto& [scale, suffix] : units)
        if (v >= scale) return format_number(v / scale) + suffix;
    return format_number(v);
}
}  // namespace

JobBudget job_budget(const Workload& w, std::optional<double> tokens, std::optional<double> steps) {
    JobBudget b;
    if (tokens && steps)
        throw usage_error("--tokens and --steps both give the job's size",
                          "give one: --tokens 2e9 (tokens), or --steps 1000 (steps of batch × seq × cards)");
    if (steps && w.task == Task::Inference)
        throw usage_error("--steps counts training steps; inference has none",
                          "give --tokens N, the tokens to generate, or choose a training --task");
    if (tokens) {
        b.tokens = *tokens;
        b.how = fmt::format("{} tokens (--tokens)", si_count(*tokens));
        return b;
    }
    if (!steps) return b;
    b.steps = std::int64_t(*steps);
    b.data_parallel_cards = std::max(1, w.gpus.value_or(1) / std::max(1, w.tp));
    // An optimizer step takes --grad-accum micro-batches on every data-parallel card.
    const int accum = std::max(1, w.grad_accum);
    b.tokens = double(*b.steps) * double(accum) * double(w.batch) * double(w.seq) * double(b.data_parallel_cards);
    b.how =
        fmt::format("{} steps × {}{} seq × {} tokens × {} data-parallel card{}{} = {} tokens (--steps)", *b.steps,
                    accum > 1 ? fmt::format("{} micro-batches × ", accum) : "", w.batch, w.seq, b.data_parallel_cards,
                    b.data_parallel_cards == 1 ? "" : "s", w.gpus ? "" : " (--gpus sets it)", si_count(b.tokens));
    return b;
}

std::vector<int> search_card_counts(const Workload& w, int per_box, int max_cards) {
    std::vector<int> all;
    if (w.gpus) all = {*w.gpus};
    else {
        for (int n = 1; n <= std::min(per_box, max_cards); n *= 2) all.push_back(n);
        for (int n = 2 * per_box; n <= max_cards; n += per_box) all.push_back(n);
    }
    std::vector<int> out;
    for (int n : all)
        if (n % std::max(1, w.tp) == 0) out.push_back(n);
    return out;
}

namespace {

std::string config_name(const CostOption& o) { return fmt::format("{}× {}", o.cards, o.spec->name); }
std::string hours_text(double h) { return format_number(h, 3) + " h"; }

// "+2% cost", "−12% cost", "+0.4% cost", "the same cost": the change from `from` to `to`.
std::string cost_change(double from, double to) {
    if (from <= 0) return to <= 0 ? "the same cost" : fmt::format("+{} cost", format_fixed(to, 2));  // free card
    double p = 100.0 * (to - from) / from;
    if (std::fabs(p) < 0.05) return "the same cost";
    std::string digits = std::fabs(p) < 10 ? format_fixed(std::fabs(p), 1) : format_fixed(std::fabs(p), 0);
    return fmt::format("{}{}% cost", p > 0 ? "+" : "−", digits);
}

bool within(const CostOption& o, std::optional<double> deadline) { return !deadline || o.hours <= *deadline; }
// Costs are compared to the cent: inference on more cards often costs the same (the decode rate
// grows with the cards), and then the smaller rental is the cheapest; the fastest line shows the
// sooner one.
bool cheaper(const CostOption& x, const CostOption& y) {
    const double xc = std::round(x.cost * 100), yc = std::round(y.cost * 100);
    if (xc != yc) return xc < yc;
    return x.cards != y.cards ? x.cards < y.cards : x.hours < y.hours;
}
bool faster(const CostOption& x, const CostOption& y) {
    return x.hours != y.hours ? x.hours < y.hours : x.cost < y.cost;
}
bool same(const CostOption& x, const CostOption& y) { return x.spec == y.spec && x.cards == y.cards; }

std::string cheapest_reason(const CostSearch& s, const CostOption& c) {
    const CostOption* next = nullptr;   // the runner-up under the same deadline
    const CostOption* below = nullptr;  // the cheapest the deadline excluded
    std::size_t eligible = 0;
    for (auto& o : s.options) {
        if (within(o, s.deadline_hours)) {
            ++eligible;
            if (!same(o, c) && (!next || cheaper(o, *next))) next = &o;
        } else if (cheaper(o, c) && (!below || cheaper(o, *below))) {
            below = &o;
        }
    }
    std::string why = eligible == 1 ? "the only configuration that holds the job"
                                    : fmt::format("the lowest cost of {} configurations", eligible);
    if (s.deadline_hours) why += " that finish within " + hours_text(*s.deadline_hours);
    if (next)
        why += fmt::format("; next: {} at {} ({})", config_name(*next), cost_change(c.cost, next->cost),
                           hours_text(next->hours));
    if (below)
        why += fmt::format("; {} at {} takes {}", config_name(*below), cost_change(c.cost, below->cost),
                           hours_text(below->hours));
    return why;
}

std::string fastest_reason(const CostSearch& s, const CostOption& f) {
    std::string why;
    if (!s.cheapest) {
        why = fmt::format("the fastest of {} configurations", s.options.size());
        if (s.deadline_hours) why += ", over the " + hours_text(*s.deadline_hours) + " deadline still";
    } else if (same(f, *s.cheapest)) {
        why = "also the cheapest";
    } else {
        const CostOption& c = *s.cheapest;
        std::string what = f.spec == c.spec ? fmt::format("{:+d} cards", f.cards - c.cards)
                                            : fmt::format("{} instead of {}", config_name(f), config_name(c));
        why = fmt::format("{} cut {} to {} for {}", what, hours_text(c.hours), hours_text(f.hours),
                          cost_change(c.cost, f.cost));
    }
    // More cards of the same SKU that were slower: communication outgrew the compute they add.
    const CostOption* more = nullptr;
    for (auto& o : s.options)
        if (o.spec == f.spec && o.cards > f.cards && (!more || o.cards < more->cards)) more = &o;
    if (more && more->hours > f.hours)
        why += fmt::format("; {} cards take {} (communication {:.0f}% of a step)", more->cards, hours_text(more->hours),
                           100 * more->comm_share.value_or(0));
    return why;
}

// The speed of one configuration, or nullopt when the cards do not hold the job or have no rate.
std::optional<CostOption> price_one(const ModelArch& m, const Workload& w, const GpuSpec& g, int n, const CardRates& r,
                                    const SpeedAssumptions& a, double price) {
    MemoryPlan p = plan_memory(m, w, n);
    if (p.need_per_gpu > g.memory_size_gib * w.engine_memory_fraction * kGiB) return std::nullopt;
    SpeedEstimate sp = estimate_speed(m, w, p, r, a);
    auto rate = is_training(w.task) ? sp.train_tokens_per_s : sp.decode_tokens_per_s;
    if (!rate || !(*rate > 0) || !sp.hours_for_budget) return std::nullopt;
    CostOption o;
    o.spec = &g;
    o.cards = n;
    o.tokens_per_s = *rate;
    o.hours = *sp.hours_for_budget;
    o.price_per_card_hour = price;
    o.cost = price * n * o.hours;
    o.rates_source = r.source;
    o.nvlink_missing = needs_nvlink(n, w, p.zero_stage) && !g.nvlink_generation;
    if (sp.comm_s_per_step && sp.compute_s_per_step && *sp.comm_s_per_step > 0)
        o.comm_share = *sp.comm_s_per_step / (*sp.comm_s_per_step + *sp.compute_s_per_step);
    return o;
}

bool holds(const ModelArch& m, const Workload& w, const GpuSpec& g, const std::vector<int>& counts) {
    for (int n : counts)
        if (plan_memory(m, w, n).need_per_gpu <= g.memory_size_gib * w.engine_memory_fraction * kGiB) return true;
    return false;
}

}  // namespace

void pick_cheapest_and_fastest(CostSearch& s) {
    s.cheapest.reset();
    s.fastest.reset();
    for (auto& o : s.options) {
        if (within(o, s.deadline_hours) && (!s.cheapest || cheaper(o, *s.cheapest))) s.cheapest = o;
        if (!s.fastest || faster(o, *s.fastest)) s.fastest = o;
    }
    if (s.options.empty()) s.cheapest_absent = "no priced configuration holds the job";
    else if (!s.cheapest)
        s.cheapest_absent =
            fmt::format("none of {} configurations finishes within {}; the fastest, {}, takes {}", s.options.size(),
                        hours_text(*s.deadline_hours), config_name(*s.fastest), hours_text(s.fastest->hours));
    if (s.cheapest) s.cheapest_why = cheapest_reason(s, *s.cheapest);
    if (s.fastest) s.fastest_why = fastest_reason(s, *s.fastest);
}

CostSearch search_cost(const ModelArch& m, const Workload& w, const SpecDb& db, const Scenario& sc,
                       const SpeedAssumptions& a, const std::map<std::string, MeasuredRates>& measured,
                       const PriceTable& prices, std::optional<double> deadline_hours, int max_cards) {
    CostSearch s;
    s.deadline_hours = deadline_hours;
    s.counts = search_card_counts(w, a.cards_per_box, max_cards);
    for (auto& g : db.all()) {
        auto price = prices.per_card_hour.find(g.key);
        if (price == prices.per_card_hour.end()) {
            if (holds(m, w, g, s.counts)) s.unpriced.push_back(&g);
            continue;
        }
        CardRates r = rates_for(g, sc, measured);
        for (int n : s.counts)
            if (auto o = price_one(m, w, g, n, r, a, price->second)) s.options.push_back(*o);
    }
    pick_cheapest_and_fastest(s);
    return s;
}

}  // namespace gpuvet
