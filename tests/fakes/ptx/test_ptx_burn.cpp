// burn_check.ptx against the comparison rule of its header, brute force: NaNs, infinities,
// differences exactly at and just past the tolerance, f16 inputs widened exactly.
#include <cmath>

#include "half_reference.hpp"
#include "ptx_test_support.hpp"

namespace {

using namespace ptxtest;

struct Counts {
    uint64_t mismatches = 0, nans = 0;
};
Counts rule(const std::vector<float>& a, const std::vector<float>& b, float abs_tol, float rel_tol) {
    Counts c;
    for (size_t k = 0; k < a.size(); ++k) {
        if (std::isnan(a[k]) || std::isnan(b[k])) ++c.nans;
        else if (std::fabs(a[k] - b[k]) > std::fma(rel_tol, std::fabs(b[k]), abs_tol)) ++c.mismatches;
    }
    return c;
}

Counts run(FakeGpu& g, const char* kernel, Shape s, CUdeviceptr a, CUdeviceptr b, uint64_t n, float abs_tol,
           float rel_tol) {
    std::vector<uint64_t> res = {100, 200, 0xABCD};  // the kernel adds to the first two words only
    CUdeviceptr dr = g.upload(res);
    EXPECT_EQ(g.launch(kernel, s, {arg(a), arg(b), arg(n), arg(abs_tol), arg(rel_tol), arg(dr)}), CUDA_SUCCESS);
    auto got = g.download<uint64_t>(dr, 3);
    EXPECT_EQ(got[2], 0xABCDu);
    return {got[0] - 100, got[1] - 200};
}

std::vector<float> operands(Rng& r, size_t n, std::vector<float>& b, float abs_tol, float rel_tol) {
    std::vector<float> a(n);
    b.resize(n);
    for (size_t k = 0; k < n; ++k) {
        b[k] = float(int64_t(r.next() % 2001) - 1000) / 8.0f;
        const float tol = std::fma(rel_tol, std::fabs(b[k]), abs_tol);
        switch (r.next() % 8) {
            case 0: a[k] = b[k]; break;
            case 1: a[k] = b[k] + tol; break;                            // at the edge (if exact)
            case 2: a[k] = std::nextafter(b[k] + tol, INFINITY); break;  // just past it
            case 3: a[k] = std::nextafter(b[k] - tol, -INFINITY); break;
            case 4: a[k] = NAN; break;
            case 5: b[k] = NAN, a[k] = 1; break;
            case 6: a[k] = (r.next() & 1) ? INFINITY : -INFINITY; break;
            default: a[k] = b[k] * 1.5f + 1; break;
        }
    }
    if (n > 1) a[n - 1] = NAN, a[0] = INFINITY, b[0] = INFINITY;  // equal infinities: not a mismatch
    return a;
}

TEST(PtxBurnCheck, F32CountsMismatchesAndNansLikeTheRule) {
    FakeGpu g;
    Rng r{21};
    for (Shape s : shapes())
        for (uint64_t n : {0ull, 1ull, 5ull, 333ull})
            for (float abs_tol : {0.0f, 0.25f})
                for (float rel_tol : {0.0f, 1e-3f}) {
                    std::vector<float> b, a = operands(r, n, b, abs_tol, rel_tol);
                    a.push_back(NAN), b.push_back(NAN);  // past n: never looked at
                    Counts want = rule({a.begin(), a.end() - 1}, {b.begin(), b.end() - 1}, abs_tol, rel_tol);
                    Counts got = run(g, "burn_compare_f32", s, g.upload(a), g.upload(b), n, abs_tol, rel_tol);
                    EXPECT_EQ(got.mismatches, want.mismatches) << "n " << n << " grid " << s.grid << "x" << s.block;
                    EXPECT_EQ(got.nans, want.nans) << "n " << n;
                }
}

TEST(PtxBurnCheck, F16ComparesExactlyWidenedHalves) {
    FakeGpu g;
    Rng r{22};
    for (Shape s : shapes())
        for (uint64_t n : {0ull, 1ull, 6ull, 401ull}) {
            std::vector<uint16_t> a(n + 1), b(n + 1);
            for (uint64_t k = 0; k <= n; ++k) {
                a[k] = uint16_t(r.next());
                b[k] = r.next() % 3 ? a[k] ^ uint16_t(1u << (r.next() % 16)) : a[k];
            }
            a[n] = 0x7E00;  // NaN past the end
            std::vector<float> fa, fb;
            for (uint64_t k = 0; k < n; ++k)
                fa.push_back(float(to_double(a[k], kHalf))), fb.push_back(float(to_double(b[k], kHalf)));
            for (float tol : {0.0f, 0.5f}) {
                Counts want = rule(fa, fb, tol, tol);
                Counts got = run(g, "burn_compare_f16", s, g.upload(a), g.upload(b), n, tol, tol);
                EXPECT_EQ(got.mismatches, want.mismatches) << "n " << n;
                EXPECT_EQ(got.nans, want.nans) << "n " << n;
            }
        }
}

}  // namespace
