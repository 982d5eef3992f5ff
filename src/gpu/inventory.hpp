// Everything the driver knows about the GPUs of this box, read through NVML and the CUDA driver
// API loaded at run time. Each field is a Fact: a value or the reason it is absent.
// Collected by gpu/inventory.cpp; consumed by `gpuvet inventory`, the gpu.* checks and order.*.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/fact.hpp"
#include "core/result.hpp"

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
    Fact<std::string> remote_type;           // "gpu", "switch" (NVSwitch), "ibmnpu", "unknown"
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
    Fact<int> temperature_memory_max_c;       // NVML's memory maximum threshold
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

    // How the libraries loaded. cuda_present: libcuda loaded and cuInit succeeded.
    bool cuda_present = false;
    std::string cuda_absent_reason;           // "libcuda.so.1 could not be loaded: ..."
    bool nvml_present = false;                // libnvidia-ml loaded and nvmlInit succeeded
    std::string nvml_absent_reason;
    int nvml_init_status = 0;                 // nvmlInit's return code when it failed
    int cuda_init_status = 0;                 // cuInit's return code when it failed
    // Why the driver cannot be used as a whole (kernel module not loaded, MIG hiding every GPU
    // from CUDA, CUDA and NVML disagreeing), with the fix; empty when nothing is wrong.
    std::vector<DriverProblem> problems;
    std::string libcuda_path, libnvml_path;
};

struct InventoryOptions {
    std::filesystem::path root = "/";         // for /proc/<pid>/comm (GPUVET_ROOT)
};

// Reads everything the driver knows. Never throws for driver problems: a failing call makes its
// fact absent with the reason, a failing GPU never stops the others, a GPU that falls off the bus
// is marked `lost`. Libraries come from GPUVET_LIBCUDA / GPUVET_LIBNVML when set.
Inventory collect_inventory(const InventoryOptions& opt = {});

// The report's view of the inventory: MachineInfo::driver and Report::gpus.
DriverInfo driver_info_of(const Inventory& inv);
std::vector<GpuSummary> gpu_summaries_of(const Inventory& inv);

// "00000000:17:00.0", "0000:17:00.0" and "17:00.0" all become "0000:17:00.0"; "" when unparsable.
std::string normalize_pci_bus_id(std::string_view id);
// A CPU bitmask as NVML returns it (64-bit words, CPU 0 = bit 0 of word 0) as "0-31,64-95".
std::string cpu_list_from_mask(const std::uint64_t* words, std::size_t n_words);
// nvidia-smi topo -m label for an NVML common-ancestor level ("PIX", "PXB", "PHB", "NODE", "SYS").
std::string topology_label(int nvml_level);
std::string architecture_name(unsigned nvml_arch);  // "Hopper"; "unknown (N)" when unknown

struct RawProcess {
    std::uint32_t pid = 0;
    std::uint64_t used_memory_bytes = 0;
};
// Decodes `count` entries a process-list call wrote into `buf`. Entries are 24 bytes
// (nvmlProcessInfo_v2_t), but some R535 drivers write 32-byte entries through _v3; the stride
// whose entries look valid (nonzero pids, sane instance ids) wins. `buf` must hold count*32 bytes.
std::vector<RawProcess> decode_process_entries(const unsigned char* buf, std::size_t count);

// Names of the set bits of an NVML clock-event-reasons mask ("SW_POWER_CAP", "HW_SLOWDOWN"...).
std::vector<std::string> decode_clock_reasons(std::uint64_t mask);

}  // namespace gpuvet
