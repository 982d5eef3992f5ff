// Exact fma for f16/bf16: both products a*b are exact in double (22 and 16 significant bits), and
// TwoSum gives the sum s = fl(a*b + c) together with its exact error e. Rounding s to the target
// once is correct unless s lies exactly on a midpoint of the target, where the sign of e decides
// (a plain double fma would round twice there: bf16 7 * 37 - 2^-40 must give 258, not 260).
#include "ptx_float.hpp"

#include <cmath>
#include <cstring>

namespace fake::ptx {

namespace {

int bias(HalfFormat f) { return (1 << (f.exponent_bits - 1)) - 1; }
uint16_t exp_mask(HalfFormat f) { return static_cast<uint16_t>(((1u << f.exponent_bits) - 1) << f.mantissa_bits); }

// |x| (finite, > 0) rounded to f's grid with ties broken by `toward` (+1: up, -1: down, 0: even),
// encoded without the sign bit. Results past the largest finite value become infinity.
uint16_t round_magnitude(double x, int toward, HalfFormat f) {
    const int emin = 1 - bias(f);
    int e = std::ilogb(x);
    if (e < emin) e = emin;  // subnormal range: fixed quantum
    const double quantum = std::ldexp(1.0, e - f.mantissa_bits);
    const double t = x / quantum;  // exact: scaling by a power of two
    double n = std::floor(t);
    const double frac = t - n;
    if (frac > 0.5 || (frac == 0.5 && (toward > 0 || (toward == 0 && std::fmod(n, 2.0) != 0)))) n += 1;
    const double r = n * quantum;
    if (r == 0) return 0;
    const int re = std::ilogb(r);
    if (re > bias(f)) return exp_mask(f);  // overflow to infinity
    if (re < emin) return static_cast<uint16_t>(n);  // subnormal: n quanta
    const double mant = std::ldexp(r, f.mantissa_bits - re) - std::ldexp(1.0, f.mantissa_bits);
    return static_cast<uint16_t>(((re + bias(f)) << f.mantissa_bits) | static_cast<uint16_t>(mant));
}

}  // namespace

double half_to_double(uint16_t bits, HalfFormat f) {
    const bool neg = bits & 0x8000;
    const int ex = (bits & exp_mask(f)) >> f.mantissa_bits;
    const int man = bits & ((1 << f.mantissa_bits) - 1);
    double v;
    if (ex == (1 << f.exponent_bits) - 1) v = man ? NAN : INFINITY;
    else if (ex == 0) v = std::ldexp(man, 1 - bias(f) - f.mantissa_bits);
    else v = std::ldexp(man + (1 << f.mantissa_bits), ex - bias(f) - f.mantissa_bits);
    return neg ? -v : v;
}

uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c, HalfFormat f) {
    const double p = half_to_double(a, f) * half_to_double(b, f);  // exact
    const double z = half_to_double(c, f);
    const double s = p + z;
    if (std::isnan(s)) return 0x7FFF;
    if (std::isinf(s)) return static_cast<uint16_t>((s < 0 ? 0x8000 : 0) | exp_mask(f));
    // TwoSum (Knuth): e = (p + z) - s exactly.
    const double bp = s - z, bz = s - bp;
    const double e = (p - bp) + (z - bz);
    const uint16_t sign = std::signbit(s) ? 0x8000 : 0;
    if (s == 0) return sign;  // exact zero (e is 0 too), sign as IEEE addition gives it
    const int toward = e == 0 ? 0 : ((e > 0) == (s > 0) ? 1 : -1);  // in magnitude terms
    return static_cast<uint16_t>(sign | round_magnitude(std::fabs(s), toward, f));
}

uint32_t half2_fma(uint32_t a, uint32_t b, uint32_t c, HalfFormat f) {
    const uint32_t lo = half_fma(static_cast<uint16_t>(a), static_cast<uint16_t>(b), static_cast<uint16_t>(c), f);
    const uint32_t hi = half_fma(static_cast<uint16_t>(a >> 16), static_cast<uint16_t>(b >> 16),
                                 static_cast<uint16_t>(c >> 16), f);
    return lo | (hi << 16);
}

}  // namespace fake::ptx
