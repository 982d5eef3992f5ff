// fma.ptx and fma_bf16.ptx against the chain of their headers computed in software: std::fma for
// f64/f32 (correctly rounded), exact integer arithmetic for f16/bf16 (half_reference.hpp). Plus the
// interpreter's fma.rn.f16x2/bf16x2 on many random and edge-case operands.
#include <cmath>

#include "half_reference.hpp"
#include "ptx_test_support.hpp"

namespace {

using namespace ptxtest;

template <class T, class F>
T chain(uint32_t iterations, T a, T b, T x0, T one, F fma) {
    T x[8];
    x[0] = x0;
    for (int j = 1; j < 8; ++j) x[j] = fma(x[j - 1], one, one);
    for (uint32_t it = 0; it < iterations; ++it)
        for (int r = 0; r < 16; ++r)
            for (int j = 0; j < 8; ++j) x[j] = fma(x[j], a, b);
    T sum = x[0];
    for (int j = 1; j < 8; ++j) sum = fma(x[j], one, sum);
    return sum;
}
uint32_t pack(uint16_t lo, uint16_t hi) { return lo | (uint32_t(hi) << 16); }
auto lanes(Half f) {
    return [f](uint32_t x, uint32_t y, uint32_t z) {
        return pack(exact_fma(uint16_t(x), uint16_t(y), uint16_t(z), f),
                    exact_fma(uint16_t(x >> 16), uint16_t(y >> 16), uint16_t(z >> 16), f));
    };
}

template <class T>
void expect_all(FakeGpu& g, CUdeviceptr out, uint64_t threads, T want, const char* what) {
    auto got = g.download<T>(out, threads + 1);
    for (uint64_t t = 0; t < threads; ++t)
        ASSERT_TRUE(std::memcmp(&got[t], &want, sizeof(T)) == 0)
            << what << " thread " << t << ": " << double(got[t]) << " want " << double(want);
}

TEST(PtxFma, Float64AndFloat32ChainsMatchStdFma) {
    FakeGpu g;
    const double in64[][3] = {{0.9375, 0.125, 1.0}, {1.0000001, -0.5, 3.25}, {-1.5, 0.1, 1e-310}, {2.0, 1e300, 1.0}};
    for (Shape s : shapes())
        for (uint32_t it : {0u, 1u, 3u})
            for (const auto& v : in64) {
                const uint64_t T = uint64_t{s.grid} * s.block;
                CUdeviceptr o64 = g.alloc(8 * (T + 1)), o32 = g.alloc(4 * (T + 1));
                ASSERT_EQ(g.launch("fma_f64", s, {arg(o64), arg(it), arg(v[0]), arg(v[1]), arg(v[2])}), CUDA_SUCCESS);
                expect_all<double>(g, o64, T,
                                   chain<double>(it, v[0], v[1], v[2], 1.0,
                                                 [](double x, double y, double z) { return std::fma(x, y, z); }),
                                   "f64");
                const float a = float(v[0]), b = float(v[1]), x0 = float(v[2]);
                ASSERT_EQ(g.launch("fma_f32", s, {arg(o32), arg(it), arg(a), arg(b), arg(x0)}), CUDA_SUCCESS);
                expect_all<float>(
                    g, o32, T,
                    chain<float>(it, a, b, x0, 1.0f, [](float x, float y, float z) { return std::fma(x, y, z); }),
                    "f32");
            }
}

TEST(PtxFma, HalfChainsMatchExactArithmetic) {
    FakeGpu g;
    // (a, b, x0) per lane, low lane first: gpuvet's inputs, a growing chain that overflows, subnormals.
    const uint32_t f16[][3] = {{0x3B803B80u, 0x30003000u, 0x3C003C00u},
                               {pack(0x3E00, 0x3C01), pack(0x3555, 0xB400), pack(0x4500, 0x0001)},
                               {pack(0x0200, 0x3BFF), pack(0x8001, 0x1400), pack(0x03FF, 0xC000)}};
    const uint32_t bf16[][3] = {{0x3F703F70u, 0x3E003E00u, 0x3F803F80u},
                                {pack(0x3F40, 0x3F81), pack(0x3EAB, 0xBE80), pack(0x40A0, 0x3F80)},
                                {pack(0x3F7F, 0xBF70), pack(0x3C23, 0x3E00), pack(0x4000, 0x3F80)}};
    for (Shape s : {shapes()[0], shapes()[3], shapes()[4]})
        for (uint32_t it : {0u, 1u, 2u, 5u}) {
            const uint64_t T = uint64_t{s.grid} * s.block;
            CUdeviceptr o = g.alloc(4 * (T + 1));
            for (const auto& v : f16) {
                ASSERT_EQ(g.launch("fma_f16x2", s, {arg(o), arg(it), arg(v[0]), arg(v[1]), arg(v[2])}), CUDA_SUCCESS);
                expect_all<uint32_t>(g, o, T, chain<uint32_t>(it, v[0], v[1], v[2], 0x3C003C00u, lanes(kHalf)),
                                     "f16x2");
            }
            for (const auto& v : bf16) {
                ASSERT_EQ(g.launch("fma_bf16x2", s, {arg(o), arg(it), arg(v[0]), arg(v[1]), arg(v[2])}), CUDA_SUCCESS);
                expect_all<uint32_t>(g, o, T, chain<uint32_t>(it, v[0], v[1], v[2], 0x3F803F80u, lanes(kBfloat)),
                                     "bf16x2");
            }
        }
}

// A scenario's fma_wrong_results corrupts what every thread stored, by one unit.
TEST(PtxFma, WrongResultsOfTheScenarioChangeTheStoredValues) {
    FakeGpu g("[gpu.0]\nfma_wrong_results = true\n");
    CUdeviceptr o = g.alloc(4 * 65);
    ASSERT_EQ(g.launch("fma_f32", {2, 32}, {arg(o), arg(2u), arg(0.9375f), arg(0.125f), arg(1.0f)}), CUDA_SUCCESS);
    const float right =
        chain<float>(2, 0.9375f, 0.125f, 1.0f, 1.0f, [](float x, float y, float z) { return std::fma(x, y, z); });
    expect_all<float>(g, o, 64, right + 1, "f32 + 1");
}

// One fma.rn per element on operand arrays, to test the rounding itself.
const char* kFmaEach = R"(.version 7.0
.target sm_80
.address_size 64
.visible .entry fma_each(.param .u64 p_a, .param .u64 p_b, .param .u64 p_c, .param .u64 p_out, .param .u32 p_n, .param .u32 p_bf)
{
	.reg .pred %p<3>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<12>;
	ld.param.u64 %rd1, [p_a];
	ld.param.u64 %rd2, [p_b];
	ld.param.u64 %rd3, [p_c];
	ld.param.u64 %rd4, [p_out];
	ld.param.u32 %r5, [p_n];
	ld.param.u32 %r10, [p_bf];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.u32 %r4, %r1, %r2, %r3;
	setp.ge.u32 %p1, %r4, %r5;
	@%p1 bra DONE;
	mul.wide.u32 %rd5, %r4, 4;
	add.u64 %rd6, %rd1, %rd5;
	ld.global.b32 %r6, [%rd6];
	add.u64 %rd6, %rd2, %rd5;
	ld.global.b32 %r7, [%rd6];
	add.u64 %rd6, %rd3, %rd5;
	ld.global.b32 %r8, [%rd6];
	setp.ne.u32 %p2, %r10, 0;
	@%p2 fma.rn.bf16x2 %r9, %r6, %r7, %r8;
	@!%p2 fma.rn.f16x2 %r9, %r6, %r7, %r8;
	add.u64 %rd6, %rd4, %rd5;
	st.global.b32 [%rd6], %r9;
DONE:
	ret;
}
)";

void fma_each(FakeGpu& g, const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
              const std::vector<uint32_t>& c, bool bf) {
    CUmodule m = nullptr;
    ASSERT_EQ(g.fn<decltype(&cuModuleLoadData)>("cuModuleLoadData")(&m, kFmaEach), CUDA_SUCCESS);
    CUfunction f = nullptr;
    ASSERT_EQ(g.fn<decltype(&cuModuleGetFunction)>("cuModuleGetFunction")(&f, m, "fma_each"), CUDA_SUCCESS);
    CUdeviceptr da = g.upload(a), db = g.upload(b), dc = g.upload(c), dout = g.alloc(4 * a.size());
    uint32_t n = uint32_t(a.size()), flag = bf;
    void* params[] = {&da, &db, &dc, &dout, &n, &flag};
    ASSERT_EQ(g.fn<decltype(&cuLaunchKernel)>("cuLaunchKernel")(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, params,
                                                                nullptr),
              CUDA_SUCCESS);
    auto got = g.download<uint32_t>(dout, a.size());
    for (size_t k = 0; k < a.size(); ++k)
        ASSERT_EQ(got[k], lanes(bf ? kBfloat : kHalf)(a[k], b[k], c[k]))
            << std::hex << (bf ? "bf16" : "f16") << " fma(" << a[k] << ", " << b[k] << ", " << c[k] << ")";
}

TEST(PtxFma, HalfFmaIsCorrectlyRoundedOnRandomAndEdgeOperands) {
    FakeGpu g;
    Rng r{11};
    std::vector<uint32_t> a, b, c;
    // f16: any bit pattern (NaN, infinities, subnormals included).
    for (int k = 0; k < 60000; ++k)
        a.push_back(uint32_t(r.next())), b.push_back(uint32_t(r.next())), c.push_back(uint32_t(r.next()));
    // Overflow boundary (65504 + 16 rounds to infinity) and the smallest subnormal.
    a.push_back(pack(0x7BFF, 0x0001)), b.push_back(pack(0x3C00, 0x3800)), c.push_back(pack(0x4C00, 0x0000));
    fma_each(g, a, b, c, false);
    // bf16: exponents within 2^+-12 of one (the integer reference's range), random mantissas and signs.
    auto bf = [&] { return uint16_t((r.next() & 0x807F) | ((127 - 12 + r.next() % 25) << 7)); };
    a.clear(), b.clear(), c.clear();
    for (int k = 0; k < 60000; ++k)
        a.push_back(pack(bf(), bf())), b.push_back(pack(bf(), bf())), c.push_back(pack(bf(), bf()));
    // 7 * 37 = 259, a midpoint of the bf16 grid (ulp 2): -2^-40 must round down to 258, +2^-40 up
    // to 260, exactly 0 to even (260). A double fma rounded again to bf16 gets the first one wrong.
    a.push_back(pack(0x40E0, 0x40E0)), b.push_back(pack(0x4214, 0x4214)), c.push_back(pack(0xAB80, 0x2B80));
    a.push_back(pack(0x40E0, 0x40E0)), b.push_back(pack(0x4214, 0x4214)), c.push_back(pack(0x0000, 0x8000));
    fma_each(g, a, b, c, true);
    EXPECT_EQ(exact_fma(0x40E0, 0x4214, 0xAB80, kBfloat), 0x4381);  // 258 = 1.0000001b x 2^8
    EXPECT_EQ(exact_fma(0x40E0, 0x4214, 0x2B80, kBfloat), 0x4382);  // 260
}

}  // namespace
