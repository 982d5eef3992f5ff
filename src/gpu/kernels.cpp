#include "gpu/kernels.hpp"

#include <array>

#include "core/error.hpp"

namespace gpuvet::embedded {
std::string_view ptx_stream();
std::string_view ptx_fma();
std::string_view ptx_fma_bf16();
std::string_view ptx_memtest();
std::string_view ptx_burn_check();
}  // namespace gpuvet::embedded

namespace gpuvet::kernels {
namespace {

using P = Param;
constexpr std::array kCopy{P::ptr, P::ptr, P::u64};
constexpr std::array kRead{P::ptr, P::u64, P::ptr};
constexpr std::array kWrite{P::ptr, P::u64, P::u32};
constexpr std::array kTriad{P::ptr, P::ptr, P::ptr, P::f32, P::u64};
constexpr std::array kVerify{P::ptr, P::u64, P::u32, P::ptr};
constexpr std::array kFma64{P::ptr, P::u32, P::f64, P::f64, P::f64};
constexpr std::array kFma32{P::ptr, P::u32, P::f32, P::f32, P::f32};
constexpr std::array kFmaPacked{P::ptr, P::u32, P::b32, P::b32, P::b32};
constexpr std::array kMemWrite{P::ptr, P::u64, P::u32, P::u64};
constexpr std::array kMemVerify{P::ptr, P::u64, P::u32, P::u64, P::ptr, P::u32};
constexpr std::array kCompare{P::ptr, P::ptr, P::u64, P::f32, P::f32, P::ptr};

const std::array kModules{
    PtxModule{"stream", embedded::ptx_stream, 6, 0, 70},         PtxModule{"fma", embedded::ptx_fma, 6, 0, 70},
    PtxModule{"fma_bf16", embedded::ptx_fma_bf16, 7, 0, 80},     PtxModule{"memtest", embedded::ptx_memtest, 6, 0, 70},
    PtxModule{"burn_check", embedded::ptx_burn_check, 6, 0, 70},
};

// Block 256 runs on every target (Turing holds 1024 threads per SM, Volta/Ampere/Hopper 2048);
// 4 blocks per SM fill Turing and half-fill the others, plenty for streaming and FMA chains.
const std::array kKernels{
    KernelInfo{"stream_copy", "stream", kCopy, 70, 256, 4},
    KernelInfo{"stream_read", "stream", kRead, 70, 256, 4},
    KernelInfo{"stream_write", "stream", kWrite, 70, 256, 4},
    KernelInfo{"stream_triad", "stream", kTriad, 70, 256, 4},
    KernelInfo{"stream_verify", "stream", kVerify, 70, 256, 4},
    KernelInfo{"fma_f64", "fma", kFma64, 70, 256, 4},
    KernelInfo{"fma_f32", "fma", kFma32, 70, 256, 4},
    KernelInfo{"fma_f16x2", "fma", kFmaPacked, 70, 256, 4},
    KernelInfo{"fma_bf16x2", "fma_bf16", kFmaPacked, 80, 256, 4},
    KernelInfo{"memtest_write", "memtest", kMemWrite, 70, 256, 8},
    KernelInfo{"memtest_verify", "memtest", kMemVerify, 70, 256, 8},
    KernelInfo{"burn_compare_f32", "burn_check", kCompare, 70, 256, 4},
    KernelInfo{"burn_compare_f16", "burn_check", kCompare, 70, 256, 4},
};

}  // namespace

uint32_t param_bytes(Param p) {
    switch (p) {
        case Param::ptr:
        case Param::u64:
        case Param::f64: return 8;
        case Param::u32:
        case Param::f32:
        case Param::b32: return 4;
    }
    return 0;
}

std::span<const PtxModule> modules() { return kModules; }

const PtxModule* find_module(std::string_view stem) {
    for (const auto& m : kModules)
        if (m.stem == stem) return &m;
    return nullptr;
}

std::span<const KernelInfo> catalogue() { return kKernels; }

const KernelInfo* find_kernel(std::string_view name) {
    for (const auto& k : kKernels)
        if (k.name == name) return &k;
    return nullptr;
}

LaunchGeometry launch_geometry(const KernelInfo& k, uint32_t sm_count) {
    if (sm_count == 0) throw internal_error("launch geometry asked for a GPU with 0 SMs");
    return {sm_count * k.blocks_per_sm, k.block_threads};
}

}  // namespace gpuvet::kernels
