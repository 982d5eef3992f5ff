#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gpu/small_float.hpp"

using namespace gpuvet::small_float;

TEST(SmallFloat, DecodesKnownValues) {
    EXPECT_EQ(to_double(Format::f16, 0x3C00), 1.0);
    EXPECT_EQ(to_double(Format::f16, 0xC000), -2.0);
    EXPECT_EQ(to_double(Format::f16, 0x7BFF), 65504.0);
    EXPECT_EQ(to_double(Format::f16, 0x0001), std::ldexp(1.0, -24));  // smallest subnormal
    EXPECT_TRUE(std::isinf(to_double(Format::f16, 0x7C00)));
    EXPECT_TRUE(is_nan(Format::f16, 0x7E00));
    EXPECT_FALSE(is_nan(Format::f16, 0x7C00));
    EXPECT_EQ(to_double(Format::bf16, 0x3F80), 1.0);
    EXPECT_EQ(to_double(Format::bf16, 0x7F7F), std::ldexp(255.0, 120));  // bf16 max
    EXPECT_EQ(to_double(Format::bf16, 0x0001), std::ldexp(1.0, -133));
}

TEST(SmallFloat, RoundsToNearestEven) {
    EXPECT_EQ(from_double(Format::f16, 1.0), 0x3C00);
    EXPECT_EQ(from_double(Format::f16, 1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie -> even
    EXPECT_EQ(from_double(Format::f16, 1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie -> even
    EXPECT_EQ(from_double(Format::f16, 65519.0), 0x7BFF);
    EXPECT_EQ(from_double(Format::f16, 65520.0), 0x7C00);                // tie at the top rounds to infinity
    EXPECT_EQ(from_double(Format::f16, -std::ldexp(1.0, -25)), 0x8000);  // tie -> -0
    EXPECT_EQ(from_double(Format::f16, 3 * std::ldexp(1.0, -25)), 0x0002);
    EXPECT_EQ(from_double(Format::f16, std::ldexp(1023.5, -24)), 0x0400);  // carries into normal
    EXPECT_EQ(from_double(Format::bf16, 1.0 + std::ldexp(1.0, -8)), 0x3F80);
    EXPECT_EQ(from_double(Format::bf16, 1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
    EXPECT_EQ(from_double(Format::bf16, -3.0), 0xC040);
}

TEST(SmallFloat, FmaRoundsOnceNotTwice) {
    // a*b + c lands a hair above the midpoint between 1 and 1 + 2^-10: one rounding goes up,
    // rounding the sum to an intermediate format first could land on the tie and go down.
    const uint16_t a = from_double(Format::f16, 1.0 + std::ldexp(1.0, -10));  // exact
    const uint16_t b = from_double(Format::f16, 1.0 + std::ldexp(1.0, -10));
    const uint16_t c = from_double(Format::f16, -std::ldexp(1.0, -10) - std::ldexp(1.0, -11));
    // (1 + 2^-10)^2 - 2^-10 - 2^-11 = 1 + 2^-11 + 2^-20: above the tie -> 0x3C01.
    EXPECT_EQ(fma(Format::f16, a, b, c), 0x3C01);
    const uint16_t c2 = from_double(Format::f16, -std::ldexp(1.0, -10) - std::ldexp(1.0, -11) - std::ldexp(1.0, -20));
    EXPECT_EQ(fma(Format::f16, a, b, c2), 0x3C00);  // exactly the tie -> even
}

TEST(SmallFloat, BfloatFmaTieBrokenByFarTail) {
    // 1.5 * (1 + 3 * 2^-7) = 1.5 + 2^-5 + 2^-8: exactly half-way between bf16 mantissas 68 and 69.
    // A tail of 2^-70 is lost when the sum is held in a double; it must still break the tie.
    const uint16_t a = 0x3FC0, b = 0x3F83, tail = 0x1C80, neg_tail = 0x9C80, zero = 0;
    EXPECT_EQ(to_double(Format::bf16, tail), std::ldexp(1.0, -70));
    EXPECT_EQ(fma(Format::bf16, a, b, zero), 0x3FC4);      // tie -> even
    EXPECT_EQ(fma(Format::bf16, a, b, tail), 0x3FC5);      // just above the tie -> up
    EXPECT_EQ(fma(Format::bf16, a, b, neg_tail), 0x3FC4);  // just below -> down
    const uint16_t na = 0xBFC0;                            // and mirrored for negatives
    EXPECT_EQ(fma(Format::bf16, na, b, neg_tail), 0xBFC5);
}

TEST(SmallFloat, FmaSpecialValues) {
    const uint16_t inf = 0x7C00, zero = 0x0000, one = 0x3C00, neg_zero = 0x8000;
    EXPECT_TRUE(is_nan(Format::f16, fma(Format::f16, inf, zero, one)));
    EXPECT_EQ(fma(Format::f16, inf, one, one), inf);
    EXPECT_EQ(fma(Format::f16, neg_zero, one, neg_zero), neg_zero);
    EXPECT_EQ(fma(Format::f16, one, one, 0xBC00), zero);     // 1 - 1 = +0
    EXPECT_EQ(fma(Format::f16, 0x7BFF, 0x4000, zero), inf);  // overflow
}

namespace {
// Independent exact reference: all operands are integers times 2^-kScale, so a*b + c is an
// integer times 2^-2kScale held exactly in __int128, then rounded with integer arithmetic.
constexpr int kScale = 40;

__int128 as_scaled(Format f, uint16_t bits) { return static_cast<__int128>(std::ldexp(to_double(f, bits), kScale)); }

uint16_t round_scaled(Format f, __int128 n, int scale) {
    const int mant = f == Format::f16 ? 10 : 7;
    const int bias = f == Format::f16 ? 15 : 127;
    const uint16_t sign = n < 0 ? 0x8000 : 0;
    unsigned __int128 m = n < 0 ? -n : n;
    if (m == 0) return 0;  // callers avoid exact zeros of mixed sign
    int len = 0;
    for (unsigned __int128 t = m; t; t >>= 1) ++len;
    int ex = std::max(len - 1 - scale, 1 - bias);
    const int drop = ex - mant + scale;  // bits below the format's ulp
    unsigned __int128 q = 0;
    if (drop <= 0) {
        q = m << -drop;
    } else {
        q = m >> drop;
        const unsigned __int128 rem = m & ((static_cast<unsigned __int128>(1) << drop) - 1);
        const unsigned __int128 half = static_cast<unsigned __int128>(1) << (drop - 1);
        if (rem > half || (rem == half && (q & 1))) ++q;
    }
    if (q == (static_cast<unsigned __int128>(2) << mant)) {
        q >>= 1;
        ++ex;
    }
    if (ex > bias) return sign | static_cast<uint16_t>(((1 << (f == Format::f16 ? 5 : 8)) - 1) << mant);
    if (q < (static_cast<unsigned __int128>(1) << mant)) return sign | static_cast<uint16_t>(q);
    return sign | static_cast<uint16_t>(((ex + bias) << mant) | static_cast<int>(q - (1u << mant)));
}

uint16_t random_value(Format f, std::mt19937& rng, int emin, int emax) {
    const int mant = f == Format::f16 ? 10 : 7;
    const double m = 1.0 + std::ldexp(static_cast<double>(rng() % (1u << mant)), -mant);
    const int e = emin + static_cast<int>(rng() % static_cast<unsigned>(emax - emin + 1));
    return from_double(f, (rng() & 1 ? -1.0 : 1.0) * std::ldexp(m, e));
}
}  // namespace

TEST(SmallFloat, FmaMatchesExactIntegerReference) {
    std::mt19937 rng(12345);
    for (Format f : {Format::f16, Format::bf16}) {
        int checked = 0;
        for (int i = 0; i < 200000; ++i) {
            // Exponents kept where a, b, c are whole multiples of 2^-kScale and f16 can't overflow;
            // c near a*b makes cancellation and ties common.
            const uint16_t a = random_value(f, rng, -6, 7), b = random_value(f, rng, -6, 7);
            uint16_t c = random_value(f, rng, -14, 14);
            if (i % 2) c = from_double(f, -to_double(f, a) * to_double(f, b) + to_double(f, c) * 1e-3);
            const double dc = to_double(f, c);
            if (std::ldexp(dc, kScale) != std::floor(std::ldexp(dc, kScale))) continue;
            const __int128 exact = as_scaled(f, a) * as_scaled(f, b) + (as_scaled(f, c) << kScale);
            if (exact == 0) continue;
            ASSERT_EQ(fma(f, a, b, c), round_scaled(f, exact, 2 * kScale))
                << std::hex << "format " << int(f) << " a=" << a << " b=" << b << " c=" << c;
            ++checked;
        }
        EXPECT_GT(checked, 150000);
    }
}
