#include "compare/offers.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/strings.hpp"
#include "compare/offer_figures.hpp"

namespace gpuvet {

const OfferFigure* Offer::figure(const std::string& id) const {
    for (auto& f : figures)
        if (f.id == id) return &f;
    return nullptr;
}

namespace {

std::string pct(double share) { return format_fixed(100 * share, 0) + "%"; }
std::string fig(double v, const std::string& unit) { return format_number(v, 3) + " " + unit; }

Offer describe(const OfferInput& in, const std::map<std::string, double>& prices) {
    const Report& r = in.report;
    Offer o;
    o.name = in.name;
    o.path = in.path;
    o.gpu_model = gpu_model_of(r);
    o.gpu_count = int(r.gpus.size());
    o.verdict = r.verdict;
    if (!prices.empty()) {
        auto it = prices.find(o.gpu_model);
        if (it == prices.end())
            throw input_error(in.path + ": the price file names no price for " + o.gpu_model,
                              "add a line for it under [prices], e.g. \"" + o.gpu_model + "\" = 2.49 (per card-hour)");
        o.price_per_card_hour = it->second;
    }
    for (const MetricDef& def : offer_metrics()) {
        auto samples = metric_samples(r, def);
        if (samples.empty()) continue;
        std::vector<double> values, shares, healthy;
        OfferFigure f;
        f.id = def.id;
        f.label = def.label;
        f.unit = def.unit;
        for (auto& s : samples) {
            values.push_back(s.value);
            if (s.spec && *s.spec > 0) {
                shares.push_back(s.value / *s.spec);
                if (s.healthy_floor) healthy.push_back(*s.healthy_floor / *s.spec);
            }
            if (f.source.empty()) f.source = s.source;
        }
        f.per_gpu = median(values);
        auto low = std::min_element(samples.begin(), samples.end(),
                                    [](const MetricSample& x, const MetricSample& y) { return x.value < y.value; });
        if (low->gpu && low->value < 0.95 * *f.per_gpu) {
            f.worst_gpu = low->gpu;
            f.worst = low->value;
        }
        f.share_of_spec = median(shares);
        f.healthy_share = median(healthy);
        f.below_class = f.share_of_spec && f.healthy_share && *f.share_of_spec < *f.healthy_share;
        if (def.per_money && o.price_per_card_hour && *o.price_per_card_hour > 0)
            f.per_money = *f.per_gpu / *o.price_per_card_hour;
        o.figures.push_back(f);
    }
    for (auto& c : r.checks)
        if (c.verdict == Verdict::Fail || c.verdict == Verdict::Error)
            o.failed.push_back(c.key + (c.gpu ? " GPU " + std::to_string(*c.gpu) : "") + ": " + c.summary);
    return o;
}

bool go(const Offer& o) { return o.verdict == RunVerdict::Go || o.verdict == RunVerdict::GoWithWarnings; }

// The deciding metric: the first worth money that every offer measured; nullptr when none is.
const MetricDef* deciding_metric(const std::vector<Offer>& offers) {
    for (const MetricDef& def : offer_metrics()) {
        if (!def.per_money) continue;
        if (std::all_of(offers.begin(), offers.end(), [&](const Offer& o) { return o.figure(def.id) != nullptr; }))
            return &def;
    }
    return nullptr;
}

std::string failed_acceptance(const Offer& lose) {
    return lose.name + " did not pass acceptance (" + to_string(lose.verdict) + ")" +
           (lose.failed.empty() ? "" : ": " + lose.failed.front()) +
           (lose.failed.size() > 1 ? " (+" + std::to_string(lose.failed.size() - 1) + " more)" : "");
}

// Without a throughput figure on every offer, acceptance alone can still decide: the one offer
// that passed is the only one worth paying for.
void decide_by_acceptance(OfferComparison& cmp) {
    std::vector<std::size_t> passing;
    for (std::size_t i = 0; i < cmp.offers.size(); ++i)
        if (go(cmp.offers[i])) passing.push_back(i);
    if (passing.size() == 1 && cmp.offers.size() > 1) {
        cmp.winner = passing.front();
        cmp.decided_by = "acceptance: the only offer that passed";
        for (std::size_t i = 0; i < cmp.offers.size(); ++i)
            if (i != passing.front()) cmp.reasons.push_back(failed_acceptance(cmp.offers[i]));
        cmp.notes.push_back(
            "no throughput figure (burn, GEMM or memory bandwidth) was measured on every offer, so none is "
            "compared per money; run 'gpuvet check' with gpu.burn or gpu.gemm on each to weigh them");
        return;
    }
    cmp.notes.push_back(
        "no winner: no throughput figure (burn, GEMM or memory bandwidth) was measured on every "
        "offer; run 'gpuvet check' with gpu.burn or gpu.gemm on each");
}

// Why `lose` ranks below `win`: acceptance, the deciding figure, and each other figure where the
// loser falls short by more than 5 % (with its share of spec).
void explain_loss(OfferComparison& cmp, const Offer& win, const Offer& lose, const MetricDef& decide, double win_score,
                  double lose_score, const std::string& unit) {
    if (go(win) && !go(lose)) cmp.reasons.push_back(failed_acceptance(lose));
    double a = win_score, b = lose_score;
    if (b > 0 && std::fabs(a / b - 1) < 0.01)
        cmp.reasons.push_back(win.name + " and " + lose.name + " tie on " + cmp.decided_by + " (" + fig(a, unit) + ")");
    else
        cmp.reasons.push_back(win.name + " gives " + fig(a, unit) + " against " + fig(b, unit) + " on " + lose.name +
                              (b > 0 ? " (+" + format_fixed(100 * (a / b - 1), 0) + "%)" : "") + ": " + cmp.decided_by);
    for (auto& lf : lose.figures) {
        const OfferFigure* wf = win.figure(lf.id);
        if (!wf || !wf->per_gpu || !lf.per_gpu || lf.id == decide.id || *lf.per_gpu >= 0.95 * *wf->per_gpu) continue;
        std::string share = lf.share_of_spec ? " (" + pct(*lf.share_of_spec) + " of spec)" : "";
        cmp.reasons.push_back(lose.name + ": " + lf.label + " " + fig(*lf.per_gpu, lf.unit) + share + " against " +
                              fig(*wf->per_gpu, wf->unit) + " on " + win.name);
    }
}

}  // namespace

OfferComparison compare_offers(std::vector<OfferInput> inputs, const std::map<std::string, double>& prices,
                               const std::string& currency) {
    OfferComparison cmp;
    cmp.currency = prices.empty() ? "" : currency;
    for (auto& in : inputs) cmp.offers.push_back(describe(in, prices));
    for (auto& o : cmp.offers)
        for (auto& f : o.figures)
            if (f.below_class)
                cmp.notes.push_back(o.name + " is below its class: " + f.label + " at " + pct(*f.share_of_spec) +
                                    " of spec, where healthy " + o.gpu_model + " reach at least " +
                                    pct(*f.healthy_share));
    const MetricDef* decide = deciding_metric(cmp.offers);
    if (!decide) {
        decide_by_acceptance(cmp);
        return cmp;
    }
    bool priced = !prices.empty();
    cmp.decided_by = std::string(decide->label) + (priced ? " per " + currency + "/h" : " per GPU");
    auto score = [&](const Offer& o) {
        const OfferFigure* f = o.figure(decide->id);
        return priced ? f->per_money.value_or(0) : *f->per_gpu;
    };
    // A GO offer beats a NO-GO one whatever its figures: a box that fails acceptance is not an offer.
    std::vector<std::size_t> order(cmp.offers.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (go(cmp.offers[a]) != go(cmp.offers[b])) return go(cmp.offers[a]);
        return score(cmp.offers[a]) > score(cmp.offers[b]);
    });
    cmp.winner = order.front();
    const Offer& win = cmp.offers[order.front()];
    std::string unit = std::string(decide->unit) + (priced ? " per " + currency + "/h" : "");
    for (std::size_t k = 1; k < order.size(); ++k) {
        const Offer& lose = cmp.offers[order[k]];
        explain_loss(cmp, win, lose, *decide, score(win), score(lose), unit);
    }
    return cmp;
}

}  // namespace gpuvet
