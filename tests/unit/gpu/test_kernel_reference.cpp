#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "gpu/kernel_reference.hpp"
#include "gpu/small_float.hpp"

using namespace gpuvet;
using namespace gpuvet::kernel_ref;
using small_float::Format;

TEST(KernelRefStream, ReadPartialsFollowTheGridStride) {
    // 3 vectors, 2 threads: thread 0 sums vectors 0 and 2, thread 1 sums vector 1.
    const std::vector<uint32_t> words{1, 2, 3, 4, 10, 20, 30, 40, 100, 200, 300, 0xFFFFFFFFu};
    const auto p = stream_read_partials(words, 2);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0], 1u + 2 + 3 + 4 + 100 + 200 + 300 - 1);  // wraps mod 2^32
    EXPECT_EQ(p[1], 100u);
    const auto wide = stream_read_partials(words, 5);  // threads beyond the data write 0
    EXPECT_EQ(wide[3], 0u);
    EXPECT_EQ(wide[4], 0u);
    EXPECT_THROW(stream_read_partials(std::vector<uint32_t>(3), 1), Error);
    EXPECT_THROW(stream_read_partials(words, 0), Error);
}

TEST(KernelRefStream, TriadIsFusedNotMultiplyThenAdd) {
    const float s = 1.0f + std::ldexp(1.0f, -23), c = 1.0f - std::ldexp(1.0f, -23), b = -1.0f;
    // s*c = 1 - 2^-46 exactly; fused keeps it, a separate multiply would round it to 1 and give 0.
    EXPECT_EQ(triad_value(s, b, c), -std::ldexp(1.0f, -46));
    std::vector<float> a(3), bb{1, 2, 3}, cc{4, 5, 6};
    stream_triad(a, bb, cc, 0.5f);
    EXPECT_EQ(a, (std::vector<float>{3, 4.5f, 6}));
    EXPECT_THROW(stream_triad(a, bb, std::vector<float>(2), 1.0f), Error);
}

TEST(KernelRefStream, WriteCopyVerify) {
    std::vector<uint32_t> buf(8), copy(8);
    stream_write(buf, 0xA5A5A5A5u);
    stream_copy(buf, copy);
    EXPECT_EQ(stream_verify(copy, 0xA5A5A5A5u), 0u);
    copy[3] = 0;
    copy[7] = 1;
    EXPECT_EQ(stream_verify(copy, 0xA5A5A5A5u), 2u);
}

namespace {
// Straight simulation of the kernel, no shortcuts: checks the reference's cycle skipping.
template <class T>
T brute_fma(uint32_t iterations, T a, T b, T x0) {
    T x[kFmaChains];
    x[0] = x0;
    for (int j = 1; j < kFmaChains; ++j) x[j] = std::fma(x[j - 1], T(1), T(1));
    for (uint32_t i = 0; i < iterations; ++i)
        for (int r = 0; r < kFmaRounds; ++r)
            for (T& v : x) v = std::fma(v, a, b);
    T sum = x[0];
    for (int j = 1; j < kFmaChains; ++j) sum = std::fma(x[j], T(1), sum);
    return sum;
}

uint16_t brute_small(Format f, uint32_t iterations, uint16_t a, uint16_t b, uint16_t x0) {
    const uint16_t one = small_float::from_double(f, 1.0);
    uint16_t x[kFmaChains];
    x[0] = x0;
    for (int j = 1; j < kFmaChains; ++j) x[j] = small_float::fma(f, x[j - 1], one, one);
    for (uint32_t i = 0; i < iterations * kFmaRounds; ++i)
        for (uint16_t& v : x) v = small_float::fma(f, v, a, b);
    uint16_t sum = x[0];
    for (int j = 1; j < kFmaChains; ++j) sum = small_float::fma(f, x[j], one, sum);
    return sum;
}
}  // namespace

TEST(KernelRefFma, ZeroIterationsSumsTheStartingValues) {
    // chains start at x0 + j: 8 * 1 + (0 + 1 + ... + 7) = 36
    EXPECT_EQ(fma_f32_result(0, 0.5f, 0.5f, 1.0f), 36.0f);
    EXPECT_EQ(fma_f64_result(0, 0.5, 0.5, 1.0), 36.0);
    const uint32_t one2 = 0x3C003C00u, two_and_one = 0x3C004000u;                                // f16 lanes (2, 1)
    EXPECT_EQ(fma_f16x2_result(0, one2, one2, two_and_one), small_float::pack(0x5180, 0x5080));  // 44, 36
}

TEST(KernelRefFma, MatchesStraightSimulation) {
    for (uint32_t it : {1u, 2u, 7u, 50u, 300u}) {
        EXPECT_EQ(fma_f32_result(it, 0.9375f, 0.125f, 1.0f), brute_fma<float>(it, 0.9375f, 0.125f, 1.0f));
        EXPECT_EQ(fma_f64_result(it, 0.9375, 0.125, 1.0), brute_fma<double>(it, 0.9375, 0.125, 1.0));
        EXPECT_EQ(fma_f32_result(it, -1.0f, 0.25f, 3.0f), brute_fma<float>(it, -1.0f, 0.25f, 3.0f));
        EXPECT_EQ(fma_f64_result(it, 1.0000001, 1e-3, 1.0), brute_fma<double>(it, 1.0000001, 1e-3, 1.0));
        for (Format f : {Format::f16, Format::bf16}) {
            const uint16_t a = small_float::from_double(f, 0.9375), b = small_float::from_double(f, 0.125);
            const uint16_t a2 = small_float::from_double(f, 1.01), b2 = small_float::from_double(f, -0.3);
            const uint16_t x0 = small_float::from_double(f, 1.0);
            const uint32_t got = f == Format::f16
                                     ? fma_f16x2_result(it, small_float::pack(a, a2), small_float::pack(b, b2),
                                                        small_float::pack(x0, x0))
                                     : fma_bf16x2_result(it, small_float::pack(a, a2), small_float::pack(b, b2),
                                                         small_float::pack(x0, x0));
            EXPECT_EQ(small_float::lane(got, 0), brute_small(f, it, a, b, x0)) << it;
            EXPECT_EQ(small_float::lane(got, 1), brute_small(f, it, a2, b2, x0)) << it;
        }
    }
}

TEST(KernelRefFma, SuggestedInputsSettleAtTwoPerChain) {
    // x = 0.9375 x + 0.125 tends to 2 in every format (stopping a few ulps off, where the
    // step rounds away); 8 chains sum to about 16.
    EXPECT_NEAR(fma_f64_result(100000, 0.9375, 0.125, 1.0), 16.0, 1e-12);
    EXPECT_NEAR(fma_f32_result(100000, 0.9375f, 0.125f, 1.0f), 16.0f, 1e-4);
    const uint32_t r = fma_f16x2_result(100000, 0x3B803B80u, 0x30003000u, 0x3C003C00u);
    EXPECT_NEAR(small_float::to_double(Format::f16, small_float::lane(r, 0)), 16.0, 0.1);
}

TEST(KernelRefFma, FlopsPerLaunchCountTwoPerFmaPerLane) {
    EXPECT_EQ(fma_flops(1024, 10, 1), 1024.0 * 10 * 128 * 2);
    EXPECT_EQ(fma_flops(1024, 10, 2), 1024.0 * 10 * 128 * 4);
}

TEST(KernelRefMemtest, SplitmixKnownAnswers) {
    // splitmix64 seeded with 0 yields e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f.
    EXPECT_EQ(splitmix64_at(0, 0), 0xE220A8397B1DCDAFull);
    EXPECT_EQ(splitmix64_at(0, 1), 0x6E789E6AA1B965F4ull);
    EXPECT_EQ(splitmix64_at(0, 2), 0x06C45D188009454Full);
    EXPECT_EQ(splitmix64_at(1234567, 0), 0x599ED017FB08FC85ull);
    EXPECT_EQ(splitmix64_at(0xDEADBEEF, 1000000), 0xA9F301D8D37D23A7ull);
}

TEST(KernelRefMemtest, EachPatternWritesItsDefinedWordAndUnknownOnesTheSolidValue) {
    const uint64_t addr = 0x7F0000001000ull;
    EXPECT_EQ(memtest_pattern(MemtestPattern::address, addr, 5, 0), addr);
    EXPECT_EQ(memtest_pattern(MemtestPattern::address_inv, addr, 5, 0), ~addr);
    EXPECT_EQ(memtest_pattern(MemtestPattern::walking_ones, addr, 5, 0), 1ull << 5);
    EXPECT_EQ(memtest_pattern(MemtestPattern::walking_ones, addr, 70, 1), 1ull << 7);  // (70+1) mod 64
    EXPECT_EQ(memtest_pattern(MemtestPattern::walking_zeros, addr, 63, 0), ~(1ull << 63));
    EXPECT_EQ(memtest_pattern(MemtestPattern::random, addr, 2, 0), 0x06C45D188009454Full);
    EXPECT_EQ(memtest_pattern(MemtestPattern::random_inv, addr, 2, 0), ~0x06C45D188009454Full);
    EXPECT_EQ(memtest_pattern(MemtestPattern::solid, addr, 9, 0x5555), 0x5555u);
    EXPECT_EQ(memtest_pattern(static_cast<MemtestPattern>(42), addr, 9, 0x77), 0x77u);
}

TEST(KernelRefMemtest, WriteThenVerifyFindsFlippedWords) {
    const uint64_t base = 0x10000;
    std::vector<uint64_t> words(1000);
    memtest_write(words, base, MemtestPattern::address, 0);
    EXPECT_EQ(words[10], base + 80);
    auto clean = memtest_verify(words, base, MemtestPattern::address, 0, 64, 4);
    EXPECT_EQ(clean.mismatches, 0u);
    EXPECT_TRUE(clean.records.empty());

    memtest_write(words, base, MemtestPattern::random, 99);
    words[3] ^= 1;    // thread 3
    words[67] ^= 2;   // thread 3 again: counted, not recorded
    words[130] ^= 4;  // thread 2
    words[5] ^= 8;    // thread 5
    const auto out = memtest_verify(words, base, MemtestPattern::random, 99, 64, 2);
    EXPECT_EQ(out.mismatches, 4u);
    EXPECT_EQ(out.records_claimed, 3u);  // threads 2, 3, 5
    ASSERT_EQ(out.records.size(), 2u);   // max_records
    EXPECT_EQ(out.records[0], (MemtestRecord{130, splitmix64_at(99, 130) ^ 4}));
    EXPECT_EQ(out.records[1], (MemtestRecord{3, splitmix64_at(99, 3) ^ 1}));
}

TEST(KernelRefMemtest, DecodesTheDeviceResultBuffer) {
    const std::vector<uint64_t> raw{7, 3, 11, 0xAB, 12, 0xCD, 0, 0};  // max_records 3, 3 claimed
    const auto out = decode_memtest_result(raw, 3);
    EXPECT_EQ(out.mismatches, 7u);
    ASSERT_EQ(out.records.size(), 3u);
    EXPECT_EQ(out.records[1], (MemtestRecord{12, 0xCD}));
    const std::vector<uint64_t> overflow{900, 500, 1, 2, 3, 4};
    EXPECT_EQ(decode_memtest_result(overflow, 2).records.size(), 2u);
    EXPECT_EQ(memtest_result_words(2), 6u);
    EXPECT_THROW(decode_memtest_result(overflow, 3), Error);
}

TEST(KernelRefBurn, CountsMismatchesAndNans) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> a{1.0f, 1.001f, 1.1f, nan, 5.0f, inf, inf, 100.0f};
    const std::vector<float> b{1.0f, 1.0f, 1.0f, 1.0f, nan, inf, 1.0f, 100.5f};
    // bound = 0.01 * |b| + 0: 1.001 passes, 1.1 fails, inf vs 1 fails, 100 vs 100.5 passes (1.005).
    EXPECT_EQ(burn_compare_f32(a, b, 0.0f, 0.01f), (CompareCounts{2, 2}));
    const std::vector<uint16_t> ha{0x3C00, 0x3C01, 0x7E00, 0x4000};
    const std::vector<uint16_t> hb{0x3C00, 0x3C00, 0x3C00, 0x3C00};
    EXPECT_EQ(burn_compare_f16(ha, hb, 0.001f, 0.0f), (CompareCounts{1, 1}));  // 2 vs 1; NaN
    EXPECT_THROW(burn_compare_f16(ha, std::vector<uint16_t>(2), 0.0f, 0.0f), Error);
}
