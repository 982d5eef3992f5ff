#include "kernel_timing.hpp"

#include <cstring>
#include <string>

namespace fake {

namespace {

// The value of the parameter whose declared name ends in `suffix` (zero-extended), if any.
std::optional<uint64_t> param(const ptx::Function& f, void* const* params, const std::string& suffix) {
    for (size_t i = 0; i < f.params.size(); ++i) {
        const std::string& n = f.params[i].name;
        if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
            uint64_t v = 0;
            std::memcpy(&v, params[i], f.params[i].bytes);
            return v;
        }
    }
    return std::nullopt;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

std::optional<double> simulated_ns(const ptx::Function& f, void* const* params, uint64_t threads, const Gpu& g) {
    const std::string& k = f.name;
    const double hbm = g.hbm_bandwidth_gbps;  // GB/s = bytes per ns
    if (starts(k, "stream_")) {
        auto n = param(f, params, "_n_vec");
        if (!n) return std::nullopt;
        // Bytes moved per 16-byte vector (stream.ptx): copy reads + writes, triad 2 reads + write.
        const double per = k == "stream_copy" ? 32 : k == "stream_triad" ? 48 : 16;
        return per * double(*n) / hbm;
    }
    if (starts(k, "memtest_")) {
        auto n = param(f, params, "_n_words");
        return n ? std::optional<double>(8.0 * double(*n) / hbm) : std::nullopt;
    }
    if (starts(k, "burn_compare_")) {
        auto n = param(f, params, "_n");
        const double elem = k == "burn_compare_f32" ? 4 : 2;
        return n ? std::optional<double>(2 * elem * double(*n) / hbm) : std::nullopt;
    }
    if (starts(k, "fma_")) {
        auto it = param(f, params, "_iterations");
        if (!it) return std::nullopt;
        it = *it & 0xFFFFFFFFu;
        // fma.ptx: 128 FMA per iteration per thread, 2 flops each, 2 lanes for packed halves.
        const double lanes = k == "fma_f64" || k == "fma_f32" ? 1 : 2;
        const double tflops = k == "fma_f64"     ? g.fp64_tflops
                              : k == "fma_f32"   ? g.fp32_tflops
                              : k == "fma_f16x2" ? g.fp16_tflops
                                                 : g.bf16_tflops;
        return double(threads) * double(*it) * 256.0 * lanes / (tflops * 1e3);  // FLOP / (TFLOP/s) in ns
    }
    return std::nullopt;
}

}  // namespace fake
