#include "compare/offer_workload.hpp"

#include "core/strings.hpp"
#include "plan/recommender.hpp"

namespace gpuvet {

namespace {

// One offer: the planner's row for the offer's SKU, planned on what its report measured.
WorkloadOnOffer on_offer(const PlannedJob& job, const SpecDb& db, const Scenario& sc, const OfferRates& o,
                         const PriceTable* prices) {
    WorkloadOnOffer out;
    out.name = o.name;
    if (o.by_sku.empty()) {
        out.absent = "its report measured no rate of a known GPU model (gpu.gemm, gpu.fp_peak, gpu.memory_bandwidth)";
        return out;
    }
    const std::string& sku = o.by_sku.begin()->first;
    const GpuSpec* spec = db.by_key(sku);
    if (!spec) {
        out.absent = "GPU model '" + sku + "' is not in the spec database";
        return out;
    }
    out.gpu = spec->name;
    bool train = is_training(job.w.task);
    CardRates measured = rates_for(*spec, sc, o.by_sku), sheet = rates_for(*spec, sc, {});
    out.rate_label = train ? (sc.fp32 ? "FP32 TFLOPS per card" : "BF16/FP16 dense TFLOPS per card")
                           : "memory bandwidth GB/s per card";
    out.rate = train ? measured.tflops : measured.bandwidth_gbps;
    out.datasheet_rate = train ? sheet.tflops : sheet.bandwidth_gbps;
    // The one rate this job runs on: a report may have measured the other one only.
    const MeasuredRates& m = o.by_sku.begin()->second;
    auto tflops = sc.fp32 ? m.fp32_tflops : (m.bf16_tflops ? m.bf16_tflops : m.fp16_tflops);
    out.rate_measured = train ? tflops.has_value() : m.bandwidth_gbps.has_value();
    if (!out.rate_measured) out.rate.reset();
    Recommendation rec = recommend(job.model, job.w, db, sc, job.a, o.by_sku, prices);
    for (const SkuRow& r : rec.rows) {
        if (r.spec->key != sku) continue;
        if (!r.cards) {
            out.absent = "the job does not fit on " + spec->name + " within " +
                         std::to_string(job.w.gpus.value_or(64)) + " cards";
            return out;
        }
        out.cards = r.cards;
        out.tokens_per_s = train ? r.speed.train_tokens_per_s : r.speed.decode_tokens_per_s;
        out.hours = r.speed.hours_for_budget;
        out.cost = r.cost;
        return out;
    }
    out.absent = "the planner has no row for " + spec->name;
    return out;
}

}  // namespace

WorkloadComparison plan_on_offers(const PlannedJob& job, const SpecDb& db, const std::vector<OfferRates>& offers,
                                  const PriceTable* prices) {
    WorkloadComparison c;
    const Scenario& sc = find_scenario(job.scenario);
    c.training = is_training(job.w.task);
    c.job = job.model.name + ", " + to_string(job.w.task) +
            (job.w.token_budget > 0 ? ", " + format_number(job.w.token_budget) + " tokens" : std::string());
    if (prices) c.currency = prices->currency;
    for (const OfferRates& o : offers) c.offers.push_back(on_offer(job, db, sc, o, prices));
    for (std::size_t i = 0; i < c.offers.size(); ++i) {
        const WorkloadOnOffer& o = c.offers[i];
        if (o.cost && (!c.cheapest || *o.cost < *c.offers[*c.cheapest].cost)) c.cheapest = i;
        if (o.tokens_per_s && (!c.fastest || *o.tokens_per_s > *c.offers[*c.fastest].tokens_per_s)) c.fastest = i;
    }
    return c;
}

}  // namespace gpuvet
