// IEEE binary16 (f16) and bfloat16 (bf16) on the CPU, bit-exact with the GPU's round-to-nearest
// f16/bf16 fma, so the host can reproduce what the FP16/BF16 kernels compute.
// Values are carried as raw bits (uint16_t); packed pairs put lane 0 in the low 16 bits.
#pragma once
#include <cstdint>

namespace gpuvet::small_float {

enum class Format { f16, bf16 };

// NaN results are returned as 0x7FFF in both formats; callers compare NaNs as "is NaN".
inline constexpr uint16_t kCanonicalNan = 0x7FFF;

double to_double(Format f, uint16_t bits);  // exact: every f16/bf16 value is a double
uint16_t from_double(Format f, double v);   // round to nearest, ties to even; overflow -> inf
bool is_nan(Format f, uint16_t bits);

// fma(a, b, c) = a * b + c with a single rounding to nearest-even, subnormals kept
// (what fma.rn.f16x2 / fma.rn.bf16x2 do per lane).
uint16_t fma(Format f, uint16_t a, uint16_t b, uint16_t c);

inline uint16_t lane(uint32_t packed, int i) { return static_cast<uint16_t>(packed >> (16 * i)); }
inline uint32_t pack(uint16_t lo, uint16_t hi) { return uint32_t{lo} | (uint32_t{hi} << 16); }

}  // namespace gpuvet::small_float
