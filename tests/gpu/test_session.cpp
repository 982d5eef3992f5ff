// GpuSession / GpuSet on the fake libcuda: primary context, buffers, copies, event timing on the
// simulated clock, module loading and launch argument checking.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu/session.hpp"

using namespace gpuvet;

namespace {

std::shared_ptr<const CudaApi> fake_api(const char* scenario) {
    setenv("GPUVET_FAKE_SCENARIO", (std::string(FAKE_SCENARIO_DIR) + "/" + scenario).c_str(), 1);
    auto api = std::make_shared<CudaApi>(CudaApi::load_file(FAKE_CUDA));
    EXPECT_TRUE(api->ok()) << api->error;
    auto reset = reinterpret_cast<void (*)()>(DynLib::open("", {FAKE_CUDA}).symbol("gpuvet_fake_cuda_reset"));
    if (reset) reset();
    cuda_check(*api, api->cuInit(0), "cuInit");
    return api;
}

}  // namespace

TEST(GpuSession, OpensEveryGpuOfTheScenario) {
    auto api = fake_api("healthy_8x_h100_sxm.toml");
    GpuSet set = GpuSet::open(api, {{0, 0}, {3, 3}, {5, -1}});
    ASSERT_EQ(set.members().size(), 3u);
    ASSERT_TRUE(set.members()[0].session);
    EXPECT_EQ(set.members()[1].session->ordinal(), 3);
    EXPECT_FALSE(set.members()[2].session);
    EXPECT_NE(set.members()[2].error.find("no CUDA device"), std::string::npos);
    GpuSession& s = *set.members()[0].session;
    s.make_current();
    EXPECT_EQ(s.sm_count(), 132);
    EXPECT_EQ(s.compute_capability(), 90);
    EXPECT_EQ(s.l2_cache_bytes(), 50u << 20);
    EXPECT_GT(s.mem_info().free_bytes, 70ull << 30);
}

TEST(GpuSession, CopiesRoundTripAndEventsTimeOnTheSimulatedClock) {
    auto api = fake_api("healthy_8x_h100_sxm.toml");
    GpuSession s(api, 1);
    const std::size_t n = 1 << 20;
    DeviceBuffer d = s.alloc(n);
    std::vector<unsigned char> in(n), out(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7);
    s.upload(d.ptr(), in.data(), n);
    s.download(out.data(), d.ptr(), n);
    EXPECT_EQ(in, out);
    PinnedBuffer h = s.alloc_pinned(n);
    Stream st = s.stream();
    double ms = s.time_ms(st, [&] {
        cuda_check(api.operator*(), api->cuMemcpyHtoDAsync(d.ptr(), h.data(), n, st.get()), "cuMemcpyHtoDAsync");
    });
    EXPECT_NEAR(n / (ms * 1e-3) / 1e9, 55.0, 0.01);  // the scenario's h2d_bandwidth_gbps
}

TEST(GpuSession, LoadsModulesAndChecksLaunchArguments) {
    auto api = fake_api("healthy_8x_h100_sxm.toml");
    GpuSession s(api, 0);
    EXPECT_NE(s.function("stream_copy"), nullptr);
    EXPECT_EQ(s.function("stream_copy"), s.function("stream_copy"));  // cached
    Stream st = s.stream();
    DeviceBuffer a = s.alloc(1 << 16), b = s.alloc(1 << 16);
    try {
        s.launch("stream_copy", s.geometry("stream_copy"), st, {arg::ptr(a), arg::u32(1)});
        FAIL() << "argument mismatch not caught";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Internal);
        EXPECT_NE(std::string(e.what()).find("stream_copy"), std::string::npos);
    }
    EXPECT_THROW(s.function("no_such_kernel"), Error);
}

TEST(GpuSession, BelowMinimumComputeCapabilityIsADriverErrorNamingIt) {
    std::string path = ::testing::TempDir() + "/turing.toml";
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("gpu_count = 1\n[all]\ncc_major = 7\ncc_minor = 5\n", f);
    std::fclose(f);
    setenv("GPUVET_FAKE_SCENARIO", path.c_str(), 1);
    auto api = std::make_shared<CudaApi>(CudaApi::load_file(FAKE_CUDA));
    reinterpret_cast<void (*)()>(DynLib::open("", {FAKE_CUDA}).symbol("gpuvet_fake_cuda_reset"))();
    cuda_check(*api, api->cuInit(0), "cuInit");
    GpuSession s(api, 0);
    EXPECT_NO_THROW(s.function("fma_f16x2"));
    try {
        s.function("fma_bf16x2");
        FAIL() << "BF16 kernel loaded on sm_75";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Driver);
        EXPECT_NE(std::string(e.what()).find("needs compute capability 8.0"), std::string::npos) << e.what();
    }
}

TEST(GpuSession, RunParallelUsesEachGpuOnItsOwnThread) {
    auto api = fake_api("healthy_8x_h100_sxm.toml");
    GpuSet set = GpuSet::open(api, {{0, 0}, {1, 1}, {2, 2}, {3, 3}});
    std::vector<std::size_t> got(4, 0);
    set.run_parallel([&](GpuSet::Member& m) {
        DeviceBuffer d = m.session->alloc(4096);
        std::vector<unsigned> v(1024, static_cast<unsigned>(m.index + 1)), back(1024);
        m.session->upload(d.ptr(), v.data(), 4096);
        m.session->download(back.data(), d.ptr(), 4096);
        got[static_cast<std::size_t>(m.index)] = back[1023];
    });
    EXPECT_EQ(got, (std::vector<std::size_t>{1, 2, 3, 4}));
}
