#include "plan/rates_sources.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <toml++/toml.h>
#include <vector>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/report_reader.hpp"
#include "core/text_limits.hpp"
#include "core/strings.hpp"
#include "specs/toml_input.hpp"

namespace gpuvet {

namespace {
struct Acc {
    std::vector<double> bw, bf16, fp16, fp32, fp8;
};
}  // namespace

std::map<std::string, MeasuredRates> read_measured_report(const std::string& path, const SpecDb& db) {
    return measured_rates(parse_report(read_input_file(path, "--measured", kReportFileLimitBytes), path), path, db);
}

std::map<std::string, MeasuredRates> parse_measured_report(std::string_view text, const std::string& origin,
                                                           const SpecDb& db) {
    return measured_rates(parse_report(text, origin), origin, db);
}

namespace {

// GB/s and TFLOPS of one GPU; a datasheet's largest figures are in the tens of thousands.
constexpr NumberRule kMeasuredRateRule{
    .min = 0, .max = 1e7, .min_open = true, .what = "a measured rate", .example = "3350"};

}  // namespace

std::map<std::string, MeasuredRates> measured_rates(const Report& r, const std::string& origin, const SpecDb& db) {
    std::map<int, std::string> sku_of;
    for (const GpuSummary& g : r.gpus)
        if (g.sku)
            if (auto m = db.try_match(*g.sku)) sku_of[g.index] = m->spec->key;
    std::map<std::string, Acc> acc;
    for (const CheckResult& c : r.checks) {
        if (!c.gpu) continue;
        auto it = sku_of.find(*c.gpu);
        if (it == sku_of.end()) continue;
        Acc& a = acc[it->second];
        std::map<std::string, double> rate;  // measurement key -> value, for this check
        for (const Measurement& m : c.measurements) {
            if (!m.value || !std::isfinite(*m.value) || *m.value <= 0) continue;
            // A rate this plan uses replaces a datasheet figure: it must be one a GPU could reach.
            if (m.unit == "GB/s" || m.unit == "TFLOPS")
                check_number_field(origin, c.key + " " + m.key, *m.value, kMeasuredRateRule,
                                   "pass the file 'gpuvet check --json' wrote");
            rate[m.key] = *m.value;
        }
        auto take = [&](const char* key, std::vector<double>& into) {
            if (auto f = rate.find(key); f != rate.end()) into.push_back(f->second);
        };
        if (c.key == "gpu.memory_bandwidth") {
            // Triad is the STREAM figure; copy next; else the best of what was measured.
            std::optional<double> bw;
            if (rate.count("triad_gbps")) bw = rate.at("triad_gbps");
            else if (rate.count("copy_gbps")) bw = rate.at("copy_gbps");
            else
                for (const char* key : {"read_gbps", "write_gbps"})
                    if (rate.count(key)) bw = std::max(bw.value_or(0), rate.at(key));
            if (bw) a.bw.push_back(*bw);
        } else if (c.key == "gpu.gemm") {
            // Tensor-core figures: the dense rates a training step runs on.
            take("bf16_tflops", a.bf16);
            take("fp16_tflops", a.fp16);
            take("fp8_tflops", a.fp8);
        } else if (c.key == "gpu.fp_peak") {
            take("fp32_tflops", a.fp32);  // the vector rate (tf32 is a tensor format, never fp32)
        }
    }
    std::map<std::string, MeasuredRates> out;
    for (auto& [sku, a] : acc) out[sku] = {median(a.bw), median(a.bf16), median(a.fp16), median(a.fp32), median(a.fp8)};
    return out;
}

PriceTable read_prices(const std::string& path, const SpecDb& db) {
    return parse_prices(read_input_file(path, "--prices"), path, db);
}

namespace {
// Per card-hour; no rental comes near a million in any currency.
constexpr NumberRule kPriceRule{.min = 0, .max = 1e6, .what = "a price per card-hour", .example = "2.49"};
std::string where(const std::string& path, const toml::source_region& r) { return toml_where(path, r); }
}  // namespace

PriceTable parse_prices(std::string_view text, const std::string& path, const SpecDb& db) {
    const char* example = "write e.g.\ncurrency = \"USD\"\n[prices]\n\"H100 SXM\" = 2.49";
    toml::table t = parse_toml_document(text, path, example);
    PriceTable p;
    if (auto* c = t.get("currency")) {
        auto cur = c->value<std::string>();
        if (!cur || cur->empty() || cur->size() > 8)
            throw input_error(where(path, c->source()) + ": currency must be a short text such as \"USD\"", example);
        p.currency = *cur;
    }
    auto* node = t.get("prices");
    if (!node) throw input_error(path + ": no [prices] table", example);
    // An unknown key is refused: a mistyped `curency` would otherwise price everything in USD.
    for (auto& [k, v] : t)
        if (k.str() != "currency" && k.str() != "prices")
            throw input_error(where(path, k.source()) + ": unknown key '" + std::string(k.str()) +
                                  "'; a price file has currency = \"...\" and a [prices] table",
                              example);
    auto* prices = node->as_table();
    if (!prices) throw input_error(where(path, node->source()) + ": 'prices' must be a table", example);
    if (prices->empty()) throw input_error(where(path, node->source()) + ": [prices] lists no GPU", example);
    struct Claim {
        double price;
        std::size_t fits;  // how many SKUs the name fitted: fewer is more specific
        std::string name;
    };
    std::map<std::string, Claim> claims;                     // SKU key -> the price that holds
    std::vector<std::pair<std::string, std::size_t>> broad;  // names that fitted several SKUs
    for (auto& [k, v] : *prices) {
        auto price = v.value<double>();
        if (!price || !(v.is_integer() || v.is_floating_point()))
            throw input_error(
                where(path, v.source()) + ": price of '" + std::string(k.str()) + "' must be a number (per card-hour)",
                example);
        check_number_field(where(path, v.source()), "price of '" + std::string(k.str()) + "'", *price, kPriceRule,
                           example);
        auto m = db.try_match(k.str());
        if (!m) {
            auto near = db.closest(k.str());
            std::string list;
            for (auto& n : near) list += (list.empty() ? "" : ", ") + n;
            throw input_error(where(path, k.source()) + ": unknown GPU '" + std::string(k.str()) + "'",
                              "closest names: " + list + " (gpuvet specs lists them all)");
        }
        std::vector<const GpuSpec*> fits{m->spec};
        fits.insert(fits.end(), m->alternatives.begin(), m->alternatives.end());
        std::string name(k.str());
        for (const GpuSpec* s : fits) {
            auto it = claims.find(s->key);
            if (it == claims.end() || fits.size() < it->second.fits) {
                claims[s->key] = Claim{*price, fits.size(), name};
            } else if (fits.size() == it->second.fits && it->second.price != *price) {
                throw input_error(where(path, k.source()) + ": '" + name + "' and '" + it->second.name + "' give " +
                                      s->name + " different prices",
                                  "name each GPU once, or add the form factor or memory (\"A100 80GB SXM\")");
            }
        }
        if (fits.size() > 1) broad.emplace_back(name, fits.size());
        else if (to_lower(name) != to_lower(m->spec->name) && name != m->spec->key)
            p.notes.push_back("'" + name + "' is taken as " + m->spec->name);
    }
    for (auto& [key, c] : claims) p.per_card_hour[key] = c.price;
    for (auto& [name, n] : broad) {
        std::string skus;
        for (auto& [key, c] : claims)
            if (c.name == name) skus += (skus.empty() ? "" : ", ") + db.by_key(key)->name;
        if (skus.empty()) continue;  // more specific names priced every SKU it fitted
        p.notes.push_back("'" + name + "' fits " + std::to_string(n) + " SKUs and prices " + skus +
                          " (add the form factor or memory to price one)");
    }
    return p;
}

}  // namespace gpuvet
