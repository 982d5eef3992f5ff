// The deadline on driver calls (gpu/bindings/driver_deadline): a call that never returns is
// abandoned at its budget, named with its GPU, and later calls to the same library or GPU fail
// fast; a healthy call returns its answer and runs on a thread of its own; what a call writes
// through its pointers lands in the call's own storage and reaches the caller only when it
// returned in time.
#include "gpu/bindings/driver_deadline.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "gpu/bindings/cublaslt_api.hpp"
#include "gpu/bindings/nvml_api.hpp"
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

// A call the test lets return late, after its caller gave up: it writes its answer then.
std::atomic<bool> g_release{false}, g_wrote{false};
Status late(FakeHandle*, int* out) {
    while (!g_release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    *out = 99;
    g_wrote.store(true);
    return kOk;
}

// A driver's usual shapes: an opaque handle, an array and its in-out count, a versioned struct,
// a char buffer and its length, a C string. Each records the addresses it was given.
struct Opaque;  // as nvmlDevice_st: never defined
struct Versioned {
    unsigned version;
    unsigned long long total, used;
};
struct Seen {
    const void *handle = nullptr, *count = nullptr, *items = nullptr, *info = nullptr, *name = nullptr, *key = nullptr;
    std::string key_text;
};
Seen g_seen;
Status list(Opaque* h, unsigned* count, int* items) {
    g_seen.handle = h, g_seen.count = count, g_seen.items = items;
    unsigned room = *count;
    *count = 3;
    if (room < 3) return kBad;
    for (int i = 0; i < 3; ++i) items[i] = 10 + i;
    return kOk;
}
Status info(Opaque*, Versioned* v) {
    g_seen.info = v;
    if (v->version != 2) return kBad;
    v->total = 80, v->used = 5;
    return kOk;
}
Status name(Opaque*, char* buf, unsigned len) {
    g_seen.name = buf;
    std::snprintf(buf, len, "%s", "NVIDIA H100 80GB HBM3");
    return kOk;
}
Status echo(FakeHandle* h, FakeHandle** out) {
    *out = h;
    return kOk;
}
Status lookup_key(const char* key, int* out) {
    g_seen.key = key;
    g_seen.key_text = key;
    *out = static_cast<int>(std::strlen(key));
    return kOk;
}

struct MiniApi {
    Status (*query)(FakeHandle*, int*) = nullptr;
    Status (*stuck)(FakeHandle*, int*) = nullptr;
    Status (*who)(FakeHandle*, std::thread::id*) = nullptr;
    Status (*handle)(unsigned, FakeHandle**) = nullptr;
    Status (*late)(FakeHandle*, int*) = nullptr;
    Status (*list)(Opaque*, unsigned*, int*) = nullptr;
    Status (*info)(Opaque*, Versioned*) = nullptr;
    Status (*name)(Opaque*, char*, unsigned) = nullptr;
    Status (*key)(const char*, int*) = nullptr;
    Status (*echo)(FakeHandle*, FakeHandle**) = nullptr;
};

}  // namespace

template <>
struct NoAnswer<Status> {
    static Status value() { return static_cast<Status>(7); }
};

// A handle of a complete type, as cuBLASLt's descriptors are: the library's own object.
template <>
struct OpaqueHandle<FakeHandle> : std::true_type {};
static_assert(!holdable<lt::cublasLtMatmulDesc_t>() && holdable<lt::cublasLtMatmulDesc_t*>());
static_assert(!holdable<nvml::nvmlDevice_t>() && holdable<nvml::nvmlDevice_t*>());

template <>
struct DriverHooks<&MiniApi::handle> {
    static int gpu(DriverLib&, unsigned index, FakeHandle**) { return static_cast<int>(index); }
    static void after(DriverLib& lib, int gpu, Status rc, unsigned, FakeHandle** out) {
        if (rc == kOk) record_gpu_handle(lib, *out, gpu);
    }
};

// The array's length is the in-out count before it.
template <>
struct DriverArgs<&MiniApi::list> : ArrayArgs<1, 2> {};

namespace {

const SymbolEntry<MiniApi> kMini[] = {
    {{"miniQuery"}, Need::Required, &assign_member<&MiniApi::query, MiniApi>},
    {{"miniStuck"}, Need::Required, &assign_member<&MiniApi::stuck, MiniApi>},
    {{"miniWho"}, Need::Required, &assign_member<&MiniApi::who, MiniApi>},
    {{"miniGetHandle_v2", "miniGetHandle"}, Need::Required, &assign_member<&MiniApi::handle, MiniApi>},
    {{"miniLate"}, Need::Required, &assign_member<&MiniApi::late, MiniApi>},
    {{"miniList"}, Need::Required, &assign_member<&MiniApi::list, MiniApi>},
    {{"miniInfo"}, Need::Required, &assign_member<&MiniApi::info, MiniApi>},
    {{"miniName"}, Need::Required, &assign_member<&MiniApi::name, MiniApi>},
    {{"miniKey"}, Need::Required, &assign_member<&MiniApi::key, MiniApi>},
    {{"miniEcho"}, Need::Required, &assign_member<&MiniApi::echo, MiniApi>},
};

void* lookup(const char* n) {
    std::string s(n);
    if (s == "miniQuery") return reinterpret_cast<void*>(&quick);
    if (s == "miniStuck") return reinterpret_cast<void*>(&hang);
    if (s == "miniWho") return reinterpret_cast<void*>(&thread_id);
    if (s == "miniGetHandle") return reinterpret_cast<void*>(&get_handle);
    if (s == "miniLate") return reinterpret_cast<void*>(&late);
    if (s == "miniList") return reinterpret_cast<void*>(&list);
    if (s == "miniInfo") return reinterpret_cast<void*>(&info);
    if (s == "miniName") return reinterpret_cast<void*>(&name);
    if (s == "miniKey") return reinterpret_cast<void*>(&lookup_key);
    if (s == "miniEcho") return reinterpret_cast<void*>(&echo);
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

TEST(DriverDeadline, AnAbandonedCallThatReturnsLateWritesIntoItsOwnStorage) {
    set_driver_timeout_s(0.1);
    MiniApi api;
    DriverLib& lib = driver_lib("MiniLate", GpuFrom::Handle);
    ASSERT_TRUE(resolve_symbols<MiniApi>(kMini, api, lookup, &lib).complete());
    int answer = 7;  // the caller's: alive for the whole test, so a late write into it would show
    EXPECT_EQ(static_cast<int>(api.late(nullptr, &answer)), 7);
    EXPECT_NE(last_driver_no_answer().find("miniLate did not return"), std::string::npos);
    g_release.store(true);  // the driver comes back and writes its answer
    for (auto t = Clock::now(); !g_wrote.load() && seconds_since(t) < 30;)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(g_wrote.load());
    EXPECT_EQ(answer, 7);  // the write went to the call's own storage
}

TEST(DriverDeadline, PointersGoThroughTheCallsOwnStorageAndBack) {
    MiniApi api;
    DriverLib& lib = driver_lib("MiniShapes", GpuFrom::Handle);
    ASSERT_TRUE(resolve_symbols<MiniApi>(kMini, api, lookup, &lib).complete());
    auto* handle = reinterpret_cast<Opaque*>(&g_gpu_handles[1]);

    // An array and its in-out count: the library sees storage of the size the count says.
    unsigned count = 4;
    int items[4] = {0, 0, 0, -1};
    EXPECT_EQ(api.list(handle, &count, items), kOk);
    EXPECT_EQ(g_seen.handle, handle);  // an opaque handle is passed as it is
    FakeHandle* back = nullptr;
    EXPECT_EQ(api.echo(&g_gpu_handles[2], &back), kOk);
    EXPECT_EQ(back, &g_gpu_handles[2]);  // so is a complete type declared OpaqueHandle
    EXPECT_NE(g_seen.count, &count);
    EXPECT_NE(g_seen.items, items);
    EXPECT_EQ(count, 3u);
    EXPECT_EQ(items[0], 10);
    EXPECT_EQ(items[2], 12);
    EXPECT_EQ(items[3], -1);  // beyond what the library wrote: the caller's value, copied in and back
    unsigned none = 0;
    EXPECT_EQ(api.list(handle, &none, nullptr), kBad);  // the size query: a null array stays null
    EXPECT_EQ(g_seen.items, nullptr);
    EXPECT_EQ(none, 3u);

    // A versioned struct is copied in (its version) and back (its fields).
    Versioned v{2, 0, 0};
    EXPECT_EQ(api.info(handle, &v), kOk);
    EXPECT_NE(g_seen.info, &v);
    EXPECT_EQ(v.total, 80u);
    EXPECT_EQ(v.used, 5u);

    // A char buffer takes the length after it; a C string is held whole.
    char buf[64] = {};
    EXPECT_EQ(api.name(handle, buf, sizeof buf), kOk);
    EXPECT_NE(g_seen.name, buf);
    EXPECT_STREQ(buf, "NVIDIA H100 80GB HBM3");
    std::string key = "gpu.memory_bandwidth";
    int n = 0;
    EXPECT_EQ(api.key(key.c_str(), &n), kOk);
    EXPECT_NE(g_seen.key, key.c_str());
    EXPECT_EQ(g_seen.key_text, key);
    EXPECT_EQ(n, static_cast<int>(key.size()));
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

namespace gpuvet {
namespace {

// A call returning a plain int (libibverbs: 0 or an errno value) that never answered reads as a
// failure, not as the 0 of success.
TEST(DriverDeadline, AnIntCallWithoutAnswerIsAnErrnoFailureNotSuccess) {
    EXPECT_EQ(NoAnswer<int>::value(), ETIMEDOUT);
    EXPECT_NE(NoAnswer<int>::value(), 0);
}

}  // namespace
}  // namespace gpuvet
