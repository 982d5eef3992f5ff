// Correctly rounded f16/bf16 fma for the tests, by exact integer arithmetic: every finite value is
// M * 2^E with integer M, so a*b + c is an exact __int128 at the smallest exponent involved, then
// rounded to nearest-even once. Independent of the interpreter's TwoSum method (ptx_float.cpp).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace ptxtest {

struct Half {
    int man_bits, exp_bits;
    int bias() const { return (1 << (exp_bits - 1)) - 1; }
};
constexpr Half kHalf{10, 5}, kBfloat{7, 8};

struct Exact {  // (-1)^neg * m * 2^e
    bool neg;
    uint64_t m;
    int e;
};
inline bool special(uint16_t v, Half f) {
    return ((v >> f.man_bits) & ((1 << f.exp_bits) - 1)) == (1 << f.exp_bits) - 1;
}
inline Exact decode(uint16_t v, Half f) {
    const int ex = (v >> f.man_bits) & ((1 << f.exp_bits) - 1);
    const uint64_t man = v & ((1u << f.man_bits) - 1);
    if (ex == 0) return {bool(v & 0x8000), man, 1 - f.bias() - f.man_bits};
    return {bool(v & 0x8000), man | (1ull << f.man_bits), ex - f.bias() - f.man_bits};
}
inline double to_double(uint16_t v, Half f) {
    if (special(v, f)) return (v & ((1u << f.man_bits) - 1)) ? NAN : (v & 0x8000 ? -INFINITY : INFINITY);
    Exact x = decode(v, f);
    return (x.neg ? -1.0 : 1.0) * std::ldexp(double(x.m), x.e);
}

inline uint16_t exact_fma(uint16_t a, uint16_t b, uint16_t c, Half f) {
    if (special(a, f) || special(b, f) || special(c, f)) {  // infinities and NaNs: double is exact
        const double r = to_double(a, f) * to_double(b, f) + to_double(c, f);
        if (std::isnan(r)) return 0x7FFF;
        if (std::isinf(r)) return uint16_t((r < 0 ? 0x8000 : 0) | (((1 << f.exp_bits) - 1) << f.man_bits));
        throw std::logic_error("finite result from a special input");
    }
    const Exact x = decode(a, f), y = decode(b, f);
    Exact z = decode(c, f);
    int ep = x.e + y.e;
    if (z.m == 0) z.e = ep;  // a zero's exponent is arbitrary: keep the shifts small
    if (x.m * y.m == 0) ep = z.e;
    const int lo = std::min(ep, z.e);
    if (ep - lo > 60 || z.e - lo > 60) throw std::logic_error("exponents too far apart for the reference");
    __int128 p = static_cast<__int128>(x.m * y.m) << (ep - lo);
    __int128 q = static_cast<__int128>(z.m) << (z.e - lo);
    __int128 n = (x.neg != y.neg ? -p : p) + (z.neg ? -q : q);
    // An exact zero is +0, unless both addends are negative (then both are -0).
    if (n == 0) return x.neg != y.neg && z.neg ? 0x8000 : 0;
    const bool neg = n < 0;
    unsigned __int128 u = neg ? static_cast<unsigned __int128>(-n) : static_cast<unsigned __int128>(n);
    int top = 127;
    while (!((u >> top) & 1)) --top;
    const int emin = 1 - f.bias();
    const int quantum = std::max(top + lo, emin) - f.man_bits;  // exponent of the result's last bit
    unsigned __int128 k;
    if (quantum <= lo) {
        k = u << (lo - quantum);
    } else {
        const int sh = quantum - lo;
        k = u >> sh;
        const unsigned __int128 rem = u - (k << sh), half = static_cast<unsigned __int128>(1) << (sh - 1);
        if (rem > half || (rem == half && (k & 1))) ++k;
    }
    int e = quantum;
    if (k >> (f.man_bits + 1)) k >>= 1, ++e;  // rounding carried into a new bit
    const uint16_t sign = neg ? 0x8000 : 0;
    if (k >> f.man_bits) {  // normal
        const int field = e + f.man_bits + f.bias();
        if (field >= (1 << f.exp_bits) - 1) return uint16_t(sign | (((1 << f.exp_bits) - 1) << f.man_bits));
        return uint16_t(sign | (field << f.man_bits) | uint16_t(k & ((1u << f.man_bits) - 1)));
    }
    return uint16_t(sign | uint16_t(k));  // subnormal (e == emin - man_bits)
}

}  // namespace ptxtest
