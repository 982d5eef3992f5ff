// memtest.ptx against the pattern definitions in its header, for every pattern kind and several
// seeds, and memtest_verify's counters and records against a brute-force scan.
#include <set>

#include "ptx_test_support.hpp"

namespace {

using namespace ptxtest;

uint64_t finalise(uint64_t z) {  // splitmix64's finaliser, as memtest.ptx's header states it
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
uint64_t pattern(uint64_t addr, uint64_t i, uint32_t kind, uint64_t seed) {
    const uint64_t walk = 1ull << ((i + seed) % 64);
    const uint64_t rnd = finalise(seed + (i + 1) * 0x9E3779B97F4A7C15ull);
    switch (kind) {
        case 0: return addr;
        case 1: return ~addr;
        case 2: return walk;
        case 3: return ~walk;
        case 4: return rnd;
        case 5: return ~rnd;
        default: return seed;
    }
}
const std::vector<uint64_t> kSeeds = {0, 1, 63, 0x6770757665742D31ull, ~0ull};
const std::vector<uint64_t> kWords = {0, 1, 13, 64, 257};

TEST(PtxMemtest, WriteStoresEveryPatternOfTheHeader) {
    FakeGpu g;
    CUdeviceptr d = g.alloc(8 * 300);
    for (uint32_t kind = 0; kind <= 8; ++kind)
        for (uint64_t seed : kSeeds)
            for (Shape s : {shapes()[0], shapes()[3], shapes()[5]})
                for (uint64_t n : kWords) {
                    std::vector<uint64_t> fill(300, 0x5555AAAA5555AAAAull);
                    ASSERT_EQ(g.fn<decltype(&cuMemcpyHtoD_v2)>("cuMemcpyHtoD_v2")(d, fill.data(), 8 * 300),
                              CUDA_SUCCESS);
                    ASSERT_EQ(g.launch("memtest_write", s, {arg(d), arg(n), arg(kind), arg(seed)}), CUDA_SUCCESS);
                    auto got = g.download<uint64_t>(d, 300);
                    for (uint64_t i = 0; i < 300; ++i)
                        ASSERT_EQ(got[i], i < n ? pattern(d + 8 * i, i, kind, seed) : 0x5555AAAA5555AAAAull)
                            << "kind " << kind << " seed " << seed << " word " << i << " of " << n;
                }
}

struct Verified {
    uint64_t mismatches = 0, claimed = 0;
    std::vector<std::pair<uint64_t, uint64_t>> records;
    uint64_t after = 0;  // the word after the last record slot (must stay untouched)
};
Verified verify(FakeGpu& g, Shape s, CUdeviceptr buf, uint64_t n, uint32_t kind, uint64_t seed, uint32_t max_records) {
    std::vector<uint64_t> res(2 + 2 * max_records + 1, 0);
    res.back() = 0xFEEDFACEull;
    CUdeviceptr dr = g.upload(res);
    EXPECT_EQ(g.launch("memtest_verify", s, {arg(buf), arg(n), arg(kind), arg(seed), arg(dr), arg(max_records)}),
              CUDA_SUCCESS);
    auto got = g.download<uint64_t>(dr, res.size());
    Verified v{got[0], got[1], {}, got.back()};
    for (uint64_t k = 0; k < std::min<uint64_t>(got[1], max_records); ++k)
        v.records.emplace_back(got[2 + 2 * k], got[3 + 2 * k]);
    return v;
}

TEST(PtxMemtest, VerifyCountsMismatchesAndRecordsEachThreadsFirst) {
    FakeGpu g;
    Rng r{7};
    const uint64_t n = 257;
    for (uint32_t kind : {0u, 2u, 3u, 4u, 5u, 6u})
        for (Shape s : shapes()) {
            const uint64_t seed = r.next();
            std::vector<uint64_t> host(n);
            CUdeviceptr d = g.alloc(8 * n);
            for (uint64_t i = 0; i < n; ++i) host[i] = pattern(d + 8 * i, i, kind, seed);
            std::set<uint64_t> bad = {0, n - 1};  // both ends: an off-by-one in either bound shows
            for (int k = 0; k < 6; ++k) bad.insert(r.next() % n);
            for (uint64_t i : bad) host[i] ^= 1ull << (r.next() % 64);
            ASSERT_EQ(g.fn<decltype(&cuMemcpyHtoD_v2)>("cuMemcpyHtoD_v2")(d, host.data(), 8 * n), CUDA_SUCCESS);
            const uint64_t T = uint64_t{s.grid} * s.block;
            std::map<uint64_t, uint64_t> first;  // thread -> its first mismatching word
            for (uint64_t i : bad) first.emplace(i % T, i);
            for (uint32_t max_records : {0u, 1u, 3u, 64u}) {
                Verified v = verify(g, s, d, n, kind, seed, max_records);
                EXPECT_EQ(v.mismatches, bad.size()) << "kind " << kind;
                EXPECT_EQ(v.claimed, first.size()) << "kind " << kind;
                EXPECT_EQ(v.after, 0xFEEDFACEull) << "a record was written past max_records";
                EXPECT_EQ(v.records.size(), std::min<uint64_t>(first.size(), max_records));
                std::set<uint64_t> seen;
                for (auto [i, observed] : v.records) {
                    ASSERT_LT(i, n);
                    EXPECT_EQ(first.at(i % T), i) << "record of word " << i << " is not its thread's first mismatch";
                    EXPECT_EQ(observed, host[i]) << "record of word " << i;
                    EXPECT_TRUE(seen.insert(i).second) << "word " << i << " recorded twice";
                }
            }
            // A clean buffer: nothing counted, nothing recorded.
            for (uint64_t i : bad) host[i] = pattern(d + 8 * i, i, kind, seed);
            ASSERT_EQ(g.fn<decltype(&cuMemcpyHtoD_v2)>("cuMemcpyHtoD_v2")(d, host.data(), 8 * n), CUDA_SUCCESS);
            Verified clean = verify(g, s, d, n, kind, seed, 4);
            EXPECT_EQ(clean.mismatches, 0u);
            EXPECT_EQ(clean.claimed, 0u);
        }
}

TEST(PtxMemtest, WriteThenVerifyWithAnotherPatternFailsEveryWord) {
    FakeGpu g;
    const uint64_t n = 64;
    CUdeviceptr d = g.alloc(8 * n);
    ASSERT_EQ(g.launch("memtest_write", shapes()[2], {arg(d), arg(n), arg(4u), arg(uint64_t{9})}), CUDA_SUCCESS);
    EXPECT_EQ(verify(g, shapes()[2], d, n, 4, 9, 8).mismatches, 0u);
    EXPECT_EQ(verify(g, shapes()[2], d, n, 5, 9, 8).mismatches, n);   // the complement differs everywhere
    EXPECT_EQ(verify(g, shapes()[2], d, n, 4, 10, 8).mismatches, n);  // another seed
}

// A scenario's bad cell corrupts the backing memory the kernel wrote; the verify kernel finds it.
TEST(PtxMemtest, BadCellOfTheScenarioIsFoundByTheKernels) {
    FakeGpu g("[gpu.0]\nbad_memory_cells = [{ offset_bytes = 4096, flip = 0x10 }]\n");
    const uint64_t n = 1024;
    CUdeviceptr d = g.alloc(8 * n);  // first allocation: physical offset 0
    ASSERT_EQ(g.launch("memtest_write", shapes()[4], {arg(d), arg(n), arg(0u), arg(uint64_t{0})}), CUDA_SUCCESS);
    EXPECT_EQ(g.download<uint64_t>(d + 4096, 1)[0], (d + 4096) ^ 0x10);
    Verified v = verify(g, shapes()[4], d, n, 0, 0, 4);
    EXPECT_EQ(v.mismatches, 1u);
    ASSERT_EQ(v.records.size(), 1u);
    EXPECT_EQ(v.records[0].first, 4096u / 8);
    EXPECT_EQ(v.records[0].second, (d + 4096) ^ 0x10);
}

}  // namespace
