// GEMM and all-reduce arithmetic, library search order: everything the GPU checks decide on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "gpu/allreduce_plan.hpp"
#include "gpu/gemm_plan.hpp"
#include "gpu/bindings/cublaslt_api.hpp"
#include "gpu/bindings/lib_search.hpp"
#include "gpu/bindings/nccl_api.hpp"

namespace fs = std::filesystem;
using namespace gpuvet;

namespace {

const gemm::PrecisionInfo& info(gemm::Precision p) {
    for (const auto& x : gemm::precisions())
        if (x.precision == p) return x;
    throw std::logic_error("no precision");
}

void touch(const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x";
}

}  // namespace

TEST(GemmPlan, SweepIsBoundedByMemoryAndTier) {
    const auto& bf16 = info(gemm::Precision::bf16);
    auto quick = gemm::sweep(Tier::Quick, bf16, 1ull << 40);
    ASSERT_EQ(quick.size(), 2u);
    EXPECT_EQ(quick[0].text(), "8192x8192x8192");
    auto full = gemm::sweep(Tier::Full, bf16, 1ull << 40);
    EXPECT_EQ(full[0].text(), "16384x16384x16384");
    for (const auto& s : gemm::sweep(Tier::Full, bf16, 600ull << 20))
        EXPECT_LE(gemm::bytes_needed(s, bf16), 600ull << 20);
    // 4096^3 BF16 needs 96 MiB; with 40 MiB only the 2048 fallback fits.
    auto small = gemm::sweep(Tier::Standard, bf16, 40ull << 20);
    ASSERT_EQ(small.size(), 1u);
    EXPECT_EQ(small[0].text(), "2048x2048x2048");
    EXPECT_TRUE(gemm::sweep(Tier::Quick, bf16, 1ull << 20).empty());
}

TEST(GemmPlan, RandomInputsAreNeverZeroAndExact) {
    for (const auto& p : gemm::precisions()) {
        auto t = gemm::random_tile(p, 1000, 42);
        EXPECT_EQ(t.elements % 2, 1u) << p.name;
        for (std::size_t i = 0; i < t.elements; ++i) {
            double v = t.value(i);
            EXPECT_NE(v, 0) << p.name;
            EXPECT_FALSE(std::isnan(v)) << p.name;
        }
        EXPECT_EQ(t.value(3), t.value(3 + t.elements)) << "the tile repeats";
    }
    EXPECT_EQ(gemm::fp8_e4m3_value(0x38), 1.0);  // exponent 7 = bias
    EXPECT_EQ(gemm::fp8_e4m3_value(0xC0), -2.0);
    EXPECT_EQ(gemm::fp8_e4m3_value(0x7E), 448.0);  // the largest E4M3 value
}

TEST(GemmPlan, VerifyAcceptsTheReferenceAndRejectsAWrongValue) {
    const auto& bf16 = info(gemm::Precision::bf16);
    auto a = gemm::random_tile(bf16, 101, 1), b = gemm::random_tile(bf16, 103, 2);
    gemm::Shape s{64, 32, 256};
    auto where = gemm::sample_positions(s, 16, 7);
    std::vector<double> got;
    for (const auto& w : where) got.push_back(gemm::reference(a, b, s, w.i, w.j, nullptr));
    EXPECT_TRUE(gemm::verify(bf16, a, b, s, where, got).empty());
    got[5] = 3 - got[5];
    auto bad = gemm::verify(bf16, a, b, s, where, got);
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_EQ(bad[0].i, where[5].i);
    // INT8 is exact: one unit off is wrong.
    const auto& i8 = info(gemm::Precision::int8);
    auto ia = gemm::random_tile(i8, 101, 1), ib = gemm::random_tile(i8, 103, 2);
    std::vector<double> exact{gemm::reference(ia, ib, s, 0, 0, nullptr) + 1};
    EXPECT_EQ(gemm::verify(i8, ia, ib, s, {{0, 0}}, exact).size(), 1u);
}

TEST(GemmPlan, ExpectedValuesComputedOnceCompareLikeVerify) {
    // The burn computes the reference once and compares every batch against it.
    const auto& bf16 = info(gemm::Precision::bf16);
    auto a = gemm::random_tile(bf16, 101, 1), b = gemm::random_tile(bf16, 103, 2);
    gemm::Shape s{64, 32, 256};
    auto where = gemm::sample_positions(s, 8, 9);
    auto expected = gemm::expected_values(bf16, a, b, s, where);
    ASSERT_EQ(expected.size(), where.size());
    std::vector<double> got;
    for (const auto& e : expected) {
        EXPECT_GT(e.allowed, 0) << "bf16 has a tolerance";
        got.push_back(e.value);
    }
    EXPECT_TRUE(gemm::compare(expected, got).empty());
    got[2] = std::nan("");
    got[6] = 3 - got[6];
    auto bad = gemm::compare(expected, got);
    ASSERT_EQ(bad.size(), 2u);
    EXPECT_TRUE(std::isnan(bad[0].got));
    EXPECT_EQ(bad[1].j, where[6].j);
    EXPECT_EQ(gemm::verify(bf16, a, b, s, where, got).size(), 2u);
}

TEST(AllReducePlan, BusBandwidthSizesAndFloors) {
    EXPECT_DOUBLE_EQ(allreduce::bus_bandwidth(100, 8), 175);
    EXPECT_DOUBLE_EQ(allreduce::bus_bandwidth(100, 2), 100);
    auto q = allreduce::sizes(Tier::Quick, 1ull << 40);
    EXPECT_EQ(q.front(), 1ull << 20);
    EXPECT_EQ(q.back(), 256ull << 20);
    EXPECT_EQ(allreduce::sizes(Tier::Standard, 1ull << 40).back(), 1ull << 30);
    EXPECT_EQ(allreduce::sizes(Tier::Standard, 100ull << 20).back(), 64ull << 20);
    EXPECT_EQ(allreduce::floor_for("h200-sxm-141gb", 8, true)->busbw_gbps, 431);
    EXPECT_NEAR(allreduce::floor_for("h100-sxm5-80gb", 4, true)->busbw_gbps, 460 * 0.76, 1e-9);
    EXPECT_FALSE(allreduce::floor_for("h100-sxm5-80gb", 8, false));  // PCIe only: no floor
    EXPECT_FALSE(allreduce::floor_for("l40s-48gb", 8, true));
    EXPECT_EQ(allreduce::expected_sum(3, 9), 1 + 2 + 3 + 3 * 2);
    EXPECT_EQ(allreduce::algorithm_label(nullptr), "NCCL default (ring/tree/NVLS chosen by NCCL)");
    EXPECT_EQ(allreduce::algorithm_label("Ring"), "NCCL_ALGO=Ring");
}

TEST(LibrarySearch, EnvOverrideIsTheOnlyCandidate) {
    std::map<std::string, std::string> e{{"GPUVET_CUBLASLT", "/opt/x/libcublasLt.so.12"}};
    auto c = library_candidates(cublaslt_search(), [&](const char* n) {
        auto it = e.find(n);
        return it == e.end() ? nullptr : it->second.c_str();
    });
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].path, "/opt/x/libcublasLt.so.12");
}

TEST(LibrarySearch, OrderLoaderCudaNewestFirstThenSitePackages) {
    fs::path root = fs::temp_directory_path() / "gpuvet-libsearch-test";
    fs::remove_all(root);
    touch(root / "usr/local/cuda-12.2/lib64/libcublasLt.so.12");
    touch(root / "usr/local/cuda-12.10/lib64/libcublasLt.so.12");
    touch(root / "usr/local/lib/python3.11/dist-packages/nvidia/cublas/lib/libcublasLt.so.12");
    touch(root / "venv/lib/python3.12/site-packages/torch/lib/libcublasLt.so.12");
    touch(root / "pp/nvidia/cublas/lib/libcublasLt.so.11");
    std::map<std::string, std::string> e{{"VIRTUAL_ENV", "/venv"}, {"PYTHONPATH", "/pp:/missing"}};
    auto c = library_candidates(
        cublaslt_search(),
        [&](const char* n) {
            auto it = e.find(n);
            return it == e.end() ? nullptr : it->second.c_str();
        },
        root);
    std::vector<std::string> got;
    for (const auto& x : c) got.push_back(x.origin == "loader" ? x.path : fs::relative(x.path, root).string());
    std::vector<std::string> want = {"libcublasLt.so.13",
                                     "libcublasLt.so.12",
                                     "libcublasLt.so.11",
                                     "usr/local/cuda-12.10/lib64/libcublasLt.so.12",
                                     "usr/local/cuda-12.2/lib64/libcublasLt.so.12",
                                     "venv/lib/python3.12/site-packages/torch/lib/libcublasLt.so.12",
                                     "pp/nvidia/cublas/lib/libcublasLt.so.11",
                                     "usr/local/lib/python3.11/dist-packages/nvidia/cublas/lib/libcublasLt.so.12"};
    EXPECT_EQ(got, want);
    fs::remove_all(root);
}

TEST(LibrarySearch, MissingLibraryListsWhatWasTried) {
    setenv("GPUVET_CUBLASLT", "/nonexistent/libcublasLt.so.12", 1);
    auto lt = CublasLtApi::load(12080);
    unsetenv("GPUVET_CUBLASLT");
    EXPECT_FALSE(lt.ok());
    ASSERT_EQ(lt.tried.size(), 1u);
    EXPECT_NE(lt.tried[0].find("/nonexistent/libcublasLt.so.12"), std::string::npos);
    setenv("GPUVET_NCCL", "/nonexistent/libnccl.so.2", 1);
    auto n = NcclApi::load();
    unsetenv("GPUVET_NCCL");
    EXPECT_FALSE(n.ok());
    EXPECT_EQ(nccl_status_name(2), "ncclSystemError");
    EXPECT_EQ(cublas_status_name(15), "CUBLAS_STATUS_NOT_SUPPORTED");
}
