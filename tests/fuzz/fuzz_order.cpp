// Fuzzes the order parsers (--expect TEXT and --order FILE): any input either parses or raises
// gpuvet::Error. The first byte picks the parser, so one corpus feeds both.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "order/order.hpp"
#include "specs/spec_db.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const gpuvet::SpecDb db = gpuvet::SpecDb::embedded();
    if (size == 0) return 0;
    std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        if (data[0] == 'T') (void)gpuvet::parse_order_toml(text, "fuzz.toml", db);
        else (void)gpuvet::parse_expect(text, db);
    } catch (const gpuvet::Error&) {
        // The expected way to reject bad input.
    }
    return 0;
}
