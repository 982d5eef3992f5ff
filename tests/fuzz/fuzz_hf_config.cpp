// Fuzzes the config.json reader (--config FILE): any input either yields a model whose counts can
// be taken, or raises gpuvet::Error.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "plan/hf_config.hpp"
#include "plan/model_arch.hpp"
#include "plan/quantization.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        gpuvet::ModelArch m = gpuvet::parse_hf_config(text, "fuzz.json");
        (void)gpuvet::parameter_count(m);
        (void)gpuvet::active_parameter_count(m);
        (void)gpuvet::kv_bytes_per_token(m, 2);
        if (m.quant) (void)m.quant->weight_bytes();  // the module-by-module layout of quantization_config
    } catch (const gpuvet::Error&) {
        // The expected way to reject bad input.
    }
    return 0;
}
