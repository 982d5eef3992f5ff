// The deadline on driver calls (gpu/bindings/driver_deadline): a call that never returns is
// abandoned at its budget, named with its GPU, and later calls to the same library or GPU fail
// fast; a healthy call returns its answer and runs on a thread of its own.
#include "gpu/bindings/driver_deadline.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "gpu/bindings/symbol_table.hpp"

namespace gpuvet {
namespace {

using Clock = std::chrono::steady_clock;

struct FakeHandle {};
FakeHandle g_gpu_handles[4];

enum Status { kOk = 0, kBad = 6 };  // range 0..7: 7 is the no-answer status

Status quick(FakeHandle*, int* out) {
    *out = 42;
    return kOk;
}
// A driver stuck in an ioctl: never returns (sleeps, so nothing it holds is destroyed at exit).
Status hang(FakeHandle*, int*) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}
Status thread_id(FakeHandle*, std::thread::id* out) {
    *out = std::this_thread::get_id();
    return kOk;
}
Status get_handle(unsigned index, FakeHandle** out) {
    *out = &g_gpu_handles[index];
    return kOk;
}

struct MiniApi {
    Status (*query)(FakeHandle*, int*) = nullptr;
    Status (*stuck)(FakeHandle*, int*) = nullptr;
    Status (*who)(FakeHandle*, std::thread::id*) = nullptr;
    Status (*handle)(unsigned, FakeHandle**) = nullptr;
};

}  // namespace

template <>
struct NoAnswer<Status> {
    static Status value() { return static_cast<Status>(7); }
};

template <>
struct DriverHooks<&MiniApi::handle> {
    static int gpu(DriverLib&, unsigned index, FakeHandle**) { return static_cast<int>(index); }
    static void after(DriverLib& lib, int gpu, Status rc, unsigned, FakeHandle** out) {
        if (rc == kOk) record_gpu_handle(lib, *out, gpu);
    }
};

namespace {

const SymbolEntry<MiniApi> kMini[] = {
    {{"miniQuery"}, Need::Required, &assign_member<&MiniApi::query, MiniApi>},
    {{"miniStuck"}, Need::Required, &assign_member<&MiniApi::stuck, MiniApi>},
    {{"miniWho"}, Need::Required, &assign_member<&MiniApi::who, MiniApi>},
    {{"miniGetHandle_v2", "miniGetHandle"}, Need::Required, &assign_member<&MiniApi::handle, MiniApi>},
};

void* lookup(const char* n) {
    std::string s(n);
    if (s == "miniQuery") return reinterpret_cast<void*>(&quick);
    if (s == "miniStuck") return reinterpret_cast<void*>(&hang);
    if (s == "miniWho") return reinterpret_cast<void*>(&thread_id);
    if (s == "miniGetHandle") return reinterpret_cast<void*>(&get_handle);
    return nullptr;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(DriverDeadline, HealthyCallsAnswerFromAWorkerThread) {
    MiniApi api;
    DriverLib& lib = driver_lib("MiniHealthy", GpuFrom::Handle);
    ASSERT_TRUE(resolve_symbols<MiniApi>(kMini, api, lookup, &lib).complete());
    EXPECT_NE(api.query, &quick);  // wrapped
    int v = 0;
    EXPECT_EQ(api.query(nullptr, &v), kOk);
    EXPECT_EQ(v, 42);
    std::thread::id worker{}, worker_again{};
    api.who(nullptr, &worker);
    api.who(nullptr, &worker_again);
    EXPECT_NE(worker, std::this_thread::get_id());  // the caller only waits
    EXPECT_EQ(worker, worker_again);                // one worker per calling thread: CUDA contexts stay put
}

TEST(DriverDeadline, UnwrappedWithoutALibrary) {
    MiniApi api;
    ASSERT_TRUE(resolve_symbols<MiniApi>(kMini, api, lookup).complete());
    EXPECT_EQ(api.query, &quick);
}

TEST(DriverDeadline, AHungGpuCallIsAbandonedNamedAndRefusedAfterwards) {
    set_driver_timeout_s(0.3);
    MiniApi api;
    DriverLib& lib = driver_lib("NVML", GpuFrom::Handle);  // named NVML: messages say "GPU n"
    ASSERT_TRUE(resolve_symbols<MiniApi>(kMini, api, lookup, &lib).complete());
    FakeHandle* h0 = nullptr;
    FakeHandle* h2 = nullptr;
    ASSERT_EQ(api.handle(0, &h0), kOk);
    ASSERT_EQ(api.handle(2, &h2), kOk);
    EXPECT_EQ(gpu_of_handle(lib, h2), 2);

    int v = 0;
    auto t = Clock::now();
    EXPECT_EQ(static_cast<int>(api.stuck(h2, &v)), 7);
    double took = seconds_since(t);
    EXPECT_GE(took, 0.3);
    EXPECT_EQ(last_driver_no_answer(),
              "GPU 2: miniStuck did not return in 0.3 s: the driver is wedged; check `dmesg` for Xid and NVRM "
              "messages, a reset or reboot is needed");
    EXPECT_TRUE(any_driver_wedged());
    EXPECT_NE(driver_wedge_summary().find("GPU 2: miniStuck"), std::string::npos);

    // GPU 2 fails fast from now on; GPU 0 still answers.
    t = Clock::now();
    EXPECT_EQ(static_cast<int>(api.query(h2, &v)), 7);
    EXPECT_LT(seconds_since(t), 0.3);
    EXPECT_NE(last_driver_no_answer().find("miniQuery not called"), std::string::npos);
    EXPECT_EQ(api.query(h0, &v), kOk);
    EXPECT_EQ(v, 42);
    // What a monitor asks of each GPU before it shows readings: GPU 2 is named, GPU 0 is not.
    EXPECT_EQ(handle_no_answer(lib, h2).rfind("GPU 2: miniStuck did not return in 0.3 s", 0), 0u);
    EXPECT_EQ(handle_no_answer(lib, h0), "");
}

TEST(DriverDeadline, AHungCallWithoutAGpuWedgesTheLibrary) {
    set_driver_timeout_s(0.2);
    MiniApi api;
    DriverLib& lib = driver_lib("MiniWedged", GpuFrom::Handle);
    ASSERT_TRUE(resolve_symbols<MiniApi>(kMini, api, lookup, &lib).complete());
    int v = 0;
    EXPECT_EQ(static_cast<int>(api.stuck(nullptr, &v)), 7);
    // Not NVML and not a known query: a call that may wait for GPU work, ten times the budget.
    EXPECT_EQ(last_driver_no_answer().rfind("miniStuck did not return in 2 s: the driver is wedged", 0), 0u);
    auto t = Clock::now();
    EXPECT_EQ(static_cast<int>(api.query(nullptr, &v)), 7);
    EXPECT_LT(seconds_since(t), 0.2);
}

TEST(DriverDeadline, TimeoutEnvironmentIsValidated) {
    setenv(kEnvDriverTimeout, "abc", 1);
    EXPECT_NE(driver_timeout_env_problem().find("GPUVET_DRIVER_TIMEOUT_S='abc'"), std::string::npos);
    setenv(kEnvDriverTimeout, "-1", 1);
    EXPECT_FALSE(driver_timeout_env_problem().empty());
    setenv(kEnvDriverTimeout, "2.5", 1);
    EXPECT_TRUE(driver_timeout_env_problem().empty());
    unsetenv(kEnvDriverTimeout);
    EXPECT_TRUE(driver_timeout_env_problem().empty());
}

}  // namespace
}  // namespace gpuvet
