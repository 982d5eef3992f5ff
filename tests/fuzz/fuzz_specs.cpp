// Fuzzes the spec-file parser (--specs FILE): any input either merges or raises gpuvet::Error.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "specs/spec_db.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gpuvet::SpecDb db;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        db.merge_toml(text, "fuzz.toml");
        for (auto& s : db.all()) (void)db.try_match(s.name);
        (void)db.try_match(text.substr(0, 64));
        (void)db.closest(text.substr(0, 64));
    } catch (const gpuvet::Error&) {
        // The expected way to reject bad input.
    }
    return 0;
}
