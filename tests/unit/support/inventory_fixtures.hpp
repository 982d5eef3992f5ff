// Hand-built inventories for the checks drawn from the GPU inventory and for order.*.
#pragma once
#include <memory>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "gpu/inventory.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet::testing {

inline const SpecDb& spec_db() {
    static SpecDb d = SpecDb::embedded();
    return d;
}

// An idle, healthy H100 SXM5 80GB as NVML reports it (81559 MiB = 79.6 GiB).
inline GpuInfo healthy_h100(int index) {
    GpuInfo g;
    g.index = index;
    g.name = std::string("NVIDIA H100 80GB HBM3");
    g.uuid = "GPU-0000000" + std::to_string(index);
    g.pci_bus_id = "00000000:" + std::to_string(10 + index) + ":00.0";
    g.pci_device_id = 0x2330u;
    g.sm_count = 132;
    g.memory_total_bytes = std::uint64_t(81559) << 20;
    g.memory_used_bytes = std::uint64_t(530) << 20;
    g.ecc_enabled = true;
    g.ecc.volatile_uncorrected = std::uint64_t(0);
    g.ecc.aggregate_uncorrected = std::uint64_t(0);
    g.ecc.volatile_corrected = std::uint64_t(0);
    g.remapped_rows_correctable = 0u;
    g.remapped_rows_uncorrectable = 0u;
    g.remap_pending = false;
    g.remap_failure = false;
    g.pcie_gen_current = 5;
    g.pcie_gen_max_gpu = 5;
    g.pcie_gen_max_host = 5;
    g.pcie_width_current = 16;
    g.pcie_width_max = 16;
    for (int l = 0; l < 18; ++l) {
        NvLinkInfo link;
        link.link = l;
        link.active = true;
        link.version = 4;
        g.nvlinks.push_back(link);
    }
    g.persistence_mode = true;
    g.compute_mode = std::string("Default");
    g.mig_enabled = false;
    g.virtualization_mode = std::string("None");
    g.power_limit_w = 700.0;
    g.power_enforced_limit_w = 700.0;
    g.power_default_limit_w = 700.0;
    g.clock_event_reasons = std::uint64_t(0x1);  // GPU_IDLE
    g.temperature_c = 34;
    g.temperature_slowdown_c = 87;
    return g;
}

// An idle, healthy MI300X OAM as AMD SMI reports it (206141652992 B of VRAM, 304 CUs, 7 xGMI links).
inline GpuInfo healthy_mi300x(int index, int gpus = 8) {
    GpuInfo g;
    g.index = index;
    g.vendor = std::string("AMD");
    g.name = std::string("AMD Instinct MI300X");
    g.pci_vendor_id = 0x1002u;
    g.pci_device_id = 0x74a1u;
    g.pci_bus_id = "0000:" + std::to_string(10 + index) + ":00.0";
    g.gfx_target = std::string("gfx942");
    g.compute_units = 304;
    g.memory_total_bytes = std::uint64_t(206141652992);
    g.memory_used_bytes = std::uint64_t(284) << 20;
    g.compute_partition = std::string("SPX");
    g.memory_partition = std::string("NPS1");
    g.ecc_enabled = true;
    g.ecc.volatile_uncorrected = std::uint64_t(0);
    g.ecc.volatile_corrected = std::uint64_t(0);
    for (const char* b : {"UMC", "SDMA", "GFX", "XGMI_WAFL"})
        g.ras_blocks.push_back({b, std::uint64_t(0), std::uint64_t(0), std::uint64_t(0)});
    g.bad_pages_retired = g.bad_pages_pending = g.bad_pages_unreservable = 0u;
    g.pcie_gen_current = g.pcie_gen_max_gpu = 5;
    g.pcie_gen_max_host = Fact<int>::absent("AMD SMI reports the GPU's maximum only");
    g.pcie_width_current = g.pcie_width_max = 16;
    for (int j = 0; j < gpus; ++j) {
        if (j == index) continue;
        XgmiLinkInfo l;
        l.link = int(g.xgmi_links.size());
        l.remote_pci_bus_id = "0000:" + std::to_string(10 + j) + ":00.0";
        l.active = true;
        g.xgmi_links.push_back(l);
    }
    g.nvlink_absent_reason = "AMD GPUs have xGMI links instead (see xgmi_links)";
    g.power_limit_w = g.power_enforced_limit_w = g.power_default_limit_w = 750.0;
    g.amd_throttle_status = Fact<std::uint64_t>::absent("the GPU's metrics table has no throttle status");
    g.temperature_c = 42;
    g.temperature_slowdown_c = 105;
    return g;
}

inline Inventory healthy_amd_box(int n = 8) {
    Inventory inv;
    inv.amd_present = true;
    inv.amd_driver_version = std::string("6.10.5");
    for (int i = 0; i < n; ++i) inv.gpus.push_back(healthy_mi300x(i, n));
    return inv;
}

inline Inventory healthy_box(int n = 8) {
    Inventory inv;
    inv.driver_version = std::string("570.86.15");
    for (int i = 0; i < n; ++i) inv.gpus.push_back(healthy_h100(i));
    for (int i = 0; i < n; ++i) {
        std::vector<std::string> row;
        for (int j = 0; j < n; ++j) row.push_back(i == j ? "X" : "NV18");
        inv.topology.matrix.push_back(row);
    }
    return inv;
}

// A context over `inv` with a present driver, the embedded spec DB and a fresh report. Tests edit
// report.machine, inventory and context.options, then call ctx(): a run's facts are read once and
// immutable, so ctx() builds them anew from what the test set.
struct Fixture {
    Report report;
    Inventory inventory;
    CheckContext context;
    std::unique_ptr<RunFacts> facts;
    explicit Fixture(Inventory inv = healthy_box()) : inventory(std::move(inv)) {
        report.machine.driver.present = true;
        report.machine.driver.cuda_usable = true;
        report.machine.driver.driver_version = "570.86.15";
        report.machine.cpu_cores = 112;
        report.machine.cpu_threads = 224;
        report.machine.memory_total_bytes = std::uint64_t(2015) << 30;  // 2 TiB less reserves
        context.specs = &spec_db();
        context.report = &report;
    }
    CheckContext& ctx() {
        facts = std::make_unique<RunFacts>(report.machine, inventory, &spec_db(), context.options.gpus);
        context.facts = facts.get();
        return context;
    }
    GpuInfo& gpu(int i) { return inventory.gpus.at(std::size_t(i)); }
};

}  // namespace gpuvet::testing
