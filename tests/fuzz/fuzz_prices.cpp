// Fuzzes the --prices reader: any input either yields prices for known SKUs or raises gpuvet::Error.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "plan/rates_sources.hpp"
#include "specs/spec_db.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const gpuvet::SpecDb db = gpuvet::SpecDb::embedded();
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)gpuvet::parse_prices(text, "fuzz.toml", db);
    } catch (const gpuvet::Error&) {}
    return 0;
}
