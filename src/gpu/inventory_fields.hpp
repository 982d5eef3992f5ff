// Every per-GPU fact with its stable key and label, in display order. gpu/inventory_facts.cpp
// turns this list into the printers' table, so a field added here appears in the JSON and the
// terminal listing of `gpuvet inventory`.
#pragma once
#include "gpu/inventory.hpp"

namespace gpuvet {

// Calls f(key, label, fact) for each Fact member of `g` (GpuInfo or const GpuInfo).
template <class G, class F>
void visit_gpu_facts(G& g, F&& f) {
    f("cuda_ordinal", "CUDA ordinal", g.cuda_ordinal);
    f("name", "Name", g.name);
    f("uuid", "UUID", g.uuid);
    f("serial", "Serial", g.serial);
    f("pci_bus_id", "PCI bus id", g.pci_bus_id);
    f("pci_device_id", "PCI device id", g.pci_device_id);
    f("pci_subsystem_id", "PCI subsystem id", g.pci_subsystem_id);
    f("vbios_version", "VBIOS", g.vbios_version);
    f("architecture", "Architecture", g.architecture);
    f("compute_capability", "Compute capability", g.compute_capability);
    f("sm_count", "SMs", g.sm_count);
    f("memory_total_bytes", "Memory total", g.memory_total_bytes);
    f("memory_reserved_bytes", "Memory reserved", g.memory_reserved_bytes);
    f("memory_used_bytes", "Memory used", g.memory_used_bytes);
    f("memory_free_bytes", "Memory free", g.memory_free_bytes);
    f("ecc_enabled", "ECC enabled", g.ecc_enabled);
    f("ecc_pending", "ECC after reboot", g.ecc_pending);
    f("ecc_volatile_corrected", "ECC volatile corrected", g.ecc.volatile_corrected);
    f("ecc_volatile_uncorrected", "ECC volatile uncorrected", g.ecc.volatile_uncorrected);
    f("ecc_aggregate_corrected", "ECC aggregate corrected", g.ecc.aggregate_corrected);
    f("ecc_aggregate_uncorrected", "ECC aggregate uncorrected", g.ecc.aggregate_uncorrected);
    f("remapped_rows_correctable", "Remapped rows (correctable)", g.remapped_rows_correctable);
    f("remapped_rows_uncorrectable", "Remapped rows (uncorrectable)", g.remapped_rows_uncorrectable);
    f("remap_pending", "Row remap pending", g.remap_pending);
    f("remap_failure", "Row remap failure", g.remap_failure);
    f("retired_pages_single_bit", "Retired pages (single-bit)", g.retired_pages_single_bit);
    f("retired_pages_double_bit", "Retired pages (double-bit)", g.retired_pages_double_bit);
    f("retired_pages_pending", "Page retirement pending", g.retired_pages_pending);
    f("pcie_gen_current", "PCIe gen current", g.pcie_gen_current);
    f("pcie_gen_max_gpu", "PCIe gen GPU max", g.pcie_gen_max_gpu);
    f("pcie_gen_max_host", "PCIe gen GPU+host max", g.pcie_gen_max_host);
    f("pcie_width_current", "PCIe width current", g.pcie_width_current);
    f("pcie_width_max", "PCIe width max", g.pcie_width_max);
    f("pcie_replay_count", "PCIe replays", g.pcie_replay_count);
    f("persistence_mode", "Persistence mode", g.persistence_mode);
    f("compute_mode", "Compute mode", g.compute_mode);
    f("mig_enabled", "MIG enabled", g.mig_enabled);
    f("virtualization_mode", "Virtualization mode", g.virtualization_mode);
    f("power_draw_w", "Power draw", g.power_draw_w);
    f("power_limit_w", "Power limit", g.power_limit_w);
    f("power_default_limit_w", "Power default limit", g.power_default_limit_w);
    f("power_min_limit_w", "Power min limit", g.power_min_limit_w);
    f("power_max_limit_w", "Power max limit", g.power_max_limit_w);
    f("power_enforced_limit_w", "Power enforced limit", g.power_enforced_limit_w);
    f("clock_sm_mhz", "SM clock", g.clock_sm_mhz);
    f("clock_sm_max_mhz", "SM clock max", g.clock_sm_max_mhz);
    f("clock_mem_mhz", "Memory clock", g.clock_mem_mhz);
    f("clock_mem_max_mhz", "Memory clock max", g.clock_mem_max_mhz);
    f("clock_event_reasons", "Clock event reasons", g.clock_event_reasons);
    f("temperature_c", "Temperature", g.temperature_c);
    f("temperature_slowdown_c", "Slowdown temperature", g.temperature_slowdown_c);
    f("temperature_shutdown_c", "Shutdown temperature", g.temperature_shutdown_c);
    f("temperature_memory_c", "Memory temperature", g.temperature_memory_c);
    f("temperature_memory_max_c", "Memory max temperature", g.temperature_memory_max_c);
    f("fan_percent", "Fan", g.fan_percent);
    f("utilization_gpu_percent", "Utilization GPU", g.utilization_gpu_percent);
    f("utilization_memory_percent", "Utilization memory", g.utilization_memory_percent);
    f("numa_node", "NUMA node", g.numa_node);
    f("cpu_affinity", "CPU affinity", g.cpu_affinity);
}

// The same for an AMD GPU: its own facts (gfx target, compute units, partitions, RAS, bad pages,
// edge/junction/HBM temperatures, throttle status) and the shared ones under the same keys;
// NVIDIA's modes and counters, absent on AMD by nature, are left out.
template <class G, class F>
void visit_amd_gpu_facts(G& g, F&& f) {
    f("name", "Name", g.name);
    f("uuid", "UUID", g.uuid);
    f("serial", "Serial", g.serial);
    f("board_part_number", "Board part number", g.board_part_number);
    f("pci_bus_id", "PCI bus id", g.pci_bus_id);
    f("pci_vendor_id", "PCI vendor id", g.pci_vendor_id);
    f("pci_device_id", "PCI device id", g.pci_device_id);
    f("pci_subsystem_id", "PCI subsystem id", g.pci_subsystem_id);
    f("vbios_version", "VBIOS", g.vbios_version);
    f("gfx_target", "gfx target", g.gfx_target);
    f("architecture", "Architecture", g.architecture);
    f("compute_units", "Compute units", g.compute_units);
    f("form_factor", "Form factor", g.form_factor);
    f("compute_partition", "Compute partition", g.compute_partition);
    f("memory_partition", "Memory partition", g.memory_partition);
    f("memory_total_bytes", "VRAM total", g.memory_total_bytes);
    f("memory_used_bytes", "VRAM used", g.memory_used_bytes);
    f("memory_free_bytes", "VRAM free", g.memory_free_bytes);
    f("ecc_enabled", "ECC enabled (HBM)", g.ecc_enabled);
    f("ecc_volatile_corrected", "ECC corrected (since driver load)", g.ecc.volatile_corrected);
    f("ecc_volatile_uncorrected", "ECC uncorrected (since driver load)", g.ecc.volatile_uncorrected);
    f("bad_pages_retired", "Bad pages retired", g.bad_pages_retired);
    f("bad_pages_pending", "Bad pages pending retirement", g.bad_pages_pending);
    f("bad_pages_unreservable", "Bad pages unreservable", g.bad_pages_unreservable);
    f("pcie_gen_current", "PCIe gen current", g.pcie_gen_current);
    f("pcie_gen_max_gpu", "PCIe gen GPU max", g.pcie_gen_max_gpu);
    f("pcie_width_current", "PCIe width current", g.pcie_width_current);
    f("pcie_width_max", "PCIe width max", g.pcie_width_max);
    f("pcie_replay_count", "PCIe replays", g.pcie_replay_count);
    f("power_draw_w", "Power draw", g.power_draw_w);
    f("power_limit_w", "Power cap", g.power_limit_w);
    f("power_default_limit_w", "Power cap default", g.power_default_limit_w);
    f("power_min_limit_w", "Power cap min", g.power_min_limit_w);
    f("power_max_limit_w", "Power cap max", g.power_max_limit_w);
    f("clock_sm_mhz", "GFX clock", g.clock_sm_mhz);
    f("clock_sm_max_mhz", "GFX clock max", g.clock_sm_max_mhz);
    f("clock_mem_mhz", "Memory clock", g.clock_mem_mhz);
    f("clock_mem_max_mhz", "Memory clock max", g.clock_mem_max_mhz);
    f("amd_throttle_status", "Throttle status", g.amd_throttle_status);
    f("temperature_edge_c", "Edge temperature", g.temperature_edge_c);
    f("temperature_c", "Junction (hotspot) temperature", g.temperature_c);
    f("temperature_slowdown_c", "Junction critical", g.temperature_slowdown_c);
    f("temperature_shutdown_c", "Junction emergency", g.temperature_shutdown_c);
    f("temperature_memory_c", "HBM/VRAM temperature", g.temperature_memory_c);
    f("temperature_memory_max_c", "HBM/VRAM critical", g.temperature_memory_max_c);
    f("fan_percent", "Fan", g.fan_percent);
    f("utilization_gpu_percent", "GFX activity", g.utilization_gpu_percent);
    f("utilization_memory_percent", "Memory controller activity", g.utilization_memory_percent);
    f("numa_node", "NUMA node", g.numa_node);
}

}  // namespace gpuvet
