// gpuvet's AMD kernel sources (src/gpu/amd_kernels/*.cl, or $GPUVET_AMD_KERNEL_DIR) run on the
// CPU through OpenCL (PoCL), against the CPU references of their contracts: kernel_reference.hpp
// and the exact f16 arithmetic of half_reference.hpp. The same text clang compiles into the code
// objects, so a kernel that computes a wrong result fails here (tests/fakes/amd_kernel_mutations.txt holds
// the suite to that: each one-line mutation must make it fail).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu/kernel_reference.hpp"
#include "half_reference.hpp"
#include "opencl_device.hpp"

namespace {

namespace ref = gpuvet::kernel_ref;
namespace cl = fake::opencl;

std::string kernel_dir() {
    const char* d = std::getenv("GPUVET_AMD_KERNEL_DIR");
    return d && *d ? d : AMD_KERNEL_DIR;
}

// Device memory (shared virtual memory) holding `n` elements of T.
template <class T>
struct Buf {
    T* p;
    std::size_t n;
    explicit Buf(std::size_t count) : p(static_cast<T*>(cl::svm_alloc(count * sizeof(T) + 64))), n(count) {
        if (!p) throw std::runtime_error("svm_alloc failed");
        std::memset(p, 0, count * sizeof(T));
    }
    ~Buf() { cl::svm_free(p); }
    Buf(const Buf&) = delete;
    Buf& operator=(const Buf&) = delete;
    std::vector<T> vec() const { return {p, p + n}; }
};

template <class T>
cl::Arg ptr(const Buf<T>& b) {
    return {true, b.p, 8};
}
template <class T>
cl::Arg val(const T& v) {
    return {false, &v, sizeof(T)};
}

struct Shape {
    std::size_t global, local;
};
// One work-item, one group, several groups with a partial wave, many groups.
const Shape kShapes[] = {{1, 1}, {64, 64}, {192, 64}, {1024, 256}};

class AmdKernels : public ::testing::Test {
protected:
    void SetUp() override {
        if (std::string why = cl::unavailable_reason(); !why.empty()) GTEST_FAIL() << why;
    }
    void run(const std::string& name, Shape s, const std::vector<cl::Arg>& args) {
        std::string err = k_.run(name, s.global, s.local, args);
        ASSERT_EQ(err, "") << name;
    }
    cl::Kernels k_{kernel_dir()};
};

TEST_F(AmdKernels, EveryCatalogueKernelIsDefined) {
    auto names = k_.names();
    for (const char* n : {"stream_copy", "stream_read", "stream_write", "stream_triad", "stream_verify", "fma_f64",
                          "fma_f32", "fma_f16x2", "memtest_write", "memtest_verify"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST_F(AmdKernels, StreamKernelsMatchTheReference) {
    for (Shape s : kShapes)
        for (std::uint64_t n_vec : {0ull, 1ull, 63ull, 4099ull}) {
            const std::size_t words = n_vec * 4;
            Buf<std::uint32_t> a(words + 4), b(words + 4), c(words + 4);
            for (std::size_t i = 0; i < words + 4; ++i) b.p[i] = std::uint32_t(i * 2654435761u + 7);
            run("stream_copy", s, {ptr(a), ptr(b), val(n_vec)});
            std::vector<std::uint32_t> want(words + 4, 0);
            ref::stream_copy({b.p, words}, {want.data(), words});
            ASSERT_EQ(a.vec(), want) << "copy, n_vec " << n_vec << ", " << s.global << " work-items";

            const std::uint32_t value = 0xA5C3F00Du;
            run("stream_write", s, {ptr(c), val(n_vec), val(value)});
            std::vector<std::uint32_t> wantc(words + 4, 0);
            ref::stream_write({wantc.data(), words}, value);
            ASSERT_EQ(c.vec(), wantc) << "write";

            Buf<std::uint32_t> partial(s.global);
            run("stream_read", s, {ptr(b), val(n_vec), ptr(partial)});
            ASSERT_EQ(partial.vec(), ref::stream_read_partials({b.p, words}, s.global)) << "read";

            Buf<std::uint64_t> count(1);
            run("stream_verify", s, {ptr(c), val(n_vec), val(value), ptr(count)});
            ASSERT_EQ(count.p[0], 0u) << "verify of a clean fill";
            if (words) c.p[words / 2] ^= 1, c.p[words - 1] = 0;
            run("stream_verify", s, {ptr(c), val(n_vec), val(value), ptr(count)});
            ASSERT_EQ(count.p[0], ref::stream_verify({c.p, words}, value)) << "verify counts what differs";
            ASSERT_EQ(count.p[0], words ? 2u : 0u);
        }
}

TEST_F(AmdKernels, TriadIsOneRoundingPerElement) {
    const std::uint64_t n_vec = 1031;
    const std::size_t n = n_vec * 4;
    Buf<float> a(n), b(n), c(n);
    // b = -(s * c) rounded: the fma leaves the product's rounding error, s * c + b would leave 0.
    const float s = 3.0000002f;
    for (std::size_t i = 0; i < n; ++i) c.p[i] = 0.1f * float(i % 97) - 3.3f, b.p[i] = -(s * c.p[i]);
    for (Shape sh : kShapes) {
        std::memset(a.p, 0, n * sizeof(float));
        run("stream_triad", sh, {ptr(a), ptr(b), ptr(c), val(s), val(n_vec)});
        std::vector<float> want(n);
        ref::stream_triad(want, {b.p, n}, {c.p, n}, s);
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(std::bit_cast<std::uint32_t>(a.p[i]), std::bit_cast<std::uint32_t>(want[i])) << "element " << i;
    }
}

template <class T, class F>
T chain(std::uint32_t iterations, T a, T b, T x0, T one, F fma) {
    T x[8];
    x[0] = x0;
    for (int j = 1; j < 8; ++j) x[j] = fma(x[j - 1], one, one);
    for (std::uint32_t it = 0; it < iterations; ++it)
        for (int r = 0; r < 16; ++r)
            for (int j = 0; j < 8; ++j) x[j] = fma(x[j], a, b);
    T sum = x[0];
    for (int j = 1; j < 8; ++j) sum = fma(x[j], one, sum);
    return sum;
}
std::uint32_t pack(std::uint16_t lo, std::uint16_t hi) { return lo | (std::uint32_t(hi) << 16); }
std::uint32_t half2_fma(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
    using ptxtest::exact_fma, ptxtest::kHalf;
    return pack(exact_fma(std::uint16_t(x), std::uint16_t(y), std::uint16_t(z), kHalf),
                exact_fma(std::uint16_t(x >> 16), std::uint16_t(y >> 16), std::uint16_t(z >> 16), kHalf));
}

TEST_F(AmdKernels, FmaChainsMatchCorrectlyRoundedArithmetic) {
    // gpuvet's inputs, rounding in every step, subnormals, overflow, and a cancellation that only a
    // single rounding gets right (x * a rounded first would lose the low bits before adding b).
    const double in64[][3] = {{0.9375, 0.125, 1.0}, {1.0000001, -0.5, 3.25}, {-1.5, 0.1, 1e-310},
                              {2.0, 1e300, 1.0},    {1.0 / 3.0, -1.0, 3.0},  {1.0 / 3.0, -1.0, 2.0}};
    for (Shape s : {kShapes[0], kShapes[2]})
        for (std::uint32_t it : {0u, 1u, 3u})
            for (const auto& v : in64) {
                Buf<double> o64(s.global);
                Buf<float> o32(s.global);
                run("fma_f64", s, {ptr(o64), val(it), val(v[0]), val(v[1]), val(v[2])});
                const double w64 = chain<double>(it, v[0], v[1], v[2], 1.0,
                                                 [](double x, double y, double z) { return std::fma(x, y, z); });
                for (std::size_t g = 0; g < s.global; ++g)
                    ASSERT_EQ(std::bit_cast<std::uint64_t>(o64.p[g]), std::bit_cast<std::uint64_t>(w64))
                        << "f64 work-item " << g << ": " << o64.p[g] << " want " << w64;
                const float a = float(v[0]), b = float(v[1]), x0 = float(v[2]);
                run("fma_f32", s, {ptr(o32), val(it), val(a), val(b), val(x0)});
                const float w32 =
                    chain<float>(it, a, b, x0, 1.0f, [](float x, float y, float z) { return std::fma(x, y, z); });
                for (std::size_t g = 0; g < s.global; ++g)
                    ASSERT_EQ(std::bit_cast<std::uint32_t>(o32.p[g]), std::bit_cast<std::uint32_t>(w32))
                        << "f32 work-item " << g << ": " << o32.p[g] << " want " << w32;
            }
    // gpuvet's own inputs over the iteration counts the check uses reach the CPU reference too.
    Buf<float> o(64);
    run("fma_f32", kShapes[1], {ptr(o), val(2000u), val(0.9375f), val(0.125f), val(1.0f)});
    EXPECT_EQ(o.p[63], ref::fma_f32_result(2000, 0.9375f, 0.125f, 1.0f));
}

TEST_F(AmdKernels, HalfChainsMatchExactArithmetic) {
    // (a, b, x0) per lane, low lane first: gpuvet's inputs, a chain with rounding in every step.
    const std::uint32_t f16[][3] = {{0x3B803B80u, 0x30003000u, 0x3C003C00u},
                                    {pack(0x3E00, 0x3C01), pack(0x3555, 0xB400), pack(0x4500, 0x3800)}};
    for (Shape s : {kShapes[0], kShapes[2]})
        for (std::uint32_t it : {0u, 1u, 2u, 5u})
            for (const auto& v : f16) {
                Buf<std::uint32_t> o(s.global);
                run("fma_f16x2", s, {ptr(o), val(it), val(v[0]), val(v[1]), val(v[2])});
                const std::uint32_t want = chain<std::uint32_t>(it, v[0], v[1], v[2], 0x3C003C00u, half2_fma);
                for (std::size_t g = 0; g < s.global; ++g)
                    ASSERT_EQ(o.p[g], want)
                        << std::hex << "f16x2 work-item " << g << ": " << o.p[g] << " want " << want;
            }
    Buf<std::uint32_t> o(64);
    run("fma_f16x2", kShapes[1], {ptr(o), val(300u), val(0x3B803B80u), val(0x30003000u), val(0x3C003C00u)});
    EXPECT_EQ(o.p[5], ref::fma_f16x2_result(300, 0x3B803B80u, 0x30003000u, 0x3C003C00u));
}

TEST_F(AmdKernels, MemtestWritesEveryPatternAtItsDeviceAddress) {
    const std::uint64_t seed = 0x6770757665742D31ull;
    for (Shape s : kShapes)
        for (std::uint32_t kind = 0; kind <= 6; ++kind) {
            const std::uint64_t n = 3001;
            Buf<std::uint64_t> buf(n);
            run("memtest_write", s, {ptr(buf), val(n), val(kind), val(seed)});
            std::vector<std::uint64_t> want(n);
            ref::memtest_write(want, reinterpret_cast<std::uint64_t>(buf.p), ref::MemtestPattern(kind), seed);
            ASSERT_EQ(buf.vec(), want) << "pattern " << kind << ", " << s.global << " work-items";
        }
}

TEST_F(AmdKernels, MemtestVerifyCountsAndRecordsEachWorkItemsFirstError) {
    const std::uint64_t seed = 0x1234, n = 5000;
    const std::uint32_t max_records = 4;
    for (Shape s : kShapes)
        for (std::uint32_t kind : {0u, 2u, 4u, 5u}) {
            Buf<std::uint64_t> buf(n), result(ref::memtest_result_words(max_records));
            run("memtest_write", s, {ptr(buf), val(n), val(kind), val(seed)});
            run("memtest_verify", s, {ptr(buf), val(n), val(kind), val(seed), ptr(result), val(max_records)});
            auto clean = ref::decode_memtest_result(result.vec(), max_records);
            ASSERT_EQ(clean.mismatches, 0u);
            ASSERT_EQ(clean.records_claimed, 0u);
            // Three bad words (two seen by the same work-item when the grid is small).
            for (std::uint64_t i : {7ull, 7ull + s.global, 4999ull}) buf.p[i] ^= 0x10;
            std::memset(result.p, 0, result.n * 8);
            run("memtest_verify", s, {ptr(buf), val(n), val(kind), val(seed), ptr(result), val(max_records)});
            auto got = ref::decode_memtest_result(result.vec(), max_records);
            auto want = ref::memtest_verify(buf.vec(), reinterpret_cast<std::uint64_t>(buf.p),
                                            ref::MemtestPattern(kind), seed, s.global, max_records);
            ASSERT_EQ(got.mismatches, want.mismatches);
            ASSERT_EQ(got.records_claimed, want.records_claimed);
            auto by_index = [](const ref::MemtestRecord& x, const ref::MemtestRecord& y) { return x.index < y.index; };
            std::sort(got.records.begin(), got.records.end(), by_index);  // the order is the scheduler's
            std::sort(want.records.begin(), want.records.end(), by_index);
            ASSERT_EQ(got.records, want.records);
        }
}

}  // namespace
