// The figures that tell offers (and fleet nodes) apart, drawn from a check report: per GPU where
// the check is per GPU, per box otherwise. A figure not measured is absent, never 0.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

// One metric: where it is read from and whether it is worth money (value per currency-hour).
struct MetricDef {
    const char* id;     // "bf16_tflops"
    const char* label;  // "BF16 GEMM"
    const char* unit;   // "TFLOPS"
    const char* check;  // "gpu.gemm"
    const char* measurement;
    bool per_money;  // shown per currency-hour
};
// In order of what decides between offers: sustained throughput first, then peaks, then links.
const std::vector<MetricDef>& offer_metrics();

// One GPU's (or the box's) value of a metric, with its share of the datasheet figure and the
// share healthy hardware of the class reaches at least (the reference's warn bound over its spec).
struct MetricSample {
    std::optional<int> gpu;
    double value = 0;
    std::optional<double> spec;
    std::optional<double> healthy_floor;  // absolute, same unit
    std::string source;
};

// Every sample of `def` in the report, in report order.
std::vector<MetricSample> metric_samples(const Report& r, const MetricDef& def);

// The report's GPU model: the SKU key when every GPU was identified as one, else the names.
std::string gpu_model_of(const Report& r);

}  // namespace gpuvet
