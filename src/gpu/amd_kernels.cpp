#include "gpu/amd_kernels.hpp"

#include <array>

#include "core/error.hpp"

namespace gpuvet::amd_kernels {
namespace {

using P = kernels::Param;
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

// Work-groups of 256 (four 64-wide waves on CDNA, eight 32-wide on RDNA); 8 groups per CU fill
// every CDNA CU's 32 wave slots for streaming and keep several waves per SIMD for the FMA chains.
const std::array kKernels{
    KernelInfo{"stream_copy", kCopy, 256, 8},       KernelInfo{"stream_read", kRead, 256, 8},
    KernelInfo{"stream_write", kWrite, 256, 8},     KernelInfo{"stream_triad", kTriad, 256, 8},
    KernelInfo{"stream_verify", kVerify, 256, 8},   KernelInfo{"fma_f64", kFma64, 256, 8},
    KernelInfo{"fma_f32", kFma32, 256, 8},          KernelInfo{"fma_f16x2", kFmaPacked, 256, 8},
    KernelInfo{"memtest_write", kMemWrite, 256, 8}, KernelInfo{"memtest_verify", kMemVerify, 256, 8},
};

}  // namespace

const CodeObject* code_object_for(std::string_view gfx) {
    for (const auto& c : code_objects())
        if (c.gfx == gfx) return &c;
    return nullptr;
}

std::string targets_list() {
    std::string s;
    for (const auto& c : code_objects()) s += (s.empty() ? "" : ", ") + std::string(c.gfx);
    return s;
}

std::span<const KernelInfo> catalogue() { return kKernels; }

const KernelInfo* find_kernel(std::string_view name) {
    for (const auto& k : kKernels)
        if (k.name == name) return &k;
    return nullptr;
}

kernels::LaunchGeometry launch_geometry(const KernelInfo& k, uint32_t cu_count) {
    if (cu_count == 0) throw internal_error("launch geometry asked for a GPU with 0 compute units");
    return {cu_count * k.groups_per_cu, k.block_threads};
}

}  // namespace gpuvet::amd_kernels
