// The ROCm SMI backend (stacks without AMD SMI) on the ROCm SMI double (fake_rocm_smi.cpp, built on
// Debian's rocm_smi.h): what ROCm 5 reports of an MI250X node, what only AMD SMI reports said absent,
// and the run's choice falling back to it when AMD SMI is missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu/bindings/amd_smi_api.hpp"
#include "gpu/device/amd_backend.hpp"
#include "gpu/device/amd_smi_session.hpp"
#include "gpu/device/backend_choice.hpp"
#include "gpu/device/rocm_smi_backend.hpp"

using namespace gpuvet;

namespace {

std::unique_ptr<RocmSmiSession> session(const std::string& scenario) {
    setenv("GPUVET_FAKE_ROCM_SCENARIO", (std::string(ROCM_SCENARIOS) + "/" + scenario).c_str(), 1);
    return std::make_unique<RocmSmiSession>(RocmSmiApi::load_file(FAKE_ROCM_SMI));
}

}  // namespace

TEST(RocmSmiBackend, Mi250xNodeOnRocm5) {
    auto s = session("rocm_mi250x_rocm57.toml");
    ASSERT_TRUE(s->ok()) << s->absent_reason();
    EXPECT_EQ(s->layout(), RsmiFrequenciesLayout::V5);  // ROCm SMI 5: the layout without has_deep_sleep
    RocmSmiBackend b(*s);
    EXPECT_EQ(b.device_count().value_or(0), 8);
    SystemFacts sys = b.system();
    EXPECT_EQ(sys.library_version.value_or(""), "5.0.0");
    EXPECT_EQ(sys.driver_version.value_or(""), "6.2.4");
    auto gpu = b.open(1);
    DeviceFacts f = gpu->describe();
    EXPECT_EQ(f.vendor.value_or(""), "AMD");
    EXPECT_EQ(f.name.value_or(""), "AMD Instinct MI250X");
    EXPECT_EQ(f.pci_vendor_id.value_or(0), 0x1002u) << f.pci_vendor_id.absent_reason;
    EXPECT_EQ(f.pci_device_id.value_or(0), 0x740cu);
    EXPECT_EQ(f.pci_bus_id.value_or(""), "0000:c6:00.0");
    EXPECT_EQ(f.memory_total_bytes.value_or(0), 68702699520ull) << f.memory_total_bytes.absent_reason;
    EXPECT_EQ(f.pcie_gen_max_gpu.value_or(0), 4);
    EXPECT_EQ(f.pcie_width_max.value_or(0), 16);
    EXPECT_DOUBLE_EQ(f.power_default_limit_w.value_or(0), 560) << f.power_default_limit_w.absent_reason;
    EXPECT_DOUBLE_EQ(f.power_max_limit_w.value_or(0), 560);
    EXPECT_EQ(f.clock_sm_max_mhz.value_or(0), 1700);
    EXPECT_EQ(f.temperature_slowdown_c.value_or(0), 100);
    EXPECT_TRUE(f.ecc_enabled.value_or(false));
    EXPECT_EQ(f.serial.value_or(""), "PCB040002110");
    // What only AMD SMI reports: absent with the reason, not guessed.
    EXPECT_NE(f.gfx_target.absent_reason.find("AMD SMI"), std::string::npos);
    EXPECT_NE(f.compute_units.absent_reason.find("AMD SMI"), std::string::npos);
    EXPECT_EQ(f.compute_partition.absent_reason, "driver lacks rsmi_dev_compute_partition_get");
    ASSERT_EQ(f.xgmi_links.size(), 7u);
    EXPECT_FALSE(f.xgmi_links[0].active.has_value());
    EXPECT_NE(f.xgmi_links[0].active.absent_reason.find("not whether it trained"), std::string::npos);
    EXPECT_EQ(f.xgmi_links[0].remote_pci_bus_id.value_or(""), "0000:c1:00.0");

    DeviceSample smp = gpu->sample();
    EXPECT_EQ(smp.clock_sm_mhz.value_or(0), 500);  // the current level
    EXPECT_EQ(smp.clock_mem_mhz.value_or(0), 1600);
    EXPECT_EQ(smp.pcie_gen_current.value_or(0), 4);
    EXPECT_EQ(smp.pcie_width_current.value_or(0), 16);
    EXPECT_DOUBLE_EQ(smp.power_draw_w.value_or(0), 90) << smp.power_draw_w.absent_reason;
    EXPECT_DOUBLE_EQ(smp.power_limit_w.value_or(0), 560);
    EXPECT_EQ(smp.temperature_c.value_or(0), 42);
    EXPECT_EQ(smp.temperature_edge_c.value_or(0), 38);
    EXPECT_EQ(smp.memory_used_bytes.value_or(0), 10985472ull);
    EXPECT_EQ(smp.ras_blocks.size(), 14u);
    EXPECT_EQ(smp.bad_pages_retired.value_or(1), 0u);
    EXPECT_NE(smp.clock_event_reasons.absent_reason.find("metrics table"), std::string::npos);
    EXPECT_TRUE(smp.processes_absent_reason.empty());
    EXPECT_TRUE(gpu->errors().empty()) << gpu->errors().front();
    EXPECT_EQ(b.pcie_path(*gpu, *b.open(2)).value_or(""), "XGMI");
}

TEST(RocmSmiBackend, KfdProcessesLandOnTheirGpuOnly) {
    const char* path = "/tmp/gpuvet-rocm-processes.toml";
    FILE* f = std::fopen(path, "w");
    ASSERT_TRUE(f);
    std::fputs("gpu_count = 2\n[gpu.1]\nprocesses = [{pid = 4242, vram_bytes = 21474836480}]\n", f);
    std::fclose(f);
    setenv("GPUVET_FAKE_ROCM_SCENARIO", path, 1);
    RocmSmiSession s(RocmSmiApi::load_file(FAKE_ROCM_SMI));
    RocmSmiBackend b(s);
    EXPECT_TRUE(b.open(0)->sample(kReadProcesses).processes.empty());
    DeviceSample busy = b.open(1)->sample(kReadProcesses | kReadMemory);
    ASSERT_EQ(busy.processes.size(), 1u);
    EXPECT_EQ(busy.processes[0].pid, 4242u);
    EXPECT_EQ(busy.processes[0].used_memory_bytes.value_or(0), 21474836480ull);
    std::remove(path);
}

TEST(RocmSmiBackend, TheChoiceFallsBackToRocmSmiWithoutAmdSmi) {
    auto s = session("rocm_mi250x_rocm57.toml");
    RocmSmiBackend rocm(*s);
    // An AMD SMI that is not there: the choice asks ROCm SMI, which lists the GPUs.
    setenv(kEnvLibAmdSmi, "/nonexistent/libamd_smi.so", 1);
    AmdSmiSession missing(AmdSmiApi::load());
    unsetenv(kEnvLibAmdSmi);
    AmdSmiBackend amd_smi(missing);
    GpuBackends b(nullptr, &amd_smi, [&] { return static_cast<const DeviceBackend*>(&rocm); });
    EXPECT_TRUE(b.amd_only());
    EXPECT_EQ(b.amd().library, "ROCm SMI");
    EXPECT_EQ(&b.devices(), &rocm);
    EXPECT_EQ(b.amd().gpus, 8);
}
