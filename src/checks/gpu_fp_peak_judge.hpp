// gpu.fp_peak's judge: the FMA rates per precision and the threads whose result was wrong, as
// measured, turned into the result's measurements, verdict, summary and findings. No GPU, no I/O.
// Shared by the CUDA and the HIP measurements.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet::measure {

// Inputs exact in every format (docs/kernels.md): a = 0.9375, b = 0.125, x0 = 1; packed pairs for
// the half-precision kernels, the same in both lanes.
inline constexpr std::uint32_t kF16A = 0x3B803B80u, kF16B = 0x30003000u, kF16X = 0x3C003C00u;
inline constexpr std::uint32_t kBF16A = 0x3F703F70u, kBF16B = 0x3E003E00u, kBF16X = 0x3F803F80u;

// How many thread results of FMA kernel `kernel` (fma_f64, fma_f32, fma_f16x2, fma_bf16x2; one
// result of `out_bytes` per thread in `raw`) differ from the CPU reference for those inputs.
std::uint64_t wrong_fma_results(std::string_view kernel, std::size_t out_bytes, const std::vector<unsigned char>& raw,
                                std::uint32_t iterations);

// One precision on one GPU: measured (tflops), or absent with the reason (the GPU has no such unit).
struct FmaRate {
    std::string key;                                 // "fp64_tflops"
    std::string label;                               // "FP64 FMA"
    std::optional<double> GpuSpec::*spec = nullptr;  // the datasheet figure it is held against
    std::optional<double> tflops;                    // median over the timed launches
    std::string absent_reason;
    std::uint64_t wrong = 0, threads = 0;  // threads whose stored result differs from the reference
};

// Measurements in the order given (each graded against the datasheet when it has the figure:
// below 80% WARN, 70% FAIL), a FAIL finding per precision with wrong results, and the summary.
void judge_fp_peak(const std::vector<FmaRate>& rates, const GpuSpec* sp, int gpu, CheckResult& r);

}  // namespace gpuvet::measure
