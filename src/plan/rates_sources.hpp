// Where card rates and prices come from besides the datasheet: a `gpuvet check` JSON report
// (--measured) and a price file (--prices).
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "specs/spec_db.hpp"

namespace gpuvet {

struct MeasuredRates {
    std::optional<double> bandwidth_gbps, bf16_tflops, fp16_tflops, fp32_tflops, fp8_tflops;
};

// SKU key -> the median of what `gpuvet check` measured on GPUs of that SKU. Reads:
//   gpu.memory_bandwidth: measurements with unit "GB/s" (triad preferred, else copy, else max);
//   gpu.gemm and gpu.fp_peak: unit "TFLOPS", dtype from the key containing bf16/fp16/fp32/fp8.
std::map<std::string, MeasuredRates> read_measured_report(const std::string& path, const SpecDb& db);
// The same from text; `origin` names the file in errors. Throws gpuvet::Error (Input) only.
std::map<std::string, MeasuredRates> parse_measured_report(std::string_view json_text, const std::string& origin,
                                                           const SpecDb& db);

// TOML: `[prices]` table of "GPU name" = price per card-hour, optional `currency = "USD"`.
// A name that fits several SKUs ("A100 80GB": SXM4 and PCIe) prices each of them, and a more
// specific name ("A100 80GB SXM") wins over a broader one for its SKU.
struct PriceTable {
    std::string currency = "USD";
    std::map<std::string, double> per_card_hour;  // SKU key -> price
    std::vector<std::string> notes;               // which SKUs a broad name priced
};
PriceTable read_prices(const std::string& path, const SpecDb& db);
// The same from text; errors name origin:line:column. Throws gpuvet::Error (Input) only.
PriceTable parse_prices(std::string_view toml_text, const std::string& origin, const SpecDb& db);

}  // namespace gpuvet
