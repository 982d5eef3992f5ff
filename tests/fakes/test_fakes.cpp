// Proves the driver test doubles behave as the scenarios say: each test dlopens the fake
// libraries the way gpuvet does and calls them through the official signatures.
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nvml.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "fake_hang.hpp"
#include "scenario.hpp"

namespace {

std::string scenario(const std::string& name) { return std::string(FAKE_SCENARIO_DIR) + "/" + name + ".toml"; }

class Lib {
public:
    explicit Lib(const char* path) : h_(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
        if (!h_) ADD_FAILURE() << dlerror();
    }
    ~Lib() {
        if (h_) dlclose(h_);
    }
    Lib(const Lib&) = delete;
    Lib& operator=(const Lib&) = delete;
    void* raw(const char* name) const { return h_ ? dlsym(h_, name) : nullptr; }
    void* need(const char* name) const {
        void* p = raw(name);
        if (!p) ADD_FAILURE() << "missing symbol " << name;
        return p;
    }

private:
    void* h_;
};

// Typed lookup through the official declaration, so a signature mismatch fails to compile here too.
#define SYM(lib, name) reinterpret_cast<decltype(&name)>((lib).need(#name))

struct Nvml {
    Lib lib;
    explicit Nvml(const std::string& scen, const char* path = FAKE_NVML) : lib(path) {
        setenv("GPUVET_FAKE_SCENARIO", scen.c_str(), 1);
    }
    ~Nvml() {
        if (auto shut = reinterpret_cast<decltype(&nvmlShutdown)>(lib.raw("nvmlShutdown"))) shut();
    }
    nvmlDevice_t dev(unsigned i) {
        nvmlDevice_t d = nullptr;
        EXPECT_EQ(SYM(lib, nvmlDeviceGetHandleByIndex_v2)(i, &d), NVML_SUCCESS);
        return d;
    }
};

struct Cuda {
    Lib lib;
    explicit Cuda(const std::string& scen, const char* path = FAKE_CUDA) : lib(path) {
        setenv("GPUVET_FAKE_SCENARIO", scen.c_str(), 1);
        if (auto reset = reinterpret_cast<void (*)()>(lib.raw("gpuvet_fake_cuda_reset"))) reset();
    }
    ~Cuda() {
        if (auto reset = reinterpret_cast<void (*)()>(lib.raw("gpuvet_fake_cuda_reset"))) reset();
    }
    CUcontext ctx(int dev) {
        CUcontext c = nullptr;
        EXPECT_EQ(SYM(lib, cuDevicePrimaryCtxRetain)(&c, dev), CUDA_SUCCESS);
        EXPECT_EQ(SYM(lib, cuCtxSetCurrent)(c), CUDA_SUCCESS);
        return c;
    }
};

TEST(FakeNvml, HealthyBoxReportsH100Defaults) {
    Nvml n(scenario("healthy_8x_h100_sxm"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    char buf[96];
    ASSERT_EQ(SYM(n.lib, nvmlSystemGetDriverVersion)(buf, sizeof buf), NVML_SUCCESS);
    EXPECT_STREQ(buf, "570.124.06");
    int cuda = 0;
    EXPECT_EQ(SYM(n.lib, nvmlSystemGetCudaDriverVersion_v2)(&cuda), NVML_SUCCESS);
    EXPECT_EQ(cuda, 12080);
    unsigned count = 0;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetCount_v2)(&count), NVML_SUCCESS);
    ASSERT_EQ(count, 8u);
    nvmlDevice_t d0 = n.dev(0), d7 = n.dev(7);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetName)(d0, buf, sizeof buf), NVML_SUCCESS);
    EXPECT_STREQ(buf, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetName)(d0, buf, 4), NVML_ERROR_INSUFFICIENT_SIZE);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetUUID)(d7, buf, sizeof buf), NVML_SUCCESS);
    EXPECT_STREQ(buf, "GPU-fa4e0000-0000-4000-8000-000000000008");
    nvmlPciInfo_t pci{};
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetPciInfo_v3)(d0, &pci), NVML_SUCCESS);
    EXPECT_EQ(pci.pciDeviceId, 0x233010DEu);
    EXPECT_STREQ(pci.busId, "00000000:18:00.0");
    EXPECT_EQ(pci.bus, 0x18u);
    nvmlPciInfoExt_t ext{};
    ext.version = nvmlPciInfoExt_v1;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetPciInfoExt)(d0, &ext), NVML_SUCCESS);
    EXPECT_EQ(ext.baseClass, 3u);
    nvmlMemory_v2_t mem{};
    mem.version = nvmlMemory_v2;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetMemoryInfo_v2)(d0, &mem), NVML_SUCCESS);
    EXPECT_EQ(mem.total, 81559ull << 20);
    EXPECT_EQ(mem.reserved, 564ull << 20);
    EXPECT_EQ(mem.used, 0u);
    EXPECT_EQ(mem.free, mem.total - mem.reserved);
    unsigned v = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetCurrPcieLinkGeneration)(d0, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 5u);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetCurrPcieLinkWidth)(d0, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 16u);
    nvmlEnableState_t st{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetNvLinkState)(d0, 17, &st), NVML_SUCCESS);
    EXPECT_EQ(st, NVML_FEATURE_ENABLED);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetNvLinkState)(d0, 18, &st), NVML_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetNvLinkVersion)(d0, 0, &v), NVML_SUCCESS);
    EXPECT_EQ(v, static_cast<unsigned>(NVML_NVLINK_VERSION_4_0));
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetPowerManagementLimit)(d0, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 700000u);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetMaxClockInfo)(d0, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 1980u);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetFanSpeed)(d0, &v), NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetNumaNodeId)(d0, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetNumaNodeId)(d7, &v), NVML_SUCCESS);
    EXPECT_EQ(v, 1u);
    unsigned long cpus[4] = {};
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetCpuAffinity)(d0, 4, cpus), NVML_SUCCESS);
    EXPECT_EQ(cpus[0], 0x0000FFFFFFFFFFFFul);  // CPUs 0-47
    nvmlGpuTopologyLevel_t lvl{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetTopologyCommonAncestor)(d0, n.dev(1), &lvl), NVML_SUCCESS);
    EXPECT_EQ(lvl, NVML_TOPOLOGY_NODE);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetTopologyCommonAncestor)(d0, d7, &lvl), NVML_SUCCESS);
    EXPECT_EQ(lvl, NVML_TOPOLOGY_SYSTEM);
    unsigned np = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetComputeRunningProcesses_v3)(d0, &np, nullptr), NVML_SUCCESS);
    EXPECT_EQ(np, 0u);
    nvmlDeviceArchitecture_t arch{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetArchitecture)(d0, &arch), NVML_SUCCESS);
    EXPECT_EQ(arch, static_cast<nvmlDeviceArchitecture_t>(NVML_DEVICE_ARCH_HOPPER));
}

TEST(FakeNvml, CallsBeforeInitAreRefused) {
    Nvml n(scenario("healthy_8x_h100_sxm"));
    unsigned count = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetCount_v2)(&count), NVML_ERROR_UNINITIALIZED);
}

TEST(FakeNvml, DegradedPcieLink) {
    Nvml n(scenario("pcie_x8_degraded"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    unsigned cur = 0, max = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetCurrPcieLinkWidth)(n.dev(3), &cur), NVML_SUCCESS);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetMaxPcieLinkWidth)(n.dev(3), &max), NVML_SUCCESS);
    EXPECT_EQ(cur, 8u);
    EXPECT_EQ(max, 16u);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetCurrPcieLinkWidth)(n.dev(2), &cur), NVML_SUCCESS);
    EXPECT_EQ(cur, 16u);
}

TEST(FakeNvml, RebadgedCardKeepsItsNameButNotItsId) {
    Nvml n(scenario("rebadged"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    char name[96];
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetName)(n.dev(0), name, sizeof name), NVML_SUCCESS);
    EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3");
    nvmlPciInfo_t pci{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetPciInfo_v3)(n.dev(0), &pci), NVML_SUCCESS);
    EXPECT_EQ(pci.pciDeviceId, 0x233110DEu);
    unsigned links = 0;
    nvmlEnableState_t st{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetNvLinkState)(n.dev(0), links, &st), NVML_ERROR_NOT_SUPPORTED);
}

TEST(FakeNvml, ForeignProcessHoldsMemory) {
    Nvml n(scenario("foreign_process_20gb"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    nvmlDevice_t d = n.dev(2);
    unsigned count = 0;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetComputeRunningProcesses_v3)(d, &count, nullptr), NVML_ERROR_INSUFFICIENT_SIZE);
    ASSERT_EQ(count, 1u);
    nvmlProcessInfo_t info[2]{};
    count = 2;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetComputeRunningProcesses_v3)(d, &count, info), NVML_SUCCESS);
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(info[0].pid, 48213u);
    EXPECT_EQ(info[0].usedGpuMemory, 20480ull << 20);
    char name[64];
    EXPECT_EQ(SYM(n.lib, nvmlSystemGetProcessName)(48213, name, sizeof name), NVML_SUCCESS);
    EXPECT_STREQ(name, "python3");
    nvmlMemory_t mem{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetMemoryInfo)(d, &mem), NVML_SUCCESS);
    EXPECT_EQ(mem.used, (20480ull + 564) << 20);
    nvmlUtilization_t u{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetUtilizationRates)(d, &u), NVML_SUCCESS);
    EXPECT_EQ(u.gpu, 37u);
}

TEST(FakeNvml, PendingRowRemap) {
    Nvml n(scenario("pending_row_remap"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    unsigned c = 0, u = 0, pending = 0, failed = 0;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetRemappedRows)(n.dev(5), &c, &u, &pending, &failed), NVML_SUCCESS);
    EXPECT_EQ(c, 2u);
    EXPECT_EQ(u, 1u);
    EXPECT_EQ(pending, 1u);
    EXPECT_EQ(failed, 0u);
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetRemappedRows)(n.dev(6), &c, &u, &pending, &failed), NVML_SUCCESS);
    EXPECT_EQ(failed, 1u);
    unsigned long long n_unc = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetTotalEccErrors)(n.dev(6), NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
                                                      &n_unc),
              NVML_SUCCESS);
    EXPECT_EQ(n_unc, 9u);
}

TEST(FakeNvml, MigModeAndCudaVisibility) {
    Nvml n(scenario("mig_enabled"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    unsigned cur = 9, pend = 9;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetMigMode)(n.dev(0), &cur, &pend), NVML_SUCCESS);
    EXPECT_EQ(cur, 1u);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetMigMode)(n.dev(2), &cur, &pend), NVML_SUCCESS);
    EXPECT_EQ(cur, 0u);
    EXPECT_EQ(pend, 1u);
    Cuda c(scenario("mig_enabled"));
    ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
    int count = 0;
    EXPECT_EQ(SYM(c.lib, cuDeviceGetCount)(&count), CUDA_SUCCESS);
    EXPECT_EQ(count, 6);
}

TEST(FakeDrivers, OldDriverLacksNewerSymbols) {
    Lib nv_new(FAKE_NVML), nv_old(FAKE_NVML_OLD), cu_new(FAKE_CUDA), cu_old(FAKE_CUDA_OLD);
    for (const char* s :
         {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetMemoryInfo_v2",
          "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetGpuMaxPcieLinkGeneration",
          "nvmlDeviceGetRemappedRows", "nvmlDeviceGetPciInfoExt", "nvmlDeviceGetMigMode", "nvmlDeviceGetFieldValues"}) {
        EXPECT_NE(nv_new.raw(s), nullptr) << s;
        EXPECT_EQ(nv_old.raw(s), nullptr) << s;
    }
    for (const char* s : {"nvmlInit_v2", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetCurrentClocksThrottleReasons",
                          "nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetPciInfo_v3"})
        EXPECT_NE(nv_old.raw(s), nullptr) << s;
    EXPECT_NE(cu_new.raw("cuDeviceGetUuid_v2"), nullptr);
    EXPECT_EQ(cu_old.raw("cuDeviceGetUuid_v2"), nullptr);
    EXPECT_NE(cu_old.raw("cuDeviceGetUuid"), nullptr);
    EXPECT_EQ(cu_old.raw("cuEventElapsedTime_v2"), nullptr);
    EXPECT_NE(cu_old.raw("cuEventElapsedTime"), nullptr);
    // Internal helpers stay hidden: only the API and the fakes' hooks are exported.
    EXPECT_EQ(nv_new.raw("_ZN4fake13load_scenarioERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERS6_"),
              nullptr);
}

// nvml.h 13 marks the old names deprecated; the fakes serve them for older gpuvet fallbacks, and
// these tests call them on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(FakeNvml, OldDriverScenarioInitialises) {
    Nvml n(scenario("old_driver"), FAKE_NVML_OLD);
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    char buf[96];
    ASSERT_EQ(SYM(n.lib, nvmlSystemGetDriverVersion)(buf, sizeof buf), NVML_SUCCESS);
    EXPECT_STREQ(buf, "440.118.02");
    unsigned long long reasons = 1;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetCurrentClocksThrottleReasons)(n.dev(0), &reasons), NVML_SUCCESS);
    EXPECT_EQ(reasons, 0u);
}

#pragma GCC diagnostic pop

TEST(FakeDrivers, KernelDriverNotLoaded) {
    Nvml n(scenario("kernel_driver_not_loaded"));
    EXPECT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_ERROR_DRIVER_NOT_LOADED);
    Cuda c(scenario("kernel_driver_not_loaded"));
    EXPECT_EQ(SYM(c.lib, cuInit)(0), CUDA_ERROR_NO_DEVICE);
    int count = 0;
    EXPECT_EQ(SYM(c.lib, cuDeviceGetCount)(&count), CUDA_ERROR_NOT_INITIALIZED);
}

// nvml.h 13 marks the old names deprecated; the fakes serve them for older gpuvet fallbacks, and
// these tests call them on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(FakeNvml, GpuLostMidInventory) {
    Nvml n(scenario("gpu_lost_mid_inventory"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    nvmlEventSet_t set = nullptr;
    ASSERT_EQ(SYM(n.lib, nvmlEventSetCreate)(&set), NVML_SUCCESS);
    nvmlDevice_t d4 = n.dev(4);                                                                             // call 1
    ASSERT_EQ(SYM(n.lib, nvmlDeviceRegisterEvents)(d4, nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);  // 2
    unsigned temp = 0;
    for (int i = 3; i <= 12; ++i)
        EXPECT_EQ(SYM(n.lib, nvmlDeviceGetTemperature)(d4, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS) << i;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetTemperature)(d4, NVML_TEMPERATURE_GPU, &temp), NVML_ERROR_GPU_IS_LOST);
    char buf[96];
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetName)(d4, buf, sizeof buf), NVML_ERROR_GPU_IS_LOST);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetName)(n.dev(3), buf, sizeof buf), NVML_SUCCESS);
    nvmlEventData_t ev{};
    ASSERT_EQ(SYM(n.lib, nvmlEventSetWait_v2)(set, &ev, 0), NVML_SUCCESS);
    EXPECT_EQ(ev.eventData, 79u);
    EXPECT_EQ(ev.device, d4);
    EXPECT_EQ(SYM(n.lib, nvmlEventSetWait_v2)(set, &ev, 0), NVML_ERROR_TIMEOUT);
    EXPECT_EQ(SYM(n.lib, nvmlEventSetFree)(set), NVML_SUCCESS);
}

#pragma GCC diagnostic pop

TEST(FakeNvml, FieldValuesHavePerEntryStatus) {
    Nvml n(scenario("burn_hot_memory"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    nvmlFieldValue_t v[2]{};
    v[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
    v[1].fieldId = NVML_FI_DEV_POWER_INSTANT;  // not served by the fake
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetFieldValues)(n.dev(0), 2, v), NVML_SUCCESS);
    EXPECT_EQ(v[0].nvmlReturn, NVML_SUCCESS);
    EXPECT_EQ(v[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
    EXPECT_EQ(v[0].value.uiVal, 92u);
    EXPECT_GT(v[0].timestamp, 0);
    EXPECT_EQ(v[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    // GPU 1 is a board without a memory sensor: the call succeeds, the entry does not.
    nvmlFieldValue_t w{};
    w.fieldId = NVML_FI_DEV_MEMORY_TEMP;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetFieldValues)(n.dev(1), 1, &w), NVML_SUCCESS);
    EXPECT_EQ(w.nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetFieldValues)(n.dev(0), 1, nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

// nvml.h 13 marks the old names deprecated; the fakes serve them for older gpuvet fallbacks, and
// these tests call them on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(FakeNvml, ThrottlingReasons) {
    Nvml n(scenario("throttling"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    unsigned long long r = 0;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetCurrentClocksEventReasons)(n.dev(1), &r), NVML_SUCCESS);
    EXPECT_EQ(r, nvmlClocksThrottleReasonHwSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown |
                     nvmlClocksEventReasonSwThermalSlowdown);
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetCurrentClocksThrottleReasons)(n.dev(6), &r), NVML_SUCCESS);
    EXPECT_EQ(r, static_cast<unsigned long long>(nvmlClocksEventReasonSwPowerCap));
    unsigned mw = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetPowerUsage)(n.dev(6), &mw), NVML_SUCCESS);
    EXPECT_EQ(mw, 699000u);
}

#pragma GCC diagnostic pop

TEST(FakeNvml, EccErrorsAppearAfterScriptedCalls) {
    Nvml n(scenario("ecc_errors_appearing"));
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    nvmlEventSet_t set = nullptr;
    ASSERT_EQ(SYM(n.lib, nvmlEventSetCreate)(&set), NVML_SUCCESS);
    nvmlDevice_t d = n.dev(3);
    ASSERT_EQ(SYM(n.lib, nvmlDeviceRegisterEvents)(d, nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
    auto get = SYM(n.lib, nvmlDeviceGetTotalEccErrors);
    auto calls = reinterpret_cast<unsigned long long (*)(unsigned)>(n.lib.need("gpuvet_fake_nvml_calls"));
    unsigned long long corr = 0, unc = 0;
    std::vector<unsigned long long> seen;
    nvmlEventData_t ev{};
    EXPECT_EQ(SYM(n.lib, nvmlEventSetWait_v2)(set, &ev, 0), NVML_ERROR_TIMEOUT);
    while (calls(3) < 100) {
        ASSERT_EQ(get(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &corr), NVML_SUCCESS);
        if (seen.empty() || seen.back() != corr) seen.push_back(corr);
    }
    EXPECT_EQ(seen, (std::vector<unsigned long long>{0, 12, 57}));
    ASSERT_EQ(get(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &unc), NVML_SUCCESS);
    EXPECT_EQ(unc, 1u);
    ASSERT_EQ(SYM(n.lib, nvmlEventSetWait_v2)(set, &ev, 0), NVML_SUCCESS);
    EXPECT_EQ(ev.eventData, 48u);
    EXPECT_EQ(SYM(n.lib, nvmlEventSetFree)(set), NVML_SUCCESS);
}

TEST(FakeScenario, BadFilesNameTheProblem) {
    std::string err;
    EXPECT_FALSE(fake::load_scenario("/nonexistent/x.toml", err));
    EXPECT_NE(err.find("/nonexistent/x.toml"), std::string::npos) << err;
    std::string path = testing::TempDir() + "/bad_scenario.toml";
    std::ofstream(path) << "gpu_count = 2\n[gpu.1]\npcie_widht_current = 8\n";
    EXPECT_FALSE(fake::load_scenario(path, err));
    EXPECT_NE(err.find("gpu.1.pcie_widht_current"), std::string::npos) << err;
    std::ofstream(path) << "gpu_count = 2\n[gpu.2]\nsm_count = 1\n";
    EXPECT_FALSE(fake::load_scenario(path, err));
    EXPECT_NE(err.find("below gpu_count"), std::string::npos) << err;
    std::ofstream(path) << "gpu_count = 1\n[all]\nclock_event_reasons = [\"hot\"]\n";
    EXPECT_FALSE(fake::load_scenario(path, err));
    EXPECT_NE(err.find("hot"), std::string::npos) << err;
    // A file that fails to load makes init fail rather than fall back to defaults.
    Nvml n(path);
    EXPECT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
}

TEST(FakeCuda, DevicesMatchNvml) {
    Cuda c(scenario("rebadged"));
    EXPECT_EQ(SYM(c.lib, cuDeviceGetCount)(nullptr), CUDA_ERROR_NOT_INITIALIZED);
    ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
    int v = 0;
    EXPECT_EQ(SYM(c.lib, cuDriverGetVersion)(&v), CUDA_SUCCESS);
    EXPECT_EQ(v, 12080);
    EXPECT_EQ(SYM(c.lib, cuDeviceGetCount)(&v), CUDA_SUCCESS);
    EXPECT_EQ(v, 8);
    CUdevice dev = -1;
    ASSERT_EQ(SYM(c.lib, cuDeviceGet)(&dev, 7), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuDeviceGet)(&dev, 8), CUDA_ERROR_INVALID_DEVICE);
    char buf[64];
    EXPECT_EQ(SYM(c.lib, cuDeviceGetName)(buf, sizeof buf, 7), CUDA_SUCCESS);
    EXPECT_STREQ(buf, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(SYM(c.lib, cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 7), CUDA_SUCCESS);
    EXPECT_EQ(v, 114);
    EXPECT_EQ(SYM(c.lib, cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 7), CUDA_SUCCESS);
    EXPECT_EQ(v, 9);
    EXPECT_EQ(SYM(c.lib, cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 7), CUDA_SUCCESS);
    EXPECT_EQ(v, 0xDB);
    EXPECT_EQ(SYM(c.lib, cuDeviceGetAttribute)(&v, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 7), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(SYM(c.lib, cuDeviceGetPCIBusId)(buf, sizeof buf, 7), CUDA_SUCCESS);
    EXPECT_STREQ(buf, "0000:db:00.0");
    size_t total = 0;
    EXPECT_EQ(SYM(c.lib, cuDeviceTotalMem_v2)(&total, 0), CUDA_SUCCESS);
    EXPECT_EQ(total, 81559ull << 20);
    CUuuid u{};
    ASSERT_EQ(SYM(c.lib, cuDeviceGetUuid_v2)(&u, 7), CUDA_SUCCESS);
    EXPECT_EQ(static_cast<unsigned char>(u.bytes[0]), 0xfa);
    EXPECT_EQ(static_cast<unsigned char>(u.bytes[15]), 0x08);
    const char* s = nullptr;
    EXPECT_EQ(SYM(c.lib, cuGetErrorName)(CUDA_ERROR_OUT_OF_MEMORY, &s), CUDA_SUCCESS);
    EXPECT_STREQ(s, "CUDA_ERROR_OUT_OF_MEMORY");
}

TEST(FakeCuda, MemoryHonoursScenarioFreeBytes) {
    Cuda c(scenario("foreign_process_20gb"));
    ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
    CUdeviceptr p = 0;
    EXPECT_EQ(SYM(c.lib, cuMemAlloc_v2)(&p, 1024), CUDA_ERROR_INVALID_CONTEXT);
    c.ctx(2);
    size_t free = 0, total = 0;
    ASSERT_EQ(SYM(c.lib, cuMemGetInfo_v2)(&free, &total), CUDA_SUCCESS);
    EXPECT_EQ(free, (81559ull - 564 - 20480) << 20);
    EXPECT_EQ(SYM(c.lib, cuMemAlloc_v2)(&p, free + 1), CUDA_ERROR_OUT_OF_MEMORY);
    ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&p, free), CUDA_SUCCESS);  // untouched pages cost no host memory
    size_t after = 1;
    ASSERT_EQ(SYM(c.lib, cuMemGetInfo_v2)(&after, &total), CUDA_SUCCESS);
    EXPECT_EQ(after, 0u);
    CUdeviceptr q = 0;
    EXPECT_EQ(SYM(c.lib, cuMemAlloc_v2)(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(SYM(c.lib, cuMemFree_v2)(p), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuMemFree_v2)(p), CUDA_ERROR_INVALID_VALUE);
    // Data really moves: host -> device -> device -> host.
    std::vector<uint32_t> in(4096), out(4096, 0);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint32_t>(i * 2654435761u);
    CUdeviceptr a = 0, b = 0;
    ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&a, 16384), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&b, 16384), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuMemcpyHtoD_v2)(a, in.data(), 16384), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuMemcpyDtoD_v2)(b, a, 16384), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuMemcpyDtoH_v2)(out.data(), b, 16384), CUDA_SUCCESS);
    EXPECT_EQ(in, out);
    ASSERT_EQ(SYM(c.lib, cuMemsetD32_v2)(b + 4, 0xdeadbeef, 2), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuMemcpyDtoH_v2)(out.data(), b, 16), CUDA_SUCCESS);
    EXPECT_EQ(out[0], in[0]);
    EXPECT_EQ(out[1], 0xdeadbeefu);
    EXPECT_EQ(out[3], in[3]);
    EXPECT_EQ(SYM(c.lib, cuMemcpyDtoH_v2)(out.data(), b + 16380, 8), CUDA_ERROR_INVALID_VALUE);  // past the end
}

// The DMA-BUF export's fd names the allocation's very bytes: what the device holds reads through a
// mapping of the fd, and what is written there reads back through cuMemcpyDtoH.
TEST(FakeCuda, DmaBufExportNamesTheAllocationsBytes) {
    const std::string path = testing::TempDir() + "/dmabuf_scenario.toml";
    for (const char* mode : {"ok", "refused", "unsupported"}) {
        std::ofstream(path) << "gpu_count = 1\n[fabric]\ndmabuf = \"" << mode << "\"\n";
        Cuda c(path);
        ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
        c.ctx(0);
        int supported = -1;
        ASSERT_EQ(SYM(c.lib, cuDeviceGetAttribute)(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0), CUDA_SUCCESS);
        EXPECT_EQ(supported, std::string(mode) == "unsupported" ? 0 : 1) << mode;
        const size_t n = size_t(2) << 20;
        CUdeviceptr p = 0;
        ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&p, n), CUDA_SUCCESS);
        std::vector<unsigned char> in(n), out(n);
        for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
        ASSERT_EQ(SYM(c.lib, cuMemcpyHtoD_v2)(p, in.data(), n), CUDA_SUCCESS);
        int fd = -1;
        const auto get = SYM(c.lib, cuMemGetHandleForAddressRange);
        if (std::string(mode) != "ok") {
            EXPECT_EQ(get(&fd, p, n, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0), CUDA_ERROR_NOT_SUPPORTED) << mode;
            continue;
        }
        EXPECT_EQ(get(&fd, p + 256, n - 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0), CUDA_ERROR_INVALID_VALUE);
        ASSERT_EQ(get(&fd, p, n, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0), CUDA_SUCCESS);
        ASSERT_GE(fd, 0);
        void* m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ASSERT_NE(m, MAP_FAILED);
        auto* bytes = static_cast<unsigned char*>(m);
        EXPECT_EQ(std::vector<unsigned char>(bytes, bytes + n), in);
        for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(~in[i]);
        ASSERT_EQ(SYM(c.lib, cuMemcpyDtoH_v2)(out.data(), p, n), CUDA_SUCCESS);
        EXPECT_EQ(out[0], static_cast<unsigned char>(~in[0]));
        EXPECT_EQ(out[n - 1], static_cast<unsigned char>(~in[n - 1]));
        munmap(m, n);
        close(fd);
        EXPECT_EQ(SYM(c.lib, cuMemFree_v2)(p), CUDA_SUCCESS);
    }
}

// bytes / elapsed seconds, as a bandwidth test would compute it (GB/s = 1e9 B/s).
double timed_gbps(Cuda& c, CUstream s, double bytes, const std::function<void()>& op) {
    CUevent e0 = nullptr, e1 = nullptr;
    EXPECT_EQ(SYM(c.lib, cuEventCreate)(&e0, 0), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuEventCreate)(&e1, 0), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuEventRecord)(e0, s), CUDA_SUCCESS);
    op();
    EXPECT_EQ(SYM(c.lib, cuEventRecord)(e1, s), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuEventSynchronize)(e1), CUDA_SUCCESS);
    float ms = 0;
    EXPECT_EQ(SYM(c.lib, cuEventElapsedTime_v2)(&ms, e0, e1), CUDA_SUCCESS);
    SYM(c.lib, cuEventDestroy_v2)(e0);
    SYM(c.lib, cuEventDestroy_v2)(e1);
    return bytes / (ms / 1e3) / 1e9;
}

TEST(FakeCuda, SimulatedClockGivesScenarioBandwidth) {
    Cuda c(scenario("pcie_x8_degraded"));
    ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
    const size_t n = 64ull << 20;
    void* host = nullptr;
    for (int dev : {2, 3}) {
        c.ctx(dev);
        ASSERT_EQ(SYM(c.lib, cuMemHostAlloc)(&host, n, 0), CUDA_SUCCESS);
        CUdeviceptr a = 0, b = 0;
        ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&a, n), CUDA_SUCCESS);
        ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&b, n), CUDA_SUCCESS);
        CUstream s = nullptr;
        ASSERT_EQ(SYM(c.lib, cuStreamCreate)(&s, 0), CUDA_SUCCESS);
        double h2d = timed_gbps(c, s, 10.0 * n, [&] {
            for (int i = 0; i < 10; ++i) ASSERT_EQ(SYM(c.lib, cuMemcpyHtoDAsync_v2)(a, host, n, s), CUDA_SUCCESS);
        });
        EXPECT_NEAR(h2d, dev == 3 ? 27.5 : 55.0, 1e-5 * h2d) << "device " << dev;
        // Device-to-device copies count read + write traffic.
        double d2d =
            timed_gbps(c, nullptr, 2.0 * n, [&] { ASSERT_EQ(SYM(c.lib, cuMemcpyDtoD_v2)(b, a, n), CUDA_SUCCESS); });
        EXPECT_NEAR(d2d, 3000.0, 1e-5 * d2d);
        // The default stream waits for other streams: an event on it after stream work includes that work.
        EXPECT_EQ(SYM(c.lib, cuStreamDestroy_v2)(s), CUDA_SUCCESS);
        EXPECT_EQ(SYM(c.lib, cuMemFree_v2)(a), CUDA_SUCCESS);
        EXPECT_EQ(SYM(c.lib, cuMemFree_v2)(b), CUDA_SUCCESS);
        EXPECT_EQ(SYM(c.lib, cuMemFreeHost)(host), CUDA_SUCCESS);
    }
}

TEST(FakeCuda, StreamsRunConcurrentlyOnTheSimulatedClock) {
    Cuda c(scenario("healthy_8x_h100_sxm"));
    ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
    c.ctx(0);
    const size_t n = 8ull << 20;
    std::vector<char> host(n);
    CUdeviceptr a = 0, b = 0;
    ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&a, n), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&b, n), CUDA_SUCCESS);
    CUstream s1 = nullptr, s2 = nullptr;
    ASSERT_EQ(SYM(c.lib, cuStreamCreate)(&s1, 0), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuStreamCreate)(&s2, 0), CUDA_SUCCESS);
    // Two copies on two streams overlap: the default stream sees the time of one, not two.
    double both = timed_gbps(c, nullptr, 2.0 * n, [&] {
        ASSERT_EQ(SYM(c.lib, cuMemcpyHtoDAsync_v2)(a, host.data(), n, s1), CUDA_SUCCESS);
        ASSERT_EQ(SYM(c.lib, cuMemcpyDtoHAsync_v2)(host.data(), b, n, s2), CUDA_SUCCESS);
    });
    EXPECT_NEAR(both, 110.0, 1e-4);
    CUevent e = nullptr;
    ASSERT_EQ(SYM(c.lib, cuEventCreate)(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuEventRecord)(e, s1), CUDA_SUCCESS);
    float ms = 0;
    EXPECT_EQ(SYM(c.lib, cuEventElapsedTime_v2)(&ms, e, e), CUDA_ERROR_INVALID_HANDLE);
}

TEST(FakeCuda, PeerCopiesUseNvlinkOnlyWithPeerAccess) {
    Cuda c(scenario("healthy_8x_h100_sxm"));
    ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
    int can = 0;
    ASSERT_EQ(SYM(c.lib, cuDeviceCanAccessPeer)(&can, 0, 1), CUDA_SUCCESS);
    EXPECT_EQ(can, 1);
    const size_t n = 16ull << 20;
    CUcontext c1 = c.ctx(1);
    CUdeviceptr dst = 0;
    ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&dst, n), CUDA_SUCCESS);
    CUcontext c0 = c.ctx(0);
    CUdeviceptr src = 0;
    ASSERT_EQ(SYM(c.lib, cuMemAlloc_v2)(&src, n), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuMemsetD8_v2)(src, 0x5a, n), CUDA_SUCCESS);
    double staged = timed_gbps(
        c, nullptr, n, [&] { ASSERT_EQ(SYM(c.lib, cuMemcpyPeerAsync)(dst, c1, src, c0, n, nullptr), CUDA_SUCCESS); });
    EXPECT_NEAR(staged, 27.5, 1e-4);  // through the host: 1 / (1/55 + 1/55)
    ASSERT_EQ(SYM(c.lib, cuCtxEnablePeerAccess)(c1, 0), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuCtxEnablePeerAccess)(c1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    double direct = timed_gbps(
        c, nullptr, n, [&] { ASSERT_EQ(SYM(c.lib, cuMemcpyPeerAsync)(dst, c1, src, c0, n, nullptr), CUDA_SUCCESS); });
    EXPECT_NEAR(direct, 370.0, 1e-3);
    c.ctx(1);
    unsigned char byte = 0;
    ASSERT_EQ(SYM(c.lib, cuMemcpyDtoH_v2)(&byte, dst + n - 1, 1), CUDA_SUCCESS);
    EXPECT_EQ(byte, 0x5a);
}

// Any kernel the interpreter can decode runs (there is no list of known kernels any more); a
// kernel without its parameters is refused, not run on garbage (tests/fakes/ptx/test_ptx_*.cpp cover the rest).
TEST(FakeCuda, ModulesAreDecodedAndTheirEntriesRun) {
    Cuda c(scenario("healthy_8x_h100_sxm"));
    ASSERT_EQ(SYM(c.lib, cuInit)(0), CUDA_SUCCESS);
    c.ctx(0);
    const char* ptx =
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry any_kernel(\n.param .u64 a\n)\n{ ret; }\n"
        ".visible .entry stream_copy(\n.param .u64 a\n)\n{ ret; }\n";
    CUmodule m = nullptr;
    ASSERT_EQ(SYM(c.lib, cuModuleLoadData)(&m, ptx), CUDA_SUCCESS);
    CUfunction f = nullptr;
    EXPECT_EQ(SYM(c.lib, cuModuleGetFunction)(&f, m, "missing"), CUDA_ERROR_NOT_FOUND);
    ASSERT_EQ(SYM(c.lib, cuModuleGetFunction)(&f, m, "any_kernel"), CUDA_SUCCESS);
    uint64_t a = 0;
    void* params[] = {&a};
    EXPECT_EQ(SYM(c.lib, cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(SYM(c.lib, cuModuleGetFunction)(&f, m, "stream_copy"), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuLaunchKernel)(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(SYM(c.lib, cuModuleUnload)(m), CUDA_SUCCESS);
    EXPECT_EQ(SYM(c.lib, cuModuleLoadData)(&m, "not ptx"), CUDA_ERROR_INVALID_IMAGE);
}

}  // namespace

// ---- the driver's sample buffers and counters ----------------------------------------------------

namespace {

// A scenario written for one test (the file lives as long as the object).
struct TempScenario {
    std::string path;
    explicit TempScenario(const std::string& text) {
        char name[] = "/tmp/gpuvet-fake-XXXXXX.toml";
        int fd = mkstemps(name, 5);
        EXPECT_GE(fd, 0);
        if (fd >= 0) close(fd);
        path = name;
        std::ofstream(path) << text;
    }
    ~TempScenario() { std::remove(path.c_str()); }
};

std::vector<nvmlSample_t> all_samples(Nvml& n, nvmlSamplingType_t type, unsigned long long since = 0) {
    nvmlValueType_t vt{};
    unsigned count = 0;
    nvmlReturn_t rc = SYM(n.lib, nvmlDeviceGetSamples)(n.dev(0), type, since, &vt, &count, nullptr);
    if (rc != NVML_SUCCESS) return {};
    std::vector<nvmlSample_t> s(count);
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetSamples)(n.dev(0), type, since, &vt, &count, s.data()), NVML_SUCCESS);
    EXPECT_EQ(vt, NVML_VALUE_TYPE_UNSIGNED_INT);
    s.resize(count);
    return s;
}

// Polls until the buffer holds `n` samples (scenario time runs fast; no fixed sleep).
std::vector<nvmlSample_t> wait_samples(Nvml& n, nvmlSamplingType_t type, size_t want) {
    for (int i = 0; i < 2000; ++i) {
        auto s = all_samples(n, type);
        if (s.size() >= want) return s;
        usleep(5000);
    }
    ADD_FAILURE() << "the sample buffer never held " << want << " samples";
    return {};
}

constexpr const char* kWave = R"(gpu_count = 1
time_scale = 50
[all]
utilization_gpu_percent = 100
utilization_memory_percent = 40
power_draw_w = 500.0
load_idle_power_w = 100.0
load_period_s = 2.0
load_duty = 0.6
load_phase_s = 0.3
sample_period_s = 0.25
sample_buffer_entries = 64
clock_event_reasons = ["sw_power_cap"]
)";

}  // namespace

TEST(FakeNvml, SampleBufferFollowsTheSquareWave) {
    TempScenario sc(kWave);
    Nvml n(sc.path);
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    auto s = wait_samples(n, NVML_GPU_UTILIZATION_SAMPLES, 64);
    ASSERT_EQ(s.size(), 64u);  // the buffer keeps its newest entries only
    double sum = 0;
    // 0.25 scenario seconds apart: 5 ms of the CPU clock at time_scale 50, as a driver stamps them.
    for (size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i].timeStamp - s[i - 1].timeStamp, 5000u);
    auto now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    EXPECT_NEAR(double(s.back().timeStamp), double(now_us), 1e6);
    for (size_t i = s.size() - 32; i < s.size(); ++i) sum += s[i].sampleValue.uiVal;  // 4 whole periods
    EXPECT_NEAR(sum / 32, 60, 1);
    // Newer than the last seen: nothing yet, or only what came since.
    auto newer = all_samples(n, NVML_GPU_UTILIZATION_SAMPLES, s.back().timeStamp);
    for (const auto& x : newer) EXPECT_GT(x.timeStamp, s.back().timeStamp);
    auto m = all_samples(n, NVML_MEMORY_UTILIZATION_SAMPLES);
    ASSERT_GE(m.size(), 32u);
    sum = 0;
    for (size_t i = m.size() - 32; i < m.size(); ++i) sum += m[i].sampleValue.uiVal;
    EXPECT_NEAR(sum / 32, 24, 1);
    auto c = all_samples(n, NVML_PROCESSOR_CLK_SAMPLES);
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c.back().sampleValue.uiVal, 1980u);
    nvmlValueType_t vt{};
    unsigned count = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetSamples)(n.dev(0), NVML_ENC_UTILIZATION_SAMPLES, 0, &vt, &count, nullptr),
              NVML_ERROR_NOT_SUPPORTED);
}

// nvml.h 13 marks nvmlDeviceGetViolationStatus deprecated; gpuvet reads it where the driver has it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(FakeNvml, EnergyAndViolationCountersIntegrate) {
    TempScenario sc(kWave);
    Nvml n(sc.path);
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    wait_samples(n, NVML_GPU_UTILIZATION_SAMPLES, 48);  // 12 scenario seconds: 6 periods
    nvmlViolationTime_t v{};
    unsigned long long mj = 0;
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetTotalEnergyConsumption)(n.dev(0), &mj), NVML_SUCCESS);
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetViolationStatus)(n.dev(0), NVML_PERF_POLICY_POWER, &v), NVML_SUCCESS);
    nvmlViolationTime_t t{};
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetViolationStatus)(n.dev(0), NVML_PERF_POLICY_THERMAL, &t), NVML_SUCCESS);
    EXPECT_EQ(t.violationTime, 0u);  // no thermal reason was ever set
    // Power-capped all along: the counter holds (nearly) every nanosecond since the load, on the
    // wall clock (time_scale 50) like its reference time.
    double scenario_s = v.violationTime * 1e-9 * 50;
    ASSERT_GT(scenario_s, 11.0);
    // Mean power 0.6 x 500 + 0.4 x 100 = 340 W, in wall-clock joules (time_scale 50); the partial
    // period at the end is off the mean by at most 2 s x 400 W.
    EXPECT_NEAR(mj * 1e-3 * 50, 340 * scenario_s, 800);
    unsigned long long later = 0;
    wait_samples(n, NVML_GPU_UTILIZATION_SAMPLES, 64);
    ASSERT_EQ(SYM(n.lib, nvmlDeviceGetTotalEnergyConsumption)(n.dev(0), &later), NVML_SUCCESS);
    EXPECT_GT(later, mj);
}

TEST(FakeNvml, IdleGpuLeavesTheBufferEmptyWhenTheDriverSkipsIdle) {
    TempScenario sc(
        "gpu_count = 1\ntime_scale = 50\n[all]\nsamples_skip_idle = true\n"
        "energy_supported = false\nviolation_supported = false\n");
    Nvml n(sc.path);
    ASSERT_EQ(SYM(n.lib, nvmlInit_v2)(), NVML_SUCCESS);
    wait_samples(n, NVML_PROCESSOR_CLK_SAMPLES, 10);  // the clock is sampled all the same
    nvmlValueType_t vt{};
    unsigned count = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetSamples)(n.dev(0), NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &count, nullptr),
              NVML_ERROR_NOT_FOUND);
    unsigned long long mj = 0;
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetTotalEnergyConsumption)(n.dev(0), &mj), NVML_ERROR_NOT_SUPPORTED);
    nvmlViolationTime_t v{};
    EXPECT_EQ(SYM(n.lib, nvmlDeviceGetViolationStatus)(n.dev(0), NVML_PERF_POLICY_POWER, &v), NVML_ERROR_NOT_SUPPORTED);
}
#pragma GCC diagnostic pop
// ---- GPUVET_FAKE_HANG: a call that never returns ---------------------------------------------------

TEST(FakeHang, RulesNameAFunctionItsVersionsAGpuAndADelay) {
    auto rules = fake::parse_hang_rules("nvmlInit,cuStreamSynchronize@1+2.5,*@2");
    ASSERT_EQ(rules.size(), 3u);
    EXPECT_EQ(rules[0].fn, "nvmlInit");
    EXPECT_EQ(rules[0].gpu, -1);
    EXPECT_EQ(rules[1].fn, "cuStreamSynchronize");
    EXPECT_EQ(rules[1].gpu, 1);
    EXPECT_DOUBLE_EQ(rules[1].after_s, 2.5);
    EXPECT_EQ(rules[2].fn, "*");
    EXPECT_TRUE(fake::hang_name_matches("nvmlInit", "nvmlInit_v2"));
    EXPECT_TRUE(fake::hang_name_matches("nvmlInit", "nvmlInit"));
    EXPECT_FALSE(fake::hang_name_matches("nvmlInit", "nvmlInitWithFlags"));
    EXPECT_FALSE(fake::hang_name_matches("nvmlDeviceGetCount", "nvmlDeviceGetCount_vX"));
    EXPECT_TRUE(fake::hang_name_matches("*", "cuInit"));
}

TEST(FakeHang, OneGpusCallNeverReturnsWhileTheOthersAnswer) {
    setenv("GPUVET_FAKE_HANG", "nvmlDeviceGetPowerUsage@3", 1);
    // Never closed: a thread stays inside the library for the rest of the process.
    auto* n = new Nvml(scenario("healthy_8x_h100_sxm"));
    ASSERT_EQ(SYM(n->lib, nvmlInit_v2)(), NVML_SUCCESS);
    nvmlDevice_t d0 = n->dev(0), d3 = n->dev(3);
    auto power = SYM(n->lib, nvmlDeviceGetPowerUsage);
    auto returned = std::make_shared<std::atomic<bool>>(false);
    std::thread([returned, power, d3] {
        unsigned mw = 0;
        power(d3, &mw);
        returned->store(true);
    }).detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(returned->load());
    unsigned mw = 0;
    EXPECT_EQ(power(d0, &mw), NVML_SUCCESS);  // GPU 0 answers, and the double's lock is free
    EXPECT_EQ(mw, 72500u);
    char name[96];
    EXPECT_EQ(SYM(n->lib, nvmlDeviceGetName)(d3, name, sizeof name), NVML_SUCCESS);  // other calls on GPU 3 too
    EXPECT_FALSE(returned->load());
}
