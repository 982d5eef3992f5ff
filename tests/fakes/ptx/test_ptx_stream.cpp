// stream.ptx run by the interpreter against brute-force CPU results: odd lengths, several grid
// shapes, sentinels past the end (a grid-stride loop that overruns or skips the tail shows).
#include <cmath>

#include "ptx_test_support.hpp"

namespace {

using namespace ptxtest;

constexpr uint32_t kSentinel = 0xDEADBEEFu;
const std::vector<uint64_t> kLengths = {0, 1, 2, 7, 37, 300};  // 16-byte vectors

std::vector<uint32_t> random_words(Rng& r, size_t n) {
    std::vector<uint32_t> v(n);
    for (auto& w : v) w = static_cast<uint32_t>(r.next());
    return v;
}

TEST(PtxStream, WriteFillsExactlyNVectors) {
    FakeGpu g;
    for (Shape s : shapes())
        for (uint64_t n : kLengths) {
            std::vector<uint32_t> host(4 * n + 8, kSentinel);
            CUdeviceptr d = g.upload(host);
            ASSERT_EQ(g.launch("stream_write", s, {arg(d), arg(n), arg(0x12345678u)}), CUDA_SUCCESS);
            auto got = g.download<uint32_t>(d, host.size());
            for (size_t k = 0; k < got.size(); ++k)
                ASSERT_EQ(got[k], k < 4 * n ? 0x12345678u : kSentinel)
                    << "word " << k << " n " << n << " grid " << s.grid << "x" << s.block;
        }
}

TEST(PtxStream, CopyCopiesSourceToDestination) {
    FakeGpu g;
    Rng r{1};
    for (Shape s : shapes())
        for (uint64_t n : kLengths) {
            auto src = random_words(r, 4 * n + 8);
            std::vector<uint32_t> dst(src.size(), kSentinel);
            CUdeviceptr ds = g.upload(src), dd = g.upload(dst);
            ASSERT_EQ(g.launch("stream_copy", s, {arg(dd), arg(ds), arg(n)}), CUDA_SUCCESS);
            auto got = g.download<uint32_t>(dd, dst.size());
            for (size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], k < 4 * n ? src[k] : kSentinel) << k;
            EXPECT_EQ(g.download<uint32_t>(ds, src.size()), src);  // the source is only read
        }
}

TEST(PtxStream, TriadIsOneRoundedFmaPerFloat) {
    FakeGpu g;
    Rng r{2};
    for (Shape s : shapes())
        for (uint64_t n : kLengths) {
            std::vector<float> b(4 * n + 4), c(4 * n + 4), a(4 * n + 4, -7.5f);
            for (size_t k = 0; k < b.size(); ++k) {
                b[k] = float(int64_t(r.next() % 2000001) - 1000000) / 1024.0f;
                c[k] = float(int64_t(r.next() % 2000001) - 1000000) / 3.0f;
            }
            if (n) b[0] = INFINITY, c[1] = NAN, b[2] = 1e-40f, c[2] = 1e-3f;  // inf, NaN and a subnormal kept
            const float scale = 3.0f / 7.0f;
            CUdeviceptr da = g.upload(a), db = g.upload(b), dc = g.upload(c);
            ASSERT_EQ(g.launch("stream_triad", s, {arg(da), arg(db), arg(dc), arg(scale), arg(n)}), CUDA_SUCCESS);
            auto got = g.download<float>(da, a.size());
            for (size_t k = 0; k < got.size(); ++k) {
                const float want = k < 4 * n ? std::fma(scale, c[k], b[k]) : -7.5f;  // fmaf: correctly rounded
                ASSERT_TRUE(std::memcmp(&got[k], &want, 4) == 0 || (std::isnan(got[k]) && std::isnan(want)))
                    << k << ": " << got[k] << " want " << want;
            }
        }
}

TEST(PtxStream, ReadSumsEachThreadsVectors) {
    FakeGpu g;
    Rng r{3};
    for (Shape s : shapes())
        for (uint64_t n : kLengths) {
            auto src = random_words(r, 4 * n + 4);
            const uint64_t T = uint64_t{s.grid} * s.block;
            std::vector<uint32_t> partial(T + 4, kSentinel);
            CUdeviceptr ds = g.upload(src), dp = g.upload(partial);
            ASSERT_EQ(g.launch("stream_read", s, {arg(ds), arg(n), arg(dp)}), CUDA_SUCCESS);
            auto got = g.download<uint32_t>(dp, partial.size());
            for (uint64_t t = 0; t < T + 4; ++t) {
                uint32_t want = t < T ? 0 : kSentinel;
                for (uint64_t v = t; t < T && v < n; v += T)
                    for (int w = 0; w < 4; ++w) want += src[4 * v + w];
                ASSERT_EQ(got[t], want) << "thread " << t << " n " << n;
            }
        }
}

TEST(PtxStream, VerifyCountsEveryDifferentWord) {
    FakeGpu g;
    Rng r{4};
    for (Shape s : shapes())
        for (uint64_t n : kLengths) {
            std::vector<uint32_t> buf(4 * n + 4, 0x3F800000u);
            for (size_t k = 4 * n; k < buf.size(); ++k) buf[k] = 0;  // past the end: never counted
            uint64_t wrong = 0;
            for (size_t k = 0; k < 4 * n; ++k)
                if (r.next() % 5 == 0 || k == 4 * n - 1) buf[k] ^= 1u << (r.next() % 32), ++wrong;
            std::vector<uint64_t> count = {5};  // the kernel adds to what is there
            CUdeviceptr db = g.upload(buf), dc = g.upload(count);
            ASSERT_EQ(g.launch("stream_verify", s, {arg(db), arg(n), arg(0x3F800000u), arg(dc)}), CUDA_SUCCESS);
            EXPECT_EQ(g.download<uint64_t>(dc, 1)[0], 5 + wrong) << "n " << n << " grid " << s.grid << "x" << s.block;
        }
}

}  // namespace
