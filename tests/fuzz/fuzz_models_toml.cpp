// Fuzzes the model catalog reader (data/models.toml format): any input either parses into models
// whose counts can be taken and looked up, or raises gpuvet::Error.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "plan/model_catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto c = gpuvet::ModelCatalog::parse(text, "fuzz.toml");
        for (auto& m : c.all()) {
            (void)gpuvet::parameter_count(m);
            (void)c.find(m.key);
        }
        (void)c.closest(text.substr(0, 64));
    } catch (const gpuvet::Error&) {}
    return 0;
}
