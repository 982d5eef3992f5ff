#include "plan/rates_sources.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <toml++/toml.h>
#include <vector>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {
std::string slurp(const std::string& path, const char* flag) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error(std::string("cannot read ") + path, std::string("check the path given to ") + flag);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
std::optional<double> median(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
}  // namespace

std::map<std::string, MeasuredRates> read_measured_report(const std::string& path, const SpecDb& db) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(slurp(path, "--measured"));
    } catch (const nlohmann::json::exception& e) {
        throw input_error(path + ": not a gpuvet JSON report (" + e.what() + ")", "pass the file 'gpuvet check --json' wrote");
    }
    if (!j.is_object() || !j.contains("checks") || !j["checks"].is_array())
        throw input_error(path + ": no \"checks\" array", "pass the file 'gpuvet check --json' wrote");
    std::map<int, std::string> sku_of;
    if (j.contains("gpus") && j["gpus"].is_array())
        for (auto& g : j["gpus"])
            if (g.is_object() && g.value("index", -1) >= 0 && g.contains("sku") && g["sku"].is_string()) {
                auto m = db.try_match(g["sku"].get<std::string>());
                if (m) sku_of[g["index"].get<int>()] = m->spec->key;
            }
    struct Acc { std::vector<double> bw, bf16, fp16, fp32, fp8; };
    std::map<std::string, Acc> acc;
    for (auto& c : j["checks"]) {
        if (!c.is_object() || !c.contains("gpu") || !c["gpu"].is_number_integer()) continue;
        auto it = sku_of.find(c["gpu"].get<int>());
        if (it == sku_of.end() || !c.contains("measurements") || !c["measurements"].is_array()) continue;
        std::string key = c.value("key", "");
        Acc& a = acc[it->second];
        std::optional<double> triad, copy, best;
        for (auto& m : c["measurements"]) {
            if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) continue;
            double v = m["value"].get<double>();
            std::string mk = to_lower(m.value("key", "")), unit = m.value("unit", "");
            if (key == "gpu.memory_bandwidth" && unit == "GB/s") {
                if (mk.find("triad") != std::string::npos) triad = v;
                else if (mk.find("copy") != std::string::npos) copy = v;
                best = std::max(best.value_or(0), v);
            } else if ((key == "gpu.gemm" || key == "gpu.fp_peak") && unit == "TFLOPS") {
                // gpu.gemm holds tensor-core figures; gpu.fp_peak's fp32 is the vector rate.
                if (mk.find("bf16") != std::string::npos && key == "gpu.gemm") a.bf16.push_back(v);
                else if (mk.find("fp16") != std::string::npos && key == "gpu.gemm") a.fp16.push_back(v);
                else if (mk.find("fp8") != std::string::npos) a.fp8.push_back(v);
                else if (mk.find("fp32") != std::string::npos && mk.find("tf32") == std::string::npos && key == "gpu.fp_peak")
                    a.fp32.push_back(v);
            }
        }
        if (auto bw = triad ? triad : copy ? copy : best) a.bw.push_back(*bw);
    }
    std::map<std::string, MeasuredRates> out;
    for (auto& [sku, a] : acc)
        out[sku] = {median(a.bw), median(a.bf16), median(a.fp16), median(a.fp32), median(a.fp8)};
    return out;
}

PriceTable read_prices(const std::string& path, const SpecDb& db) {
    toml::table t;
    try {
        t = toml::parse(slurp(path, "--prices"), path);
    } catch (const toml::parse_error& e) {
        throw input_error(path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
    }
    PriceTable p;
    p.currency = t["currency"].value_or(std::string("USD"));
    auto* prices = t["prices"].as_table();
    if (!prices) throw input_error(path + ": no [prices] table", "write e.g. [prices]\n\"h100 sxm\" = 2.49");
    for (auto& [k, v] : *prices) {
        auto price = v.value<double>();
        if (!price || *price < 0) throw input_error(path + ": price of '" + std::string(k.str()) + "' must be a number >= 0");
        SpecMatch m = db.match(k.str());
        p.per_card_hour[m.spec->key] = *price;
    }
    return p;
}

}  // namespace gpuvet
