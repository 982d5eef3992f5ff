// Fuzzes the reader of NCCL's log (src/gpu/nccl_log.cpp): each rank writes its own file, which
// any process of the job may have cut short or interleaved. Any input must parse, and what it
// finds must hold together.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gpu/nccl_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    gpuvet::NcclLog log = gpuvet::parse_nccl_log(text);
    for (const auto& c : log.channels) {
        if (c.via.empty() || c.from_rank < 0 || c.to_rank < 0 || c.channel < 0) std::abort();
        if (c.socket() && !c.network()) std::abort();
    }
    for (const auto& n : log.nics)
        if (n.name.empty() || n.port < 0) std::abort();
    if (log.channels.size() > size) std::abort();
    return 0;
}
