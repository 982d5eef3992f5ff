// Exact fma for f16/bf16: both products a*b are exact in double (22 and 16 significant bits), and
// TwoSum gives the sum s = fl(a*b + c) together with its exact error e. Rounding s to the target
// once is correct unless s lies exactly on a midpoint of the target, where the sign of e decides
// (a plain double fma would round twice there: bf16 7 * 37 - 2^-40 must give 258, not 260).
// The rounding works on the bits of s (FMA kernels run millions of these per launch).
#include "ptx_float.hpp"

#include <bit>
#include <cmath>
#include <vector>

namespace fake::ptx {

namespace {

int bias(HalfFormat f) { return (1 << (f.exponent_bits - 1)) - 1; }
uint16_t inf_bits(HalfFormat f) { return static_cast<uint16_t>(((1u << f.exponent_bits) - 1) << f.mantissa_bits); }

double decode(uint16_t bits, HalfFormat f) {
    const bool neg = bits & 0x8000;
    const int ex = (bits & inf_bits(f)) >> f.mantissa_bits;
    const int man = bits & ((1 << f.mantissa_bits) - 1);
    double v;
    if (ex == (1 << f.exponent_bits) - 1) v = man ? NAN : INFINITY;
    else if (ex == 0) v = std::ldexp(man, 1 - bias(f) - f.mantissa_bits);
    else v = std::ldexp(man + (1 << f.mantissa_bits), ex - bias(f) - f.mantissa_bits);
    return neg ? -v : v;
}

// |s| (finite, non-zero double) rounded to f, ties broken by `toward` (+1 up, -1 down, 0 even),
// encoded without the sign bit; past the largest finite value: infinity.
uint16_t round_magnitude(double s, int toward, HalfFormat f) {
    const uint64_t u = std::bit_cast<uint64_t>(std::fabs(s));
    const int e = static_cast<int>(u >> 52) - 1023;  // s is never a double subnormal here
    const uint64_t mant = (u & ((1ull << 52) - 1)) | (1ull << 52);
    const int emin = 1 - bias(f);
    const int shift = 52 - f.mantissa_bits + (e < emin ? emin - e : 0);
    if (shift > 53) return 0;  // under half the smallest subnormal: rounds to zero whatever e is
    uint64_t keep = mant >> shift;
    const uint64_t rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (toward > 0 || (toward == 0 && (keep & 1))))) ++keep;
    if (e < emin) return static_cast<uint16_t>(keep);  // subnormal (or, carried, the smallest normal)
    int field = e + bias(f);
    if (keep >> (f.mantissa_bits + 1)) keep >>= 1, ++field;  // rounding carried into a new bit
    if (field >= (1 << f.exponent_bits) - 1) return inf_bits(f);
    return static_cast<uint16_t>((field << f.mantissa_bits) | (keep & ((1u << f.mantissa_bits) - 1)));
}

const std::vector<double>& table(HalfFormat f) {
    static const auto make = [](HalfFormat g) {
        std::vector<double> t(65536);
        for (uint32_t b = 0; b < 65536; ++b) t[b] = decode(static_cast<uint16_t>(b), g);
        return t;
    };
    static const std::vector<double> f16 = make(kF16), bf16 = make(kBF16);
    return f.exponent_bits == kF16.exponent_bits ? f16 : bf16;
}

}  // namespace

double half_to_double(uint16_t bits, HalfFormat f) { return table(f)[bits]; }

namespace {

uint16_t compute_fma(uint16_t a, uint16_t b, uint16_t c, HalfFormat f) {
    const std::vector<double>& t = table(f);
    const double p = t[a] * t[b];  // exact
    const double z = t[c];
    const double s = p + z;
    if (std::isnan(s)) return 0x7FFF;
    if (std::isinf(s)) return static_cast<uint16_t>((s < 0 ? 0x8000 : 0) | inf_bits(f));
    const uint16_t sign = std::signbit(s) ? 0x8000 : 0;
    if (s == 0) return sign;  // exact zero (its error is 0 too), signed as IEEE addition gives it
    // TwoSum (Knuth): e = (p + z) - s exactly.
    const double bp = s - z, bz = s - bp;
    const double e = (p - bp) + (z - bz);
    const int toward = e == 0 ? 0 : ((e > 0) == (s > 0) ? 1 : -1);  // in magnitude terms
    return static_cast<uint16_t>(sign | round_magnitude(s, toward, f));
}

}  // namespace

// fma is a pure function of 48 bits of operands, and the FMA chains soon repeat operands (a chain
// settles on its fixed point), so a small cache of recent results saves most of the arithmetic.
uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c, HalfFormat f) {
    struct Entry {
        uint64_t key = ~0ull;
        uint16_t value = 0;
    };
    thread_local Entry cache[4096];
    const uint64_t key = a | uint64_t{b} << 16 | uint64_t{c} << 32 | uint64_t(f.exponent_bits) << 48;
    Entry& e = cache[(key * 0x9E3779B97F4A7C15ull) >> 52];
    if (e.key != key) e = {key, compute_fma(a, b, c, f)};
    return e.value;
}

uint32_t half2_fma(uint32_t a, uint32_t b, uint32_t c, HalfFormat f) {
    const uint32_t lo = half_fma(static_cast<uint16_t>(a), static_cast<uint16_t>(b), static_cast<uint16_t>(c), f);
    const uint32_t hi =
        half_fma(static_cast<uint16_t>(a >> 16), static_cast<uint16_t>(b >> 16), static_cast<uint16_t>(c >> 16), f);
    return lo | (hi << 16);
}

}  // namespace fake::ptx
