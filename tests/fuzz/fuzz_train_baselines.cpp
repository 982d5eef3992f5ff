// Fuzzes the training baselines reader (data/train_baselines.toml format): any input either parses
// into rows that can be looked up, or raises gpuvet::Error.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "train/baselines.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto t = gpuvet::TrainBaselines::parse(text, "fuzz.toml");
        for (const auto& b : t.all()) {
            (void)b.per_gpu();
            if (b.gpu) (void)t.find(*b.gpu, b.model, b.precision, b.method, b.gpus);
            (void)t.candidates(b.model, b.precision, b.method, b.gpus);
        }
    } catch (const gpuvet::Error&) {}
    return 0;
}
