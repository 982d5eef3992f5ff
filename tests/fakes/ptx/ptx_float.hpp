// Half-precision arithmetic of the PTX interpreter: f16 (IEEE binary16) and bf16 (the top half of
// an f32), each fma computed exactly and rounded once to nearest-even, as fma.rn does on the GPU.
#pragma once
#include <cstdint>

namespace fake::ptx {

struct HalfFormat {
    int mantissa_bits;  // 10 (f16), 7 (bf16)
    int exponent_bits;  // 5, 8
};
constexpr HalfFormat kF16{10, 5}, kBF16{7, 8};

double half_to_double(uint16_t bits, HalfFormat f);
// One correctly rounded fma.rn of three values of format f. NaN results are the canonical 0x7FFF.
uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c, HalfFormat f);
// Lane-wise fma of two packed values (low lane in bits 0..15).
uint32_t half2_fma(uint32_t a, uint32_t b, uint32_t c, HalfFormat f);

}  // namespace fake::ptx
