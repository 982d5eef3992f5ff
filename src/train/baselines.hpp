// The public training baselines (data/train_baselines.toml) and the look-up the judge uses: the
// same GPU, model, precision, GPU count and method, never an excluded row, the newest stack first.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvet {

struct TrainBaseline {
    std::optional<std::string> gpu;  // spec key (data/gpus.toml); absent: a GPU gpuvet has no spec for
    std::string gpu_name;            // as the source wrote it
    std::string model;               // "resnet50", "bert-large", ...
    std::string precision;           // "amp-fp16", "fp32", "tf32", "bf16", ...
    std::optional<int> batch;        // per GPU; absent when the source does not state it
    int gpus = 1;
    double value = 0;               // the whole run's throughput in `unit`
    std::string unit;               // "images/s", "sequences/s", "tokens/s"
    std::string stack, stack_date;  // "NGC 24.03", "2024-03"
    std::string method, method_text, source;
    std::optional<std::string> excluded;  // why it must not be judged against
    std::string note;

    double per_gpu() const { return value / gpus; }
};

class TrainBaselines {
public:
    static const TrainBaselines& embedded();
    // Throws gpuvet::Error (Input) naming origin, the row's line and the field.
    static TrainBaselines parse(std::string_view toml_text, const std::string& origin);

    const std::vector<TrainBaseline>& all() const { return rows_; }
    // The row to judge against: `gpu`, `model`, `precision`, `method`, `gpus` all equal, not
    // excluded; of several, the newest stack_date. Null when there is none.
    const TrainBaseline* find(std::string_view gpu, std::string_view model, std::string_view precision,
                              std::string_view method, int gpus) const;
    // Every judgeable row of that model, precision, method and GPU count, whatever the GPU (one per
    // GPU, the newest): what "nearest GPU" is chosen from.
    std::vector<const TrainBaseline*> candidates(std::string_view model, std::string_view precision,
                                                 std::string_view method, int gpus) const;

private:
    std::vector<TrainBaseline> rows_;
};

}  // namespace gpuvet
