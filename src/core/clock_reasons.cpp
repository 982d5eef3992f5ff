#include "core/clock_reasons.hpp"

#include <cstdio>

namespace gpuvet::clock_reason {

std::vector<std::string> names_of(std::uint64_t mask, bool nvml_names, const char* unknown_prefix) {
    std::vector<std::string> out;
    std::uint64_t known = 0;
    for (const Name& n : kNames) {
        known |= n.bit;
        if (mask & n.bit) out.emplace_back(nvml_names ? n.nvml : n.words);
    }
    if (std::uint64_t rest = mask & ~known) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "%s0x%llx", unknown_prefix, static_cast<unsigned long long>(rest));
        out.emplace_back(hex);
    }
    return out;
}

}  // namespace gpuvet::clock_reason
