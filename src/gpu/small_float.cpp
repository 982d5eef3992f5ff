#include "gpu/small_float.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuvet::small_float {
namespace {

struct Layout {
    int mant_bits;  // stored fraction bits
    int exp_bits;
    int bias() const { return (1 << (exp_bits - 1)) - 1; }
    int emin() const { return 1 - bias(); }
    int emax() const { return bias(); }
    uint16_t exp_mask() const { return static_cast<uint16_t>(((1u << exp_bits) - 1) << mant_bits); }
    uint16_t sign_bit() const { return 0x8000; }
};

Layout layout(Format f) { return f == Format::f16 ? Layout{10, 5} : Layout{7, 8}; }

// Rounds the exact value s + e (|e| at most half an ulp of s in double, as from TwoSum) to the
// format. e only matters when s falls exactly half-way between two format values.
uint16_t round_to_format(Layout L, double s, double e) {
    if (std::isnan(s)) return kCanonicalNan;
    const uint16_t sign = std::signbit(s) ? L.sign_bit() : 0;
    if (std::isinf(s)) return sign | L.exp_mask();
    const double a = std::fabs(s);
    if (a == 0) return sign;                                // an exact zero: e is 0 too
    const double toward_larger = std::signbit(s) ? -e : e;  // error in the magnitude's direction

    int E = 0;
    std::frexp(a, &E);  // a = m * 2^E, m in [0.5, 1): unbiased exponent E - 1
    int ex = std::max(E - 1, L.emin());
    if (ex > L.emax()) return sign | L.exp_mask();
    const double ulp = std::ldexp(1.0, ex - L.mant_bits);
    const double q = a / ulp;  // exact: scaling by a power of two
    const double fl = std::floor(q);
    const double frac = q - fl;
    double r = fl;
    if (frac > 0.5) {
        r = fl + 1;
    } else if (frac == 0.5) {
        if (toward_larger > 0) r = fl + 1;
        else if (toward_larger == 0 && std::fmod(fl, 2.0) != 0) r = fl + 1;
    }
    const double hidden = std::ldexp(1.0, L.mant_bits);
    if (r == 2 * hidden) {  // rounding carried into the next binade
        r = hidden;
        ++ex;
    }
    if (ex > L.emax()) return sign | L.exp_mask();
    const auto ri = static_cast<uint32_t>(r);
    if (r < hidden) return static_cast<uint16_t>(sign | ri);  // subnormal (ex == emin)
    const auto biased = static_cast<uint32_t>(ex + L.bias());
    return static_cast<uint16_t>(sign | (biased << L.mant_bits) | (ri - static_cast<uint32_t>(hidden)));
}

}  // namespace

double to_double(Format f, uint16_t bits) {
    const Layout L = layout(f);
    const bool neg = bits & L.sign_bit();
    const uint32_t e = (bits & L.exp_mask()) >> L.mant_bits;
    const uint32_t m = bits & ((1u << L.mant_bits) - 1);
    double v = 0;
    if (e == (1u << L.exp_bits) - 1) {
        v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    } else if (e == 0) {
        v = std::ldexp(static_cast<double>(m), L.emin() - L.mant_bits);
    } else {
        v = std::ldexp(static_cast<double>(m + (1u << L.mant_bits)), static_cast<int>(e) - L.bias() - L.mant_bits);
    }
    return neg ? -v : v;
}

uint16_t from_double(Format f, double v) {
    // Double rounding is avoided: v is rounded once, directly from its double value.
    return round_to_format(layout(f), v, 0.0);
}

bool is_nan(Format f, uint16_t bits) {
    const Layout L = layout(f);
    return (bits & L.exp_mask()) == L.exp_mask() && (bits & ((1u << L.mant_bits) - 1)) != 0;
}

uint16_t fma(Format f, uint16_t a, uint16_t b, uint16_t c) {
    const double da = to_double(f, a), db = to_double(f, b), dc = to_double(f, c);
    const double p = da * db;  // exact: at most 2 x 11 significant bits
    const double s = p + dc;
    if (!std::isfinite(s)) return round_to_format(layout(f), s, 0.0);
    // TwoSum (Knuth): s + e == p + dc exactly.
    const double bb = s - p;
    const double e = (p - (s - bb)) + (dc - bb);
    return round_to_format(layout(f), s, e);
}

}  // namespace gpuvet::small_float
