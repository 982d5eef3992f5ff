// The AMD SMI backend on the AMD SMI double (fake_amd_smi.cpp): the values a real MI300X server
// reports, partitions, a link down, RAS errors, throttling, another SKU, unsupported calls, and
// no ROCm at all.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "gpu/bindings/driver_deadline.hpp"
#include "core/amd_throttle.hpp"
#include "gpu/device/amd_backend.hpp"
#include "gpu/device/amd_decode.hpp"
#include "gpu/device/backend_choice.hpp"

using namespace gpuvet;

namespace {

struct Machine {
    std::unique_ptr<AmdSmiSession> session;
    std::unique_ptr<AmdSmiBackend> backend;
};

Machine machine(const std::string& scenario) {
    setenv("GPUVET_FAKE_AMD_SCENARIO", (std::string(AMD_SCENARIOS) + "/" + scenario).c_str(), 1);
    Machine m;
    m.session = std::make_unique<AmdSmiSession>(AmdSmiApi::load_file(FAKE_AMD_SMI));
    m.backend = std::make_unique<AmdSmiBackend>(*m.session);
    return m;
}

const XgmiLinkInfo* link_to(const DeviceFacts& f, const std::string& bus) {
    for (const auto& l : f.xgmi_links)
        if (l.remote_pci_bus_id.value_or("") == bus) return &l;
    return nullptr;
}

}  // namespace

TEST(AmdBackend, HealthyMi300xIdentityAndLimits) {
    Machine m = machine("amd_mi300x_healthy.toml");
    ASSERT_TRUE(m.backend->usable()) << m.backend->absent_reason();
    EXPECT_EQ(m.backend->device_count().value_or(0), 8);
    SystemFacts sys = m.backend->system();
    EXPECT_EQ(sys.library_version.value_or(""), "24.7.1.0");
    EXPECT_EQ(sys.driver_version.value_or(""), "6.8.5");
    EXPECT_FALSE(sys.cuda_driver_version.has_value());

    auto gpu = m.backend->open(0);
    DeviceFacts f = gpu->describe();
    EXPECT_EQ(f.vendor.value_or(""), "AMD");
    EXPECT_EQ(f.name.value_or(""), "AMD Instinct MI300X");
    EXPECT_EQ(f.pci_vendor_id.value_or(0), 0x1002u);
    EXPECT_EQ(f.pci_device_id.value_or(0), 0x74a1u);
    EXPECT_EQ(f.pci_subsystem_id.value_or(0), 0x74a11002u);
    EXPECT_EQ(f.pci_bus_id.value_or(""), "0000:05:00.0");
    EXPECT_EQ(f.gfx_target.value_or(""), "gfx942");
    EXPECT_EQ(f.architecture.value_or(""), "CDNA 3");
    EXPECT_EQ(f.memory_total_bytes.value_or(0), 206141652992ull);
    EXPECT_EQ(f.serial.value_or(""), "PCB00052301001");
    EXPECT_EQ(f.vbios_version.value_or(""), "022.040.003.043.000001");
    EXPECT_EQ(f.board_part_number.value_or(""), "102-G30211-0C");
    EXPECT_EQ(f.compute_partition.value_or(""), "SPX");
    EXPECT_EQ(f.memory_partition.value_or(""), "NPS1");
    EXPECT_EQ(f.form_factor.value_or(""), "OAM");
    EXPECT_EQ(f.pcie_gen_max_gpu.value_or(0), 5);
    EXPECT_EQ(f.pcie_width_max.value_or(0), 16);
    EXPECT_DOUBLE_EQ(f.power_default_limit_w.value_or(0), 750);
    EXPECT_EQ(f.clock_sm_max_mhz.value_or(0), 2100);
    EXPECT_EQ(f.clock_mem_max_mhz.value_or(0), 1300);
    EXPECT_EQ(f.numa_node.value_or(-1), 0);
    EXPECT_TRUE(f.ecc_enabled.value_or(false));
    EXPECT_NE(f.compute_capability.absent_reason.find("gfx target"), std::string::npos);
    EXPECT_NE(f.mig_enabled.absent_reason.find("partitions"), std::string::npos);
    ASSERT_EQ(f.xgmi_links.size(), 7u);  // one to each other GPU of the board
    for (const auto& l : f.xgmi_links) EXPECT_TRUE(l.active.value_or(false));
    EXPECT_TRUE(gpu->errors().empty());
    EXPECT_EQ(m.backend->pcie_path(*gpu, *m.backend->open(1)).value_or(""), "XGMI");
}

TEST(AmdBackend, HealthyMi300xSample) {
    Machine m = machine("amd_mi300x_healthy.toml");
    auto gpu = m.backend->open(7);
    DeviceSample s = gpu->sample();
    EXPECT_EQ(s.temperature_c.value_or(0), 42);  // the junction
    EXPECT_EQ(s.temperature_edge_c.absent_reason, "not supported by this GPU or driver");
    EXPECT_EQ(s.temperature_memory_c.value_or(0), 35);
    EXPECT_DOUBLE_EQ(s.power_draw_w.value_or(0), 140);
    EXPECT_DOUBLE_EQ(s.power_limit_w.value_or(0), 750);
    EXPECT_EQ(s.clock_sm_mhz.value_or(0), 132);
    EXPECT_EQ(s.pcie_gen_current.value_or(0), 5);
    EXPECT_EQ(s.pcie_width_current.value_or(0), 16);
    EXPECT_EQ(s.memory_used_bytes.value_or(0), 297963520ull);
    EXPECT_EQ(s.memory_free_bytes.value_or(0), 206141652992ull - 297963520ull);
    EXPECT_EQ(s.ras_blocks.size(), 15u);  // UMC ... MCA enabled
    EXPECT_EQ(s.ras_blocks.front().block, "UMC");
    for (const auto& b : s.ras_blocks) EXPECT_EQ(b.uncorrectable.value_or(1), 0u) << b.block;
    EXPECT_EQ(s.ecc.volatile_uncorrected.value_or(1), 0u);
    EXPECT_EQ(s.bad_pages_retired.value_or(1), 0u);
    EXPECT_TRUE(s.processes.empty());
    EXPECT_TRUE(s.processes_absent_reason.empty());
    // MI300: the metrics table carries throttle residencies, not the throttle bits.
    EXPECT_FALSE(s.clock_event_reasons.has_value());
    EXPECT_NE(s.clock_event_reasons.absent_reason.find("metrics table has no throttle status"), std::string::npos)
        << s.clock_event_reasons.absent_reason;
    EXPECT_EQ(s.throttled_power_percent.absent_reason, "first reading of the throttle residency counters");
    EXPECT_NE(s.nvlink_rx_bytes_total.absent_reason.find("xGMI"), std::string::npos);
    EXPECT_EQ(s.xgmi_read_bytes_total.value_or(1), 0u);
    EXPECT_TRUE(gpu->errors().empty());
}

TEST(AmdBackend, CpxNps4ListsEveryPartitionWithItsShareOfVram) {
    Machine m = machine("amd_mi300x_cpx_nps4.toml");
    EXPECT_EQ(m.backend->device_count().value_or(0), 64);
    DeviceFacts f = m.backend->open(63)->describe();
    EXPECT_EQ(f.compute_partition.value_or(""), "CPX");
    EXPECT_EQ(f.memory_partition.value_or(""), "NPS4");
    EXPECT_EQ(f.memory_total_bytes.value_or(0), 25767706624ull);
}

TEST(AmdBackend, XgmiLinkDownIsSeenFromBothEnds) {
    Machine m = machine("amd_mi300x_xgmi_down.toml");
    DeviceFacts g3 = m.backend->open(3)->describe(), g5 = m.backend->open(5)->describe();
    DeviceFacts g0 = m.backend->open(0)->describe();
    ASSERT_NE(link_to(g3, g5.pci_bus_id.value_or("?")), nullptr);
    EXPECT_FALSE(link_to(g3, g5.pci_bus_id.value_or("?"))->active.value_or(true));
    EXPECT_FALSE(link_to(g5, g3.pci_bus_id.value_or("?"))->active.value_or(true));
    EXPECT_TRUE(link_to(g3, g0.pci_bus_id.value_or("?"))->active.value_or(false));
    int down = 0;
    for (const auto& l : g0.xgmi_links) down += !l.active.value_or(true);
    EXPECT_EQ(down, 0);
}

TEST(AmdBackend, RasErrorsPerBlockAndBadPages) {
    Machine m = machine("amd_mi300x_ras_errors.toml");
    DeviceSample s = m.backend->open(2)->sample(kReadEcc | kReadRetirement);
    EXPECT_EQ(s.ecc.volatile_corrected.value_or(0), 14u);
    EXPECT_EQ(s.ecc.volatile_uncorrected.value_or(0), 1u);
    bool umc = false, xgmi = false;
    for (const auto& b : s.ras_blocks) {
        if (b.block == "UMC") umc = b.correctable.value_or(0) == 12 && b.uncorrectable.value_or(0) == 1;
        if (b.block == "XGMI_WAFL") xgmi = b.correctable.value_or(0) == 2;
    }
    EXPECT_TRUE(umc);
    EXPECT_TRUE(xgmi);
    EXPECT_EQ(s.bad_pages_retired.value_or(0), 3u);
    EXPECT_EQ(s.bad_pages_pending.value_or(0), 1u);
    EXPECT_TRUE(s.retired_pages_pending.value_or(false));
    EXPECT_NE(s.remapped_rows_correctable.absent_reason.find("bad pages"), std::string::npos);
    DeviceSample clean = m.backend->open(1)->sample(kReadEcc | kReadRetirement);
    EXPECT_EQ(clean.ecc.volatile_uncorrected.value_or(1), 0u);
    EXPECT_EQ(clean.bad_pages_retired.value_or(1), 0u);
}

TEST(AmdBackend, ThrottlingGpuReadsHotAndSlow) {
    Machine m = machine("amd_mi300x_throttling.toml");
    DeviceSample hot = m.backend->open(6)->sample(kReadThermal | kReadClocks | kReadPower | kReadUtilization);
    DeviceSample ok = m.backend->open(5)->sample(kReadThermal | kReadClocks | kReadPower | kReadUtilization);
    EXPECT_EQ(hot.temperature_c.value_or(0), 104);
    EXPECT_EQ(hot.clock_sm_mhz.value_or(0), 1100);
    EXPECT_DOUBLE_EQ(hot.power_draw_w.value_or(0), 750);
    EXPECT_EQ(hot.utilization_gpu_percent.value_or(0), 100);
    EXPECT_EQ(ok.temperature_c.value_or(0), 71);
    EXPECT_EQ(ok.clock_sm_mhz.value_or(0), 2100);
    EXPECT_EQ(hot.pcie_gen_current.absent_reason, "not read");  // only what was asked for
}

TEST(AmdBackend, ThrottleResidenciesAreSharesOfTheIntervalBetweenTwoReads) {
    Machine m = machine("amd_mi300x_throttling.toml");
    auto hot = m.backend->open(6);
    DeviceSample first = hot->sample(kReadClocks);
    EXPECT_FALSE(first.throttled_thermal_percent.has_value());
    DeviceSample second = hot->sample(kReadClocks);
    EXPECT_DOUBLE_EQ(second.throttled_thermal_percent.value_or(0), 40);
    EXPECT_DOUBLE_EQ(second.throttled_power_percent.value_or(0), 25);
    EXPECT_EQ(second.throttle_origin.source, FigureSource::kCounterDifference);
    auto ok = m.backend->open(5);
    ok->sample(kReadClocks);
    DeviceSample cool = ok->sample(kReadClocks);
    EXPECT_DOUBLE_EQ(cool.throttled_thermal_percent.value_or(-1), 0);
    EXPECT_DOUBLE_EQ(cool.throttled_power_percent.value_or(-1), 2);
}

TEST(AmdBackend, ThrottleBitsAreDecodedAndMappedOntoTheSharedReasonClasses) {
    Machine m = machine("amd_mi210_hot.toml");
    DeviceSample hot = m.backend->open(1)->sample(kReadClocks);
    ASSERT_TRUE(hot.amd_throttle_status.has_value()) << hot.amd_throttle_status.absent_reason;
    EXPECT_EQ(*hot.amd_throttle_status, 1ull << 36);
    EXPECT_EQ(amd_throttle::names(*hot.amd_throttle_status), std::vector<std::string>{"TEMP_HOTSPOT"});
    EXPECT_EQ(hot.clock_event_reasons.value_or(0), clock_reason::kSwThermalSlowdown);
    // A table of version 1.3 has no residency counters: absent with the reason.
    EXPECT_NE(hot.throttled_power_percent.absent_reason.find("1.6 and later"), std::string::npos);
    DeviceSample cool = m.backend->open(0)->sample(kReadClocks);
    EXPECT_EQ(cool.amd_throttle_status.value_or(1), 0u);
    EXPECT_EQ(cool.clock_event_reasons.value_or(1), 0u);
    EXPECT_EQ(amd_throttle::as_clock_reasons(1ull << 0), clock_reason::kSwPowerCap);   // PPT0
    EXPECT_EQ(amd_throttle::as_clock_reasons(1ull << 47), clock_reason::kHwSlowdown);  // PROCHOT_GFX
    EXPECT_EQ(amd_throttle::joined((1ull << 1) | (1ull << 50)), "PPT1|bit 50");
}

TEST(AmdBackend, ComputeUnitsAsTheDriverCountsThem) {
    EXPECT_EQ(machine("amd_mi300x_healthy.toml").backend->open(0)->describe().compute_units.value_or(0), 304);
    EXPECT_EQ(machine("amd_mi300x_cpx_nps4.toml").backend->open(9)->describe().compute_units.value_or(0), 38);
}

// A stand-in for NVML's backend: two GPUs named by their index.
class TwoGpus final : public DeviceBackend {
    class Gpu final : public GpuDevice {
    public:
        explicit Gpu(int i) : i_(i) {}
        int index() const override { return i_; }
        const std::string& unopened_reason() const override { return none_; }
        DeviceFacts describe() override {
            DeviceFacts f;
            f.name = "stand-in " + std::to_string(i_);
            return f;
        }
        DeviceSample sample(unsigned) override { return {}; }
        bool lost() const override { return false; }
        const std::vector<std::string>& errors() const override { return errors_; }

    private:
        int i_;
        std::string none_;
        std::vector<std::string> errors_;
    };

public:
    const std::string& absent_reason() const override { return none_; }
    SystemFacts system() const override { return {}; }
    Fact<int> device_count() const override { return 2; }
    std::unique_ptr<GpuDevice> open(int index) const override { return std::make_unique<Gpu>(index); }
    Fact<std::string> pcie_path(const GpuDevice&, const GpuDevice&) const override { return std::string("PIX"); }
    std::string pcie_paths_absent_reason() const override { return {}; }
    std::unique_ptr<EventWatch> watch_critical_errors(const std::vector<const GpuDevice*>&) const override {
        return nullptr;
    }

private:
    std::string none_;
};

// The run's choice of vendors, over backends the test makes: AMD alone, two joined, neither.
TEST(GpuBackends, AmdAloneBothJoinedOrNeitherWithBothReasons) {
    Machine mi300 = machine("amd_mi300x_healthy.toml");
    GpuBackends amd_only(nullptr, mi300.backend.get());
    EXPECT_TRUE(amd_only.amd_only());
    EXPECT_EQ(&amd_only.devices(), mi300.backend.get());
    EXPECT_EQ(amd_only.vendor_of(3), "AMD");
    EXPECT_EQ(amd_only.amd().library, "AMD SMI");

    // Two usable libraries, joined: NVIDIA's GPUs first (here a stand-in with two), AMD's after them.
    TwoGpus nvidia;
    GpuBackends both(&nvidia, mi300.backend.get());
    ASSERT_TRUE(both.both());
    EXPECT_EQ(both.devices().device_count().value_or(0), 10);
    auto first = both.devices().open(1), joined = both.devices().open(2);
    EXPECT_EQ(first->describe().name.value_or(""), "stand-in 1");
    EXPECT_EQ(joined->index(), 2);
    EXPECT_EQ(joined->describe().name.value_or(""), "AMD Instinct MI300X");
    EXPECT_EQ(both.vendor_of(1), "NVIDIA");
    EXPECT_EQ(both.vendor_of(2), "AMD");
    EXPECT_EQ(both.devices().pcie_path(*joined, *both.devices().open(9)).value_or(""), "XGMI");
    EXPECT_NE(both.devices().pcie_path(*first, *joined).absent_reason.find("two vendors"), std::string::npos);

    // A working AMD SMI is the answer: ROCm SMI is not asked.
    bool asked = false;
    GpuBackends amd_smi(nullptr, mi300.backend.get(), [&]() -> const DeviceBackend* {
        asked = true;
        return nullptr;
    });
    EXPECT_FALSE(asked);

    // Neither: the reason names both vendors, and the ROCm SMI fallback was tried after AMD SMI.
    setenv("GPUVET_FAKE_AMD_SCENARIO", "/nonexistent/scenario.toml", 1);
    AmdSmiSession broken(AmdSmiApi::load_file(FAKE_AMD_SMI));
    AmdSmiBackend unusable(broken);
    bool fallback_tried = false;
    GpuBackends none(&unusable, &unusable, [&]() -> const DeviceBackend* {
        fallback_tried = true;
        return &unusable;
    });
    EXPECT_TRUE(fallback_tried);
    EXPECT_FALSE(none.devices().usable());
    EXPECT_EQ(none.devices().absent_reason().rfind("no GPU driver found: NVIDIA (amdsmi_init failed", 0), 0u)
        << none.devices().absent_reason();
    EXPECT_NE(none.devices().absent_reason().find("), AMD (amdsmi_init failed"), std::string::npos);
    EXPECT_FALSE(none.devices().device_count().has_value());
    EXPECT_FALSE(none.devices().open(0)->unopened_reason().empty());
}

TEST(AmdBackend, AnotherSkuIsReportedAsTheDriverNamesIt) {
    Machine m = machine("amd_mi308x_rebadged.toml");
    DeviceFacts f = m.backend->open(0)->describe();
    EXPECT_EQ(f.name.value_or(""), "MI308X");
    EXPECT_EQ(f.pci_device_id.value_or(0), 0x74a2u);
    EXPECT_EQ(f.gfx_target.value_or(""), "gfx942");
}

TEST(AmdBackend, Mi250xWithoutPartitionCallsSaysNotSupported) {
    Machine m = machine("amd_mi250x_old_driver.toml");
    auto gpu = m.backend->open(0);
    DeviceFacts f = gpu->describe();
    EXPECT_EQ(f.name.value_or(""), "AMD Instinct MI250X");
    EXPECT_EQ(f.gfx_target.value_or(""), "gfx90a");
    EXPECT_EQ(f.architecture.value_or(""), "CDNA 2");
    EXPECT_EQ(f.pcie_gen_max_gpu.value_or(0), 4);
    EXPECT_EQ(f.compute_partition.absent_reason, "not supported by this GPU or driver");
    EXPECT_EQ(f.memory_partition.absent_reason, "not supported by this GPU or driver");
    EXPECT_TRUE(gpu->errors().empty()) << "unsupported is not a failure";
    EXPECT_EQ(gpu->sample(kReadThermal).temperature_edge_c.value_or(0), 38);
}

TEST(AmdBackend, MissingOptionalSymbolsAreAbsentOneByOne) {
    setenv("GPUVET_FAKE_AMD_SCENARIO", "/nonexistent", 1);
    AmdSmiSession session(AmdSmiApi::load_file(AMD_SMI_MINIMAL));
    AmdSmiBackend backend(session);
    ASSERT_TRUE(backend.usable()) << backend.absent_reason();
    ASSERT_EQ(backend.device_count().value_or(0), 1);
    DeviceFacts f = backend.open(0)->describe();
    EXPECT_EQ(f.name.absent_reason, "driver lacks amdsmi_get_gpu_asic_info");
    EXPECT_EQ(f.memory_total_bytes.absent_reason, "driver lacks amdsmi_get_gpu_memory_total");
    EXPECT_EQ(f.xgmi_absent_reason, "driver lacks amdsmi_get_link_metrics");
    EXPECT_EQ(backend.system().library_version.absent_reason, "driver lacks amdsmi_get_lib_version");
}

TEST(AmdBackend, NoRocmOrABrokenScenarioIsUnusableWithTheReason) {
    setenv(kEnvLibAmdSmi, "/nonexistent/libamd_smi.so", 1);
    AmdSmiSession none(AmdSmiApi::load());
    unsetenv(kEnvLibAmdSmi);
    AmdSmiBackend b(none);
    EXPECT_FALSE(b.usable());
    EXPECT_EQ(b.absent_reason().rfind("libamd_smi.so could not be loaded", 0), 0u) << b.absent_reason();
    EXPECT_EQ(b.device_count().absent_reason, b.absent_reason());
    // The driver is there but does not start (the double without a scenario answers INIT_ERROR).
    setenv("GPUVET_FAKE_AMD_SCENARIO", "/nonexistent/scenario.toml", 1);
    AmdSmiSession broken(AmdSmiApi::load_file(FAKE_AMD_SMI));
    EXPECT_EQ(broken.absent_reason().rfind("amdsmi_init failed: AMD SMI could not start", 0), 0u)
        << broken.absent_reason();
}

TEST(AmdBackend, AHungCallIsAbandonedNamedAndTheOtherGpusAnswer) {
    // GPUVET_FAKE_HANG (fake_hang.hpp): GPU 2's power reading never returns, as a wedged driver's.
    setenv("GPUVET_FAKE_AMD_SCENARIO", (std::string(AMD_SCENARIOS) + "/amd_mi300x_healthy.toml").c_str(), 1);
    setenv("GPUVET_FAKE_HANG", "amdsmi_get_power_info@2", 1);
    set_driver_timeout_s(0.5);
    // As gpuvet loads it (AmdSmiApi::load), so every call is under the deadline. Never destroyed:
    // a thread stays inside the library for the rest of the process.
    setenv(kEnvLibAmdSmi, FAKE_AMD_SMI, 1);
    auto* session = new AmdSmiSession(AmdSmiApi::load());
    unsetenv(kEnvLibAmdSmi);
    AmdSmiBackend backend(*session);
    ASSERT_TRUE(backend.usable()) << backend.absent_reason();

    const std::string wedged =
        "GPU 2: amdsmi_get_power_info did not return in 0.5 s: the driver is wedged; check `dmesg` for amdgpu errors "
        "(ring timeouts, GPU resets), a reset or reboot is needed";
    auto gpu2 = backend.open(2);
    DeviceSample hung = gpu2->sample(kReadPower);
    EXPECT_FALSE(hung.power_draw_w.has_value());
    EXPECT_EQ(hung.power_draw_w.absent_reason, wedged);
    EXPECT_TRUE(any_driver_wedged());
    EXPECT_NE(driver_wedge_summary().find(wedged), std::string::npos) << driver_wedge_summary();
    // GPU 2 is not asked again; GPU 1 still answers.
    DeviceSample after = gpu2->sample(kReadThermal);
    EXPECT_NE(after.temperature_c.absent_reason.find("not called: the driver stopped answering"), std::string::npos)
        << after.temperature_c.absent_reason;
    EXPECT_DOUBLE_EQ(backend.open(1)->sample(kReadPower).power_draw_w.value_or(0), 140);
}

TEST(AmdDecode, GfxTargetsFromAmdSmiNumbers) {
    using amd_decode::gfx_target_name;
    EXPECT_EQ(gfx_target_name(942).value_or(""), "gfx942");
    EXPECT_EQ(gfx_target_name(950).value_or(""), "gfx950");
    EXPECT_EQ(gfx_target_name(9010).value_or(""), "gfx90a");  // KFD 90010: minor 0, stepping 10
    EXPECT_EQ(gfx_target_name(9008).value_or(""), "gfx908");
    EXPECT_EQ(gfx_target_name(1030).value_or(""), "gfx1030");
    EXPECT_EQ(gfx_target_name(11000).value_or(""), "gfx1100");  // the Radeon PRO W7900
    EXPECT_EQ(gfx_target_name(1151).value_or(""), "gfx1151");
    EXPECT_FALSE(gfx_target_name(~0ull).has_value());
    EXPECT_FALSE(gfx_target_name(0).has_value());
    EXPECT_FALSE(gfx_target_name(42).has_value());
    EXPECT_EQ(amd_decode::architecture_of("gfx1100").value_or(""), "RDNA 3");
    EXPECT_FALSE(amd_decode::architecture_of("gfx1").has_value());
    EXPECT_EQ(amd_decode::pcie_gen_of_mts(32000).value_or(0), 5);
    EXPECT_FALSE(amd_decode::pcie_gen_of_mts(12345).has_value());
    EXPECT_EQ(amd_decode::pci_bus_id_of((0x2ull << 32) | (0xc6 << 8) | (0x1 << 3) | 2), "0002:c6:01.2");
}
