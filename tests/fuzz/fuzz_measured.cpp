// Fuzzes the --measured report reader: any JSON, valid or not, either yields rates or raises
// gpuvet::Error.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "plan/rates_sources.hpp"
#include "specs/spec_db.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const gpuvet::SpecDb db = gpuvet::SpecDb::embedded();
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        (void)gpuvet::parse_measured_report(text, "fuzz.json", db);
    } catch (const gpuvet::Error&) {}
    return 0;
}
