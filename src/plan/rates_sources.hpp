// Where card rates and prices come from besides the datasheet: a `gpuvet check` JSON report
// (--measured) and a price file (--prices).
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

struct MeasuredRates {
    std::optional<double> bandwidth_gbps, bf16_tflops, fp16_tflops, fp32_tflops, fp8_tflops;
};

// SKU key -> the median of what `gpuvet check` measured on GPUs of that SKU, by the checks' own
// measurement keys: gpu.memory_bandwidth's triad_gbps (else copy_gbps, else the larger of
// read_gbps and write_gbps), gpu.gemm's bf16/fp16/fp8_tflops, gpu.fp_peak's fp32_tflops. A rate
// beyond what any GPU reaches is an Input error naming `origin`.
std::map<std::string, MeasuredRates> measured_rates(const Report& r, const std::string& origin, const SpecDb& db);
// The same from a report file or text, through the one report reader (core/report_reader: its
// schema version checked). Throws gpuvet::Error (Input) only.
std::map<std::string, MeasuredRates> read_measured_report(const std::string& path, const SpecDb& db);
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
