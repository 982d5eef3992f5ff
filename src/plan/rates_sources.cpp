#include "plan/rates_sources.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>
#include <vector>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/text_limits.hpp"
#include "core/strings.hpp"
#include "specs/toml_input.hpp"

namespace gpuvet {

std::map<std::string, MeasuredRates> read_measured_report(const std::string& path, const SpecDb& db) {
    return parse_measured_report(read_input_file(path, "--measured", kReportFileLimitBytes), path, db);
}

namespace {
// A string member or "" (reports from other tools may hold anything under these keys).
std::string str_member(const nlohmann::json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}
// A GPU index: an integer in [0, 65535], else absent.
// GB/s and TFLOPS of one GPU; a datasheet's largest figures are in the tens of thousands.
constexpr NumberRule kMeasuredRateRule{0, 1e7, true, false, false, NumberUnit::None, "a measured rate", "", "3350"};
std::optional<int> index_member(const nlohmann::json& o, const char* k) {
    auto it = o.find(k);
    if (it == o.end() || !it->is_number_integer()) return std::nullopt;
    auto v = it->get<std::int64_t>();
    if (v < 0 || v > 65535) return std::nullopt;
    return int(v);
}
}  // namespace

std::map<std::string, MeasuredRates> parse_measured_report(std::string_view text, const std::string& path,
                                                           const SpecDb& db) {
    check_json_nesting(text, path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw input_error(path + ": not a gpuvet JSON report (" + e.what() + ")",
                          "pass the file 'gpuvet check --json' wrote");
    }
    if (!j.is_object() || !j.contains("checks") || !j["checks"].is_array())
        throw input_error(path + ": no \"checks\" array", "pass the file 'gpuvet check --json' wrote");
    std::map<int, std::string> sku_of;
    if (j.contains("gpus") && j["gpus"].is_array())
        for (auto& g : j["gpus"])
            if (g.is_object()) {
                auto idx = index_member(g, "index");
                std::string sku = str_member(g, "sku");
                if (!idx || sku.empty()) continue;
                if (auto m = db.try_match(sku)) sku_of[*idx] = m->spec->key;
            }
    struct Acc {
        std::vector<double> bw, bf16, fp16, fp32, fp8;
    };
    std::map<std::string, Acc> acc;
    for (auto& c : j["checks"]) {
        if (!c.is_object()) continue;
        auto gpu = index_member(c, "gpu");
        if (!gpu) continue;
        auto it = sku_of.find(*gpu);
        if (it == sku_of.end() || !c.contains("measurements") || !c["measurements"].is_array()) continue;
        std::string key = str_member(c, "key");
        Acc& a = acc[it->second];
        std::optional<double> triad, copy, best;
        for (auto& m : c["measurements"]) {
            if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) continue;
            double v = m["value"].get<double>();
            if (!std::isfinite(v) || v <= 0) continue;
            std::string mk = to_lower(str_member(m, "key")), unit = str_member(m, "unit");
            // A rate this plan uses replaces a datasheet figure: it must be one a GPU could reach.
            if ((unit == "GB/s" || unit == "TFLOPS") &&
                (key == "gpu.memory_bandwidth" || key == "gpu.gemm" || key == "gpu.fp_peak"))
                check_number_field(path, key + " " + mk, v, kMeasuredRateRule,
                                   "pass the file 'gpuvet check --json' wrote");
            if (key == "gpu.memory_bandwidth" && unit == "GB/s") {
                if (mk.find("triad") != std::string::npos) triad = v;
                else if (mk.find("copy") != std::string::npos) copy = v;
                best = std::max(best.value_or(0), v);
            } else if ((key == "gpu.gemm" || key == "gpu.fp_peak") && unit == "TFLOPS") {
                // gpu.gemm holds tensor-core figures; gpu.fp_peak's fp32 is the vector rate.
                if (mk.find("bf16") != std::string::npos && key == "gpu.gemm") a.bf16.push_back(v);
                else if (mk.find("fp16") != std::string::npos && key == "gpu.gemm") a.fp16.push_back(v);
                else if (mk.find("fp8") != std::string::npos) a.fp8.push_back(v);
                else if (mk.find("fp32") != std::string::npos && mk.find("tf32") == std::string::npos &&
                         key == "gpu.fp_peak")
                    a.fp32.push_back(v);
            }
        }
        if (auto bw = triad ? triad : copy ? copy : best) a.bw.push_back(*bw);
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
constexpr NumberRule kPriceRule{0, 1e6, false, false, false, NumberUnit::None, "a price per card-hour", "", "2.49"};
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
