// Everything the driver knows about the GPUs of this box, read through NVML and the CUDA driver
// API loaded at run time. Each field is a Fact: a value or the reason it is absent.
// Collected by gpu/inventory.cpp; consumed by `gpuvet inventory`, the gpu.* checks and order.*.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/fact.hpp"

namespace gpuvet {

struct GpuProcess {
    std::uint32_t pid = 0;
    std::string name;                        // from /proc/<pid>/comm when visible
    Fact<std::uint64_t> used_memory_bytes;
    std::string type;                        // "compute", "graphics"
};

struct NvLinkInfo {
    int link = 0;
    Fact<bool> active;
    Fact<std::string> remote_pci_bus_id;
    Fact<int> version;
};

struct EccCounts {
    Fact<std::uint64_t> volatile_corrected, volatile_uncorrected;
    Fact<std::uint64_t> aggregate_corrected, aggregate_uncorrected;
};

struct GpuInfo {
    int index = 0;                            // NVML index
    Fact<int> cuda_ordinal;                   // CUDA device ordinal matched by PCI bus id
    Fact<std::string> name, uuid, serial, pci_bus_id, vbios_version;
    Fact<std::uint32_t> pci_device_id;        // 16-bit device id (vendor 0x10de)
    Fact<std::uint32_t> pci_subsystem_id;     // 32-bit subsystem id
    Fact<std::string> architecture;           // "Hopper"
    Fact<std::string> compute_capability;     // "9.0"
    Fact<int> sm_count;

    Fact<std::uint64_t> memory_total_bytes, memory_reserved_bytes, memory_used_bytes, memory_free_bytes;

    Fact<bool> ecc_enabled, ecc_pending;
    EccCounts ecc;
    Fact<std::uint32_t> remapped_rows_correctable, remapped_rows_uncorrectable;
    Fact<bool> remap_pending, remap_failure;
    Fact<std::uint32_t> retired_pages_single_bit, retired_pages_double_bit;
    Fact<bool> retired_pages_pending;

    Fact<int> pcie_gen_current, pcie_gen_max_gpu, pcie_gen_max_host;
    Fact<int> pcie_width_current, pcie_width_max;
    Fact<std::uint32_t> pcie_replay_count;
    std::vector<NvLinkInfo> nvlinks;          // every link the driver knows, active or not
    std::string nvlink_absent_reason;         // when the links could not be read at all

    Fact<bool> persistence_mode;
    Fact<std::string> compute_mode;           // "Default", "Exclusive_Process", "Prohibited"
    Fact<bool> mig_enabled;
    Fact<std::string> virtualization_mode;    // "None", "Pass-Through", "vGPU", "Host vGPU"...

    Fact<double> power_draw_w, power_limit_w, power_default_limit_w, power_min_limit_w,
        power_max_limit_w, power_enforced_limit_w;
    Fact<int> clock_sm_mhz, clock_mem_mhz, clock_sm_max_mhz, clock_mem_max_mhz;
    Fact<std::uint64_t> clock_event_reasons;  // NVML bitmask, decode with decode_clock_reasons()
    Fact<int> temperature_c, temperature_slowdown_c, temperature_shutdown_c, temperature_memory_c;
    Fact<int> fan_percent;
    Fact<int> utilization_gpu_percent, utilization_memory_percent;

    std::vector<GpuProcess> processes;
    std::string processes_absent_reason;      // empty when the list was read
    Fact<int> numa_node;
    Fact<std::string> cpu_affinity;           // CPU list like "0-31,64-95"

    bool lost = false;                        // fell off the bus while being read
    std::vector<std::string> errors;          // per-GPU problems met while reading
};

// GPU-to-GPU relation like `nvidia-smi topo -m`: "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "X".
struct Topology {
    std::vector<std::vector<std::string>> matrix;  // [i][j], "X" on the diagonal
    std::string absent_reason;
};

struct Inventory {
    Fact<std::string> driver_version;         // "570.86.15"
    Fact<int> cuda_driver_version;            // 12080
    Fact<std::string> nvml_version;
    std::vector<GpuInfo> gpus;
    Topology topology;
    std::vector<std::string> errors;          // box-level problems (NVML missing, ...)
};

// Names of the set bits of an NVML clock-event-reasons mask ("SW_POWER_CAP", "HW_SLOWDOWN"...).
std::vector<std::string> decode_clock_reasons(std::uint64_t mask);

}  // namespace gpuvet
