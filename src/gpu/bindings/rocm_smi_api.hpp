// ROCm SMI (librocm_smi64.so), loaded at run time: the fallback for ROCm stacks older than AMD SMI.
// Our own declarations of the types and signatures gpuvet uses; tests/abi proves them equal to
// Debian's rocm_smi.h (ROCm 5.2). Names follow rocm_smi.h inside namespace gpuvet::rsmi.
//
// One layout changed without a new symbol: ROCm SMI 7.0 (ROCm 6.0, rocm_smi_lib commit 3d40c4b)
// put `bool has_deep_sleep` in front of rsmi_frequencies_t, which rsmi_dev_gpu_clk_freq_get and
// rsmi_dev_pci_bandwidth_get fill. Both layouts are declared; rsmi_version_get says which one the
// loaded library writes (frequencies_layout_of).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/bindings/dynlib.hpp"
#include "gpu/bindings/symbol_table.hpp"

namespace gpuvet::rsmi {

enum rsmi_status_t : unsigned {
    RSMI_STATUS_SUCCESS = 0x0,
    RSMI_STATUS_INVALID_ARGS = 1,
    RSMI_STATUS_NOT_SUPPORTED = 2,
    RSMI_STATUS_FILE_ERROR = 3,
    RSMI_STATUS_PERMISSION = 4,
    RSMI_STATUS_OUT_OF_RESOURCES = 5,
    RSMI_STATUS_INTERNAL_EXCEPTION = 6,
    RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 7,
    RSMI_STATUS_INIT_ERROR = 8,
    RSMI_STATUS_NOT_YET_IMPLEMENTED = 9,
    RSMI_STATUS_NOT_FOUND = 10,
    RSMI_STATUS_INSUFFICIENT_SIZE = 11,
    RSMI_STATUS_INTERRUPT = 12,
    RSMI_STATUS_UNEXPECTED_SIZE = 13,
    RSMI_STATUS_NO_DATA = 14,
    RSMI_STATUS_UNEXPECTED_DATA = 15,
    RSMI_STATUS_BUSY = 16,
    RSMI_STATUS_REFCOUNT_OVERFLOW = 17,
    RSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF,
};

enum rsmi_memory_type_t : unsigned { RSMI_MEM_TYPE_VRAM = 0, RSMI_MEM_TYPE_VIS_VRAM = 1, RSMI_MEM_TYPE_GTT = 2 };

// RAS blocks (a bit each; rsmi_dev_ecc_enabled_get returns the enabled ones as a mask).
enum rsmi_gpu_block_t : unsigned long {
    RSMI_GPU_BLOCK_INVALID = 0x0,
    RSMI_GPU_BLOCK_UMC = 0x1,
    RSMI_GPU_BLOCK_SDMA = 0x2,
    RSMI_GPU_BLOCK_GFX = 0x4,
    RSMI_GPU_BLOCK_MMHUB = 0x8,
    RSMI_GPU_BLOCK_ATHUB = 0x10,
    RSMI_GPU_BLOCK_PCIE_BIF = 0x20,
    RSMI_GPU_BLOCK_HDP = 0x40,
    RSMI_GPU_BLOCK_XGMI_WAFL = 0x80,
    RSMI_GPU_BLOCK_DF = 0x100,
    RSMI_GPU_BLOCK_SMN = 0x200,
    RSMI_GPU_BLOCK_SEM = 0x400,
    RSMI_GPU_BLOCK_MP0 = 0x800,
    RSMI_GPU_BLOCK_MP1 = 0x1000,
    RSMI_GPU_BLOCK_FUSE = 0x2000,
    RSMI_GPU_BLOCK_RESERVED = 0x8000000000000000,
};

struct rsmi_error_count_t {
    uint64_t correctable_err;
    uint64_t uncorrectable_err;
};

enum rsmi_memory_page_status_t : unsigned {
    RSMI_MEM_PAGE_STATUS_RESERVED = 0,
    RSMI_MEM_PAGE_STATUS_PENDING = 1,
    RSMI_MEM_PAGE_STATUS_UNRESERVABLE = 2,
};
struct rsmi_retired_page_record_t {
    uint64_t page_address;
    uint64_t page_size;
    rsmi_memory_page_status_t status;
};

inline constexpr unsigned kMaxNumFrequencies = 32;  // RSMI_MAX_NUM_FREQUENCIES
// Up to ROCm SMI 5.x (ROCm 5.7).
struct rsmi_frequencies_t {
    uint32_t num_supported;
    uint32_t current;                        // index into frequency[]
    uint64_t frequency[kMaxNumFrequencies];  // Hz
};
struct rsmi_pcie_bandwidth_t {
    rsmi_frequencies_t transfer_rate;  // transfers per second
    uint32_t lanes[kMaxNumFrequencies];
};
// ROCm SMI 7.0 and later (ROCm 6.0 and later).
struct rsmi_frequencies_v7_t {
    bool has_deep_sleep;
    uint32_t num_supported;
    uint32_t current;
    uint64_t frequency[kMaxNumFrequencies];
};
struct rsmi_pcie_bandwidth_v7_t {
    rsmi_frequencies_v7_t transfer_rate;
    uint32_t lanes[kMaxNumFrequencies];
};

enum rsmi_temperature_metric_t : unsigned {
    RSMI_TEMP_CURRENT = 0,
    RSMI_TEMP_MAX = 1,
    RSMI_TEMP_MIN = 2,
    RSMI_TEMP_MAX_HYST = 3,
    RSMI_TEMP_MIN_HYST = 4,
    RSMI_TEMP_CRITICAL = 5,
    RSMI_TEMP_CRITICAL_HYST = 6,
    RSMI_TEMP_EMERGENCY = 7,
    RSMI_TEMP_EMERGENCY_HYST = 8,
    RSMI_TEMP_CRIT_MIN = 9,
    RSMI_TEMP_CRIT_MIN_HYST = 10,
    RSMI_TEMP_OFFSET = 11,
    RSMI_TEMP_LOWEST = 12,
    RSMI_TEMP_HIGHEST = 13,
};
// The sensor argument of rsmi_dev_temp_metric_get (a uint32_t there).
enum rsmi_temperature_type_t : unsigned {
    RSMI_TEMP_TYPE_EDGE = 0,
    RSMI_TEMP_TYPE_JUNCTION = 1,
    RSMI_TEMP_TYPE_MEMORY = 2,
    RSMI_TEMP_TYPE_HBM_0 = 3,
    RSMI_TEMP_TYPE_HBM_1 = 4,
    RSMI_TEMP_TYPE_HBM_2 = 5,
    RSMI_TEMP_TYPE_HBM_3 = 6,
    RSMI_TEMP_TYPE_INVALID = 0xFFFFFFFF,
};
enum rsmi_clk_type_t : unsigned {
    RSMI_CLK_TYPE_SYS = 0,
    RSMI_CLK_TYPE_DF = 1,
    RSMI_CLK_TYPE_DCEF = 2,
    RSMI_CLK_TYPE_SOC = 3,
    RSMI_CLK_TYPE_MEM = 4,
    RSMI_CLK_TYPE_PCIE = 5,
    RSMI_CLK_INVALID = 0xFFFFFFFF,
};
enum RSMI_IO_LINK_TYPE : unsigned {
    RSMI_IOLINK_TYPE_UNDEFINED = 0,
    RSMI_IOLINK_TYPE_PCIEXPRESS = 1,
    RSMI_IOLINK_TYPE_XGMI = 2,
    RSMI_IOLINK_TYPE_NUMIOLINKTYPES = 3,
    RSMI_IOLINK_TYPE_SIZE = 0xFFFFFFFF,
};
// A KFD process (rsmi_compute_process_info_get): every process with a queue on any AMD GPU.
struct rsmi_process_info_t {
    uint32_t process_id;
    uint32_t pasid;
    uint64_t vram_usage;  // bytes
    uint64_t sdma_usage;  // microseconds
    uint32_t cu_occupancy;
};
struct rsmi_version_t {
    uint32_t major;
    uint32_t minor;
    uint32_t patch;
    const char* build;
};
enum rsmi_sw_component_t : unsigned { RSMI_SW_COMP_DRIVER = 0 };
enum rsmi_xgmi_status_t : unsigned {
    RSMI_XGMI_STATUS_NO_ERRORS = 0,
    RSMI_XGMI_STATUS_ERROR = 1,
    RSMI_XGMI_STATUS_MULTIPLE_ERRORS = 2,
};
enum rsmi_dev_perf_level_t : unsigned {
    RSMI_DEV_PERF_LEVEL_AUTO = 0,
    RSMI_DEV_PERF_LEVEL_LOW = 1,
    RSMI_DEV_PERF_LEVEL_HIGH = 2,
    RSMI_DEV_PERF_LEVEL_MANUAL = 3,
    RSMI_DEV_PERF_LEVEL_STABLE_STD = 4,
    RSMI_DEV_PERF_LEVEL_STABLE_PEAK = 5,
    RSMI_DEV_PERF_LEVEL_STABLE_MIN_MCLK = 6,
    RSMI_DEV_PERF_LEVEL_STABLE_MIN_SCLK = 7,
    RSMI_DEV_PERF_LEVEL_DETERMINISM = 8,
    RSMI_DEV_PERF_LEVEL_UNKNOWN = 0x100,
};
inline constexpr uint64_t kInitFlagAllGpus = 0x1;  // RSMI_INIT_FLAG_ALL_GPUS

using rsmi_init_fn = rsmi_status_t (*)(uint64_t);
using rsmi_shut_down_fn = rsmi_status_t (*)();
using rsmi_num_monitor_devices_fn = rsmi_status_t (*)(uint32_t*);
using rsmi_dev_string_fn = rsmi_status_t (*)(uint32_t, char*, uint32_t);  // serial, VBIOS, brand
using rsmi_dev_name_get_fn = rsmi_status_t (*)(uint32_t, char*, size_t);
using rsmi_dev_u16_fn = rsmi_status_t (*)(uint32_t, uint16_t*);
using rsmi_dev_u32_fn = rsmi_status_t (*)(uint32_t, uint32_t*);
using rsmi_dev_u64_fn = rsmi_status_t (*)(uint32_t, uint64_t*);
using rsmi_dev_memory_fn = rsmi_status_t (*)(uint32_t, rsmi_memory_type_t, uint64_t*);
using rsmi_dev_ecc_count_get_fn = rsmi_status_t (*)(uint32_t, rsmi_gpu_block_t, rsmi_error_count_t*);
using rsmi_dev_memory_reserved_pages_get_fn = rsmi_status_t (*)(uint32_t, uint32_t*, rsmi_retired_page_record_t*);
// Takes rsmi_pcie_bandwidth_t or rsmi_pcie_bandwidth_v7_t, per frequencies_layout_of.
using rsmi_dev_pci_bandwidth_get_fn = rsmi_status_t (*)(uint32_t, rsmi_pcie_bandwidth_t*);
using rsmi_dev_sensor_u64_fn = rsmi_status_t (*)(uint32_t, uint32_t, uint64_t*);  // power, power cap
using rsmi_dev_power_cap_range_get_fn = rsmi_status_t (*)(uint32_t, uint32_t, uint64_t*, uint64_t*);
using rsmi_dev_temp_metric_get_fn = rsmi_status_t (*)(uint32_t, uint32_t, rsmi_temperature_metric_t, int64_t*);
// Takes rsmi_frequencies_t or rsmi_frequencies_v7_t, per frequencies_layout_of.
using rsmi_dev_gpu_clk_freq_get_fn = rsmi_status_t (*)(uint32_t, rsmi_clk_type_t, rsmi_frequencies_t*);
using rsmi_topo_get_link_type_fn = rsmi_status_t (*)(uint32_t, uint32_t, uint64_t*, RSMI_IO_LINK_TYPE*);
using rsmi_topo_pair_u64_fn = rsmi_status_t (*)(uint32_t, uint32_t, uint64_t*);
using rsmi_is_P2P_accessible_fn = rsmi_status_t (*)(uint32_t, uint32_t, bool*);
using rsmi_compute_process_info_get_fn = rsmi_status_t (*)(rsmi_process_info_t*, uint32_t*);
using rsmi_compute_process_gpus_get_fn = rsmi_status_t (*)(uint32_t, uint32_t*, uint32_t*);
using rsmi_version_get_fn = rsmi_status_t (*)(rsmi_version_t*);
using rsmi_version_str_get_fn = rsmi_status_t (*)(rsmi_sw_component_t, char*, uint32_t);
using rsmi_status_string_fn = rsmi_status_t (*)(rsmi_status_t, const char**);
using rsmi_dev_xgmi_error_status_fn = rsmi_status_t (*)(uint32_t, rsmi_xgmi_status_t*);
using rsmi_dev_perf_level_get_fn = rsmi_status_t (*)(uint32_t, rsmi_dev_perf_level_t*);
using rsmi_dev_fan_speed_get_fn = rsmi_status_t (*)(uint32_t, uint32_t, int64_t*);
using rsmi_dev_energy_count_get_fn = rsmi_status_t (*)(uint32_t, uint64_t*, float*, uint64_t*);
using rsmi_dev_pci_throughput_get_fn = rsmi_status_t (*)(uint32_t, uint64_t*, uint64_t*, uint64_t*);
// ROCm SMI 7.x (ROCm 6.x) only: declared from rocm_smi_lib commit a129571 (not in Debian's 5.2).
using rsmi_dev_partition_get_fn = rsmi_status_t (*)(uint32_t, char*, uint32_t);  // compute or memory

}  // namespace gpuvet::rsmi

namespace gpuvet {
// A wrapped ROCm SMI call that got no answer (driver_deadline.hpp): a value ROCm SMI never returns (its
// statuses stop far below it), inside the enum's unsigned range.
inline constexpr unsigned kRocmSmiNoAnswer = 1000;
template <>
struct NoAnswer<rsmi::rsmi_status_t> {
    static rsmi::rsmi_status_t value() { return static_cast<rsmi::rsmi_status_t>(kRocmSmiNoAnswer); }
};
}  // namespace gpuvet

namespace gpuvet {

// Names another library file to load instead (a test double, or /nonexistent).
inline constexpr const char* kEnvLibRocmSmi = "GPUVET_LIBROCM_SMI";

// Which rsmi_frequencies_t the loaded library writes.
enum class RsmiFrequenciesLayout { V5, V7 };
// ROCm SMI 7.0 (ROCm 6.0) added has_deep_sleep; ROCm 5.x reports 5.0.0 and Debian's 5.2 build 1.0.0.
inline RsmiFrequenciesLayout frequencies_layout_of(const rsmi::rsmi_version_t& v) {
    return v.major >= 7 ? RsmiFrequenciesLayout::V7 : RsmiFrequenciesLayout::V5;
}

struct RocmSmiApi {
    rsmi::rsmi_init_fn rsmi_init = nullptr;
    rsmi::rsmi_shut_down_fn rsmi_shut_down = nullptr;
    rsmi::rsmi_num_monitor_devices_fn rsmi_num_monitor_devices = nullptr;

    rsmi::rsmi_status_string_fn rsmi_status_string = nullptr;
    rsmi::rsmi_version_get_fn rsmi_version_get = nullptr;
    rsmi::rsmi_version_str_get_fn rsmi_version_str_get = nullptr;  // the amdgpu kernel driver's version
    rsmi::rsmi_dev_name_get_fn rsmi_dev_name_get = nullptr;
    rsmi::rsmi_dev_string_fn rsmi_dev_brand_get = nullptr;
    rsmi::rsmi_dev_string_fn rsmi_dev_serial_number_get = nullptr;
    rsmi::rsmi_dev_string_fn rsmi_dev_vbios_version_get = nullptr;
    rsmi::rsmi_dev_u16_fn rsmi_dev_id_get = nullptr;
    rsmi::rsmi_dev_u16_fn rsmi_dev_vendor_id_get = nullptr;
    rsmi::rsmi_dev_u16_fn rsmi_dev_subsystem_id_get = nullptr;
    rsmi::rsmi_dev_u16_fn rsmi_dev_subsystem_vendor_id_get = nullptr;
    rsmi::rsmi_dev_u64_fn rsmi_dev_pci_id_get = nullptr;     // BDF packed: domain<<32 | bus<<8 | dev<<3 | fn
    rsmi::rsmi_dev_u64_fn rsmi_dev_unique_id_get = nullptr;  // the ASIC's serial, where the board has none
    rsmi::rsmi_dev_u64_fn rsmi_dev_pci_replay_counter_get = nullptr;
    rsmi::rsmi_dev_u64_fn rsmi_dev_xgmi_hive_id_get = nullptr;
    rsmi::rsmi_dev_u64_fn rsmi_dev_ecc_enabled_get = nullptr;  // mask of rsmi_gpu_block_t
    rsmi::rsmi_dev_u32_fn rsmi_dev_busy_percent_get = nullptr;
    rsmi::rsmi_dev_u32_fn rsmi_dev_memory_busy_percent_get = nullptr;
    rsmi::rsmi_dev_u32_fn rsmi_topo_get_numa_node_number = nullptr;
    rsmi::rsmi_dev_u32_fn rsmi_dev_drm_render_minor_get = nullptr;
    rsmi::rsmi_dev_memory_fn rsmi_dev_memory_total_get = nullptr;
    rsmi::rsmi_dev_memory_fn rsmi_dev_memory_usage_get = nullptr;
    rsmi::rsmi_dev_ecc_count_get_fn rsmi_dev_ecc_count_get = nullptr;
    rsmi::rsmi_dev_memory_reserved_pages_get_fn rsmi_dev_memory_reserved_pages_get = nullptr;
    rsmi::rsmi_dev_pci_bandwidth_get_fn rsmi_dev_pci_bandwidth_get = nullptr;
    rsmi::rsmi_dev_pci_throughput_get_fn rsmi_dev_pci_throughput_get = nullptr;
    rsmi::rsmi_dev_sensor_u64_fn rsmi_dev_power_ave_get = nullptr;  // microwatts
    rsmi::rsmi_dev_sensor_u64_fn rsmi_dev_power_cap_get = nullptr;  // microwatts
    rsmi::rsmi_dev_u64_fn rsmi_dev_power_cap_default_get = nullptr;
    rsmi::rsmi_dev_power_cap_range_get_fn rsmi_dev_power_cap_range_get = nullptr;  // max, min
    rsmi::rsmi_dev_energy_count_get_fn rsmi_dev_energy_count_get = nullptr;
    rsmi::rsmi_dev_temp_metric_get_fn rsmi_dev_temp_metric_get = nullptr;  // millidegrees C
    rsmi::rsmi_dev_gpu_clk_freq_get_fn rsmi_dev_gpu_clk_freq_get = nullptr;
    rsmi::rsmi_dev_perf_level_get_fn rsmi_dev_perf_level_get = nullptr;
    rsmi::rsmi_dev_fan_speed_get_fn rsmi_dev_fan_speed_get = nullptr;
    rsmi::rsmi_dev_xgmi_error_status_fn rsmi_dev_xgmi_error_status = nullptr;
    rsmi::rsmi_topo_get_link_type_fn rsmi_topo_get_link_type = nullptr;
    rsmi::rsmi_topo_pair_u64_fn rsmi_topo_get_link_weight = nullptr;
    rsmi::rsmi_is_P2P_accessible_fn rsmi_is_P2P_accessible = nullptr;
    rsmi::rsmi_compute_process_info_get_fn rsmi_compute_process_info_get = nullptr;
    rsmi::rsmi_compute_process_gpus_get_fn rsmi_compute_process_gpus_get = nullptr;
    rsmi::rsmi_dev_partition_get_fn rsmi_dev_compute_partition_get = nullptr;  // ROCm 6 and later
    rsmi::rsmi_dev_partition_get_fn rsmi_dev_memory_partition_get = nullptr;   // ROCm 6 and later

    std::string path;
    std::string error;
    SymbolResolution symbols;

    bool ok() const { return error.empty(); }
    // Loads through GPUVET_LIBROCM_SMI, else the usual sonames and /opt/rocm/lib, every call under
    // the deadline of driver_lib("ROCm SMI") (driver_deadline.hpp). Never throws.
    static RocmSmiApi load();
    static RocmSmiApi load_file(const std::string& file);
    static RocmSmiApi from_library(const DynLib& lib, DriverLib* deadline = nullptr);
    // The library's own name for a status (rsmi_status_string), else our table's.
    std::string error_name(unsigned code) const;
};

std::span<const SymbolEntry<RocmSmiApi>> rocm_smi_symbol_table();
// The candidates tried in order (newest soname first); GPUVET_LIBROCM_SMI replaces them all.
std::vector<std::string> rocm_smi_candidates();

// "RSMI_STATUS_PERMISSION"; "RSMI_STATUS_<code>" when unknown.
std::string rsmi_status_name(unsigned code);
// A short absent reason for a fact whose call returned `code`.
std::string rsmi_absent_reason(unsigned code);

}  // namespace gpuvet
