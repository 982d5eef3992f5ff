// AMD SMI (libamd_smi.so), the current ROCm management library, loaded at run time. Our own
// declarations of what gpuvet uses, transcribed from amdsmi.h of ROCm/amdsmi at commit
// 0ceca28f4139dced5e9b5739a3f393780d7add48 (library version 24.7.0, ROCm 6.3). No Debian package
// ships that header, so tests/abi/abi_amd_smi.cpp holds these declarations to a checked-in table
// of the header's sizes, offsets and constants (tests/abi/amd_smi_facts.hpp, produced from that
// header by scripts/amd-smi-facts). Names follow amdsmi.h inside namespace gpuvet::amdsmi.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/bindings/dynlib.hpp"
#include "gpu/bindings/symbol_table.hpp"

namespace gpuvet::amdsmi {

using amdsmi_socket_handle = void*;
using amdsmi_processor_handle = void*;

enum amdsmi_status_t : unsigned {
    AMDSMI_STATUS_SUCCESS = 0,
    AMDSMI_STATUS_INVAL = 1,
    AMDSMI_STATUS_NOT_SUPPORTED = 2,
    AMDSMI_STATUS_NOT_YET_IMPLEMENTED = 3,
    AMDSMI_STATUS_FAIL_LOAD_MODULE = 4,
    AMDSMI_STATUS_FAIL_LOAD_SYMBOL = 5,
    AMDSMI_STATUS_DRM_ERROR = 6,
    AMDSMI_STATUS_API_FAILED = 7,
    AMDSMI_STATUS_TIMEOUT = 8,
    AMDSMI_STATUS_RETRY = 9,
    AMDSMI_STATUS_NO_PERM = 10,
    AMDSMI_STATUS_INTERRUPT = 11,
    AMDSMI_STATUS_IO = 12,
    AMDSMI_STATUS_ADDRESS_FAULT = 13,
    AMDSMI_STATUS_FILE_ERROR = 14,
    AMDSMI_STATUS_OUT_OF_RESOURCES = 15,
    AMDSMI_STATUS_INTERNAL_EXCEPTION = 16,
    AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS = 17,
    AMDSMI_STATUS_INIT_ERROR = 18,
    AMDSMI_STATUS_REFCOUNT_OVERFLOW = 19,
    AMDSMI_STATUS_BUSY = 30,
    AMDSMI_STATUS_NOT_FOUND = 31,
    AMDSMI_STATUS_NOT_INIT = 32,
    AMDSMI_STATUS_NO_SLOT = 33,
    AMDSMI_STATUS_DRIVER_NOT_LOADED = 34,
    AMDSMI_STATUS_NO_DATA = 40,
    AMDSMI_STATUS_INSUFFICIENT_SIZE = 41,
    AMDSMI_STATUS_UNEXPECTED_SIZE = 42,
    AMDSMI_STATUS_UNEXPECTED_DATA = 43,
    AMDSMI_STATUS_NON_AMD_CPU = 44,
    AMDSMI_STATUS_NO_ENERGY_DRV = 45,
    AMDSMI_STATUS_NO_MSR_DRV = 46,
    AMDSMI_STATUS_NO_HSMP_DRV = 47,
    AMDSMI_STATUS_NO_HSMP_SUP = 48,
    AMDSMI_STATUS_NO_HSMP_MSG_SUP = 49,
    AMDSMI_STATUS_HSMP_TIMEOUT = 50,
    AMDSMI_STATUS_NO_DRV = 51,
    AMDSMI_STATUS_FILE_NOT_FOUND = 52,
    AMDSMI_STATUS_ARG_PTR_NULL = 53,
    AMDSMI_STATUS_AMDGPU_RESTART_ERR = 54,
    AMDSMI_STATUS_SETTING_UNAVAILABLE = 55,
    AMDSMI_STATUS_MAP_ERROR = 0xFFFFFFFE,
    AMDSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF,
};

inline constexpr uint64_t kInitAmdGpus = 1u << 1;  // AMDSMI_INIT_AMD_GPUS

enum processor_type_t : unsigned {
    AMDSMI_PROCESSOR_TYPE_UNKNOWN = 0,
    AMDSMI_PROCESSOR_TYPE_AMD_GPU = 1,
    AMDSMI_PROCESSOR_TYPE_AMD_CPU = 2,
    AMDSMI_PROCESSOR_TYPE_NON_AMD_GPU = 3,
    AMDSMI_PROCESSOR_TYPE_NON_AMD_CPU = 4,
    AMDSMI_PROCESSOR_TYPE_AMD_CPU_CORE = 5,
    AMDSMI_PROCESSOR_TYPE_AMD_APU = 6,
};

inline constexpr size_t kMaxStringLength = 64;         // AMDSMI_MAX_STRING_LENGTH
inline constexpr size_t kNormalStringLength = 32;      // AMDSMI_NORMAL_STRING_LENGTH
inline constexpr size_t k256Length = 256;              // AMDSMI_256_LENGTH
inline constexpr size_t kMaxDateLength = 32;           // AMDSMI_MAX_DATE_LENGTH
inline constexpr size_t kGpuUuidSize = 38;             // AMDSMI_GPU_UUID_SIZE
inline constexpr size_t kMaxNumXgmiPhysicalLink = 64;  // AMDSMI_MAX_NUM_XGMI_PHYSICAL_LINK

struct amdsmi_version_t {
    uint32_t year;
    uint32_t major;
    uint32_t minor;
    uint32_t release;
    const char* build;
};
struct amdsmi_driver_info_t {
    char driver_version[kMaxStringLength];
    char driver_date[kMaxStringLength];
    char driver_name[kMaxStringLength];
};
struct amdsmi_asic_info_t {
    char market_name[k256Length];
    uint32_t vendor_id;
    char vendor_name[kMaxStringLength];
    uint32_t subvendor_id;
    uint64_t device_id;
    uint32_t rev_id;
    char asic_serial[kNormalStringLength];
    uint32_t oam_id;
    uint32_t num_of_compute_units;
    uint64_t target_graphics_version;  // gfx target as a number: 942 for gfx942 (hex digits for letters)
    uint32_t reserved[15];
};
struct amdsmi_board_info_t {
    char model_number[k256Length];
    char product_serial[kNormalStringLength];
    char fru_id[kNormalStringLength];
    char product_name[k256Length];
    char manufacturer_name[kMaxStringLength];
    uint32_t reserved[32];
};
struct amdsmi_vbios_info_t {
    char name[kMaxStringLength];
    char build_date[kMaxDateLength];
    char part_number[kMaxStringLength];
    char version[kNormalStringLength];
    uint32_t reserved[16];
};
enum amdsmi_memory_type_t : unsigned {
    AMDSMI_MEM_TYPE_VRAM = 0,
    AMDSMI_MEM_TYPE_VIS_VRAM = 1,
    AMDSMI_MEM_TYPE_GTT = 2
};

struct amdsmi_error_count_t {
    uint64_t correctable_count;
    uint64_t uncorrectable_count;
    uint64_t deferred_count;
    uint64_t reserved[5];
};
enum amdsmi_gpu_block_t : unsigned long {
    AMDSMI_GPU_BLOCK_INVALID = 0x0,
    AMDSMI_GPU_BLOCK_UMC = 0x1,
    AMDSMI_GPU_BLOCK_SDMA = 0x2,
    AMDSMI_GPU_BLOCK_GFX = 0x4,
    AMDSMI_GPU_BLOCK_MMHUB = 0x8,
    AMDSMI_GPU_BLOCK_ATHUB = 0x10,
    AMDSMI_GPU_BLOCK_PCIE_BIF = 0x20,
    AMDSMI_GPU_BLOCK_HDP = 0x40,
    AMDSMI_GPU_BLOCK_XGMI_WAFL = 0x80,
    AMDSMI_GPU_BLOCK_DF = 0x100,
    AMDSMI_GPU_BLOCK_SMN = 0x200,
    AMDSMI_GPU_BLOCK_SEM = 0x400,
    AMDSMI_GPU_BLOCK_MP0 = 0x800,
    AMDSMI_GPU_BLOCK_MP1 = 0x1000,
    AMDSMI_GPU_BLOCK_FUSE = 0x2000,
    AMDSMI_GPU_BLOCK_MCA = 0x4000,
    AMDSMI_GPU_BLOCK_VCN = 0x8000,
    AMDSMI_GPU_BLOCK_JPEG = 0x10000,
    AMDSMI_GPU_BLOCK_IH = 0x20000,
    AMDSMI_GPU_BLOCK_MPIO = 0x40000,
    AMDSMI_GPU_BLOCK_RESERVED = 0x8000000000000000,
};
enum amdsmi_memory_page_status_t : unsigned {
    AMDSMI_MEM_PAGE_STATUS_RESERVED = 0,
    AMDSMI_MEM_PAGE_STATUS_PENDING = 1,
    AMDSMI_MEM_PAGE_STATUS_UNRESERVABLE = 2,
};
struct amdsmi_retired_page_record_t {
    uint64_t page_address;
    uint64_t page_size;
    amdsmi_memory_page_status_t status;
};

enum amdsmi_card_form_factor_t : unsigned {
    AMDSMI_CARD_FORM_FACTOR_PCIE = 0,
    AMDSMI_CARD_FORM_FACTOR_OAM = 1,
    AMDSMI_CARD_FORM_FACTOR_CEM = 2,
    AMDSMI_CARD_FORM_FACTOR_UNKNOWN = 3,
};
struct amdsmi_pcie_info_t {
    struct pcie_static_ {
        uint16_t max_pcie_width;
        uint32_t max_pcie_speed;          // MT/s: 32000 for Gen5
        uint32_t pcie_interface_version;  // the PCIe generation
        amdsmi_card_form_factor_t slot_type;
        uint64_t reserved[10];
    } pcie_static;
    struct pcie_metric_ {
        uint16_t pcie_width;
        uint32_t pcie_speed;      // MT/s
        uint32_t pcie_bandwidth;  // Mb/s, momentary
        uint64_t pcie_replay_count;
        uint64_t pcie_l0_to_recovery_count;
        uint64_t pcie_replay_roll_over_count;
        uint64_t pcie_nak_sent_count;
        uint64_t pcie_nak_received_count;
        uint32_t pcie_lc_perf_other_end_recovery_count;
        uint64_t reserved[12];
    } pcie_metric;
    uint64_t reserved[32];
};
enum amdsmi_io_link_type_t : unsigned {
    AMDSMI_IOLINK_TYPE_UNDEFINED = 0,
    AMDSMI_IOLINK_TYPE_PCIEXPRESS = 1,
    AMDSMI_IOLINK_TYPE_XGMI = 2,
    AMDSMI_IOLINK_TYPE_NUMIOLINKTYPES = 3,
    AMDSMI_IOLINK_TYPE_SIZE = 0xFFFFFFFF,
};
struct amdsmi_power_cap_info_t {
    uint64_t power_cap;  // microwatts
    uint64_t default_power_cap;
    uint64_t dpm_cap;
    uint64_t min_power_cap;
    uint64_t max_power_cap;
    uint64_t reserved[3];
};
struct amdsmi_power_info_t {
    uint32_t current_socket_power;  // watts
    uint32_t average_socket_power;  // watts
    uint32_t gfx_voltage;
    uint32_t soc_voltage;
    uint32_t mem_voltage;
    uint32_t power_limit;
    uint32_t reserved[11];
};
enum amdsmi_temperature_type_t : unsigned {
    AMDSMI_TEMPERATURE_TYPE_EDGE = 0,
    AMDSMI_TEMPERATURE_TYPE_HOTSPOT = 1,  // = JUNCTION
    AMDSMI_TEMPERATURE_TYPE_VRAM = 2,
    AMDSMI_TEMPERATURE_TYPE_HBM_0 = 3,
    AMDSMI_TEMPERATURE_TYPE_HBM_1 = 4,
    AMDSMI_TEMPERATURE_TYPE_HBM_2 = 5,
    AMDSMI_TEMPERATURE_TYPE_HBM_3 = 6,
    AMDSMI_TEMPERATURE_TYPE_PLX = 7,
};
enum amdsmi_temperature_metric_t : unsigned {
    AMDSMI_TEMP_CURRENT = 0,
    AMDSMI_TEMP_MAX = 1,
    AMDSMI_TEMP_MIN = 2,
    AMDSMI_TEMP_MAX_HYST = 3,
    AMDSMI_TEMP_MIN_HYST = 4,
    AMDSMI_TEMP_CRITICAL = 5,
    AMDSMI_TEMP_CRITICAL_HYST = 6,
    AMDSMI_TEMP_EMERGENCY = 7,
    AMDSMI_TEMP_EMERGENCY_HYST = 8,
    AMDSMI_TEMP_CRIT_MIN = 9,
    AMDSMI_TEMP_CRIT_MIN_HYST = 10,
    AMDSMI_TEMP_OFFSET = 11,
    AMDSMI_TEMP_LOWEST = 12,
    AMDSMI_TEMP_HIGHEST = 13,
};
enum amdsmi_clk_type_t : unsigned {
    AMDSMI_CLK_TYPE_SYS = 0,  // = GFX
    AMDSMI_CLK_TYPE_DF = 1,
    AMDSMI_CLK_TYPE_DCEF = 2,
    AMDSMI_CLK_TYPE_SOC = 3,
    AMDSMI_CLK_TYPE_MEM = 4,
    AMDSMI_CLK_TYPE_PCIE = 5,
    AMDSMI_CLK_TYPE_VCLK0 = 6,
    AMDSMI_CLK_TYPE_VCLK1 = 7,
    AMDSMI_CLK_TYPE_DCLK0 = 8,
    AMDSMI_CLK_TYPE_DCLK1 = 9,
};
struct amdsmi_clk_info_t {
    uint32_t clk;  // MHz
    uint32_t min_clk;
    uint32_t max_clk;
    uint8_t clk_locked;
    uint8_t clk_deep_sleep;
    uint32_t reserved[4];
};
struct amdsmi_engine_usage_t {
    uint32_t gfx_activity;  // percent
    uint32_t umc_activity;
    uint32_t mm_activity;
    uint32_t reserved[13];
};
using amdsmi_process_handle_t = uint32_t;
struct amdsmi_proc_info_t {
    char name[kNormalStringLength];
    amdsmi_process_handle_t pid;
    uint64_t mem;  // bytes
    struct engine_usage_ {
        uint64_t gfx;  // nanoseconds
        uint64_t enc;
        uint32_t reserved[12];
    } engine_usage;
    struct memory_usage_ {
        uint64_t gtt_mem;
        uint64_t cpu_mem;
        uint64_t vram_mem;
        uint32_t reserved[10];
    } memory_usage;
    char container_name[kNormalStringLength];
    uint32_t reserved[4];
};
struct amdsmi_kfd_info_t {
    uint64_t kfd_id;
    uint32_t node_id;
    uint32_t current_partition_id;
    uint32_t reserved[12];
};
enum amdsmi_link_type_t : unsigned {
    AMDSMI_LINK_TYPE_INTERNAL = 0,
    AMDSMI_LINK_TYPE_XGMI = 1,
    AMDSMI_LINK_TYPE_PCIE = 2,
    AMDSMI_LINK_TYPE_NOT_APPLICABLE = 3,
    AMDSMI_LINK_TYPE_UNKNOWN = 4,
};
// The PCI address as amdsmi.h's union: function 3 bits, device 5, bus 8, domain 48.
using amdsmi_bdf_t = uint64_t;
struct amdsmi_link_metrics_t {
    uint32_t num_links;
    struct _links {
        amdsmi_bdf_t bdf;        // the far end
        uint32_t bit_rate;       // Gb/s
        uint32_t max_bandwidth;  // Gb/s
        amdsmi_link_type_t link_type;
        uint64_t read;   // KB, cumulative
        uint64_t write;  // KB, cumulative
        uint64_t reserved[2];
    } links[kMaxNumXgmiPhysicalLink];
    uint64_t reserved[7];
};
enum amdsmi_xgmi_status_t : unsigned {
    AMDSMI_XGMI_STATUS_NO_ERRORS = 0,
    AMDSMI_XGMI_STATUS_ERROR = 1,
    AMDSMI_XGMI_STATUS_MULTIPLE_ERRORS = 2,
};
struct amdsmi_xgmi_info_t {
    uint8_t xgmi_lanes;
    uint64_t xgmi_hive_id;
    uint64_t xgmi_node_id;
    uint32_t index;
    uint32_t reserved[9];
};
enum amdsmi_vram_type_t : unsigned {
    AMDSMI_VRAM_TYPE_UNKNOWN = 0,
    AMDSMI_VRAM_TYPE_HBM = 1,
    AMDSMI_VRAM_TYPE_HBM2 = 2,
    AMDSMI_VRAM_TYPE_HBM2E = 3,
    AMDSMI_VRAM_TYPE_HBM3 = 4,
    AMDSMI_VRAM_TYPE_DDR2 = 10,
    AMDSMI_VRAM_TYPE_DDR3 = 11,
    AMDSMI_VRAM_TYPE_DDR4 = 12,
    AMDSMI_VRAM_TYPE_GDDR1 = 17,
    AMDSMI_VRAM_TYPE_GDDR2 = 18,
    AMDSMI_VRAM_TYPE_GDDR3 = 19,
    AMDSMI_VRAM_TYPE_GDDR4 = 20,
    AMDSMI_VRAM_TYPE_GDDR5 = 21,
    AMDSMI_VRAM_TYPE_GDDR6 = 22,
    AMDSMI_VRAM_TYPE_GDDR7 = 23,
};
using amdsmi_vram_vendor_type_t = unsigned;  // an enum of 16 vendors in amdsmi.h; only printed
struct amdsmi_vram_info_t {
    amdsmi_vram_type_t vram_type;
    amdsmi_vram_vendor_type_t vram_vendor;
    uint64_t vram_size;  // MB
    uint32_t vram_bit_width;
    uint64_t reserved[5];
};

using H = amdsmi_processor_handle;
using amdsmi_init_fn = amdsmi_status_t (*)(uint64_t);
using amdsmi_shut_down_fn = amdsmi_status_t (*)();
using amdsmi_get_socket_handles_fn = amdsmi_status_t (*)(uint32_t*, amdsmi_socket_handle*);
using amdsmi_get_processor_handles_fn = amdsmi_status_t (*)(amdsmi_socket_handle, uint32_t*, amdsmi_processor_handle*);
using amdsmi_get_processor_type_fn = amdsmi_status_t (*)(H, processor_type_t*);
using amdsmi_status_code_to_string_fn = amdsmi_status_t (*)(amdsmi_status_t, const char**);
using amdsmi_get_lib_version_fn = amdsmi_status_t (*)(amdsmi_version_t*);
using amdsmi_get_gpu_driver_info_fn = amdsmi_status_t (*)(H, amdsmi_driver_info_t*);
using amdsmi_get_gpu_asic_info_fn = amdsmi_status_t (*)(H, amdsmi_asic_info_t*);
using amdsmi_get_gpu_board_info_fn = amdsmi_status_t (*)(H, amdsmi_board_info_t*);
using amdsmi_get_gpu_vbios_info_fn = amdsmi_status_t (*)(H, amdsmi_vbios_info_t*);
using amdsmi_get_gpu_u64_fn = amdsmi_status_t (*)(H, uint64_t*);  // BDF, ECC mask, replay counter
using amdsmi_get_gpu_u16_fn = amdsmi_status_t (*)(H, uint16_t*);  // device id, subsystem id
using amdsmi_get_gpu_u32_fn = amdsmi_status_t (*)(H, uint32_t*);  // NUMA node
using amdsmi_get_gpu_device_uuid_fn = amdsmi_status_t (*)(H, unsigned int*, char*);
using amdsmi_get_gpu_memory_fn = amdsmi_status_t (*)(H, amdsmi_memory_type_t, uint64_t*);
using amdsmi_get_gpu_total_ecc_count_fn = amdsmi_status_t (*)(H, amdsmi_error_count_t*);
using amdsmi_get_gpu_ecc_count_fn = amdsmi_status_t (*)(H, amdsmi_gpu_block_t, amdsmi_error_count_t*);
using amdsmi_get_gpu_bad_page_info_fn = amdsmi_status_t (*)(H, uint32_t*, amdsmi_retired_page_record_t*);
using amdsmi_get_pcie_info_fn = amdsmi_status_t (*)(H, amdsmi_pcie_info_t*);
using amdsmi_topo_get_link_type_fn = amdsmi_status_t (*)(H, H, uint64_t*, amdsmi_io_link_type_t*);
using amdsmi_topo_get_link_weight_fn = amdsmi_status_t (*)(H, H, uint64_t*);
using amdsmi_is_P2P_accessible_fn = amdsmi_status_t (*)(H, H, bool*);
using amdsmi_get_power_cap_info_fn = amdsmi_status_t (*)(H, uint32_t, amdsmi_power_cap_info_t*);
using amdsmi_get_power_info_fn = amdsmi_status_t (*)(H, amdsmi_power_info_t*);
using amdsmi_get_temp_metric_fn = amdsmi_status_t (*)(H, amdsmi_temperature_type_t, amdsmi_temperature_metric_t,
                                                      int64_t*);
using amdsmi_get_clock_info_fn = amdsmi_status_t (*)(H, amdsmi_clk_type_t, amdsmi_clk_info_t*);
using amdsmi_get_gpu_activity_fn = amdsmi_status_t (*)(H, amdsmi_engine_usage_t*);
using amdsmi_get_gpu_process_list_fn = amdsmi_status_t (*)(H, uint32_t*, amdsmi_proc_info_t*);
using amdsmi_get_gpu_partition_fn = amdsmi_status_t (*)(H, char*, uint32_t);  // compute or memory partition
using amdsmi_get_gpu_kfd_info_fn = amdsmi_status_t (*)(H, amdsmi_kfd_info_t*);
using amdsmi_get_gpu_vram_info_fn = amdsmi_status_t (*)(H, amdsmi_vram_info_t*);
// The driver's GPU metrics table (amdsmi_get_gpu_metrics_info). The struct grows with the table's
// version, and fields a GPU or driver does not fill hold their type's maximum (amd-smi prints N/A).
// A newer library may write a longer struct than this one: callers pass a buffer with room to
// spare (kGpuMetricsBufferBytes), filled with 0xFF first, so an unwritten field reads as N/A too.
inline constexpr unsigned kNumHbmInstances = 4;  // AMDSMI_NUM_HBM_INSTANCES
inline constexpr unsigned kMaxNumVcn = 4;        // AMDSMI_MAX_NUM_VCN
inline constexpr unsigned kMaxNumClks = 4;       // AMDSMI_MAX_NUM_CLKS
inline constexpr unsigned kMaxNumXgmiLinks = 8;  // AMDSMI_MAX_NUM_XGMI_LINKS
inline constexpr unsigned kMaxNumGfxClks = 8;    // AMDSMI_MAX_NUM_GFX_CLKS
inline constexpr unsigned kMaxNumJpeg = 32;      // AMDSMI_MAX_NUM_JPEG
inline constexpr unsigned kMaxNumXcc = 8;        // AMDSMI_MAX_NUM_XCC
inline constexpr unsigned kMaxNumXcp = 8;        // AMDSMI_MAX_NUM_XCP
struct amd_metrics_table_header_t {
    uint16_t structure_size;
    uint8_t format_revision;
    uint8_t content_revision;
};
struct amdsmi_gpu_xcp_metrics_t {
    uint32_t gfx_busy_inst[kMaxNumXcc];
    uint16_t jpeg_busy[kMaxNumJpeg];
    uint16_t vcn_busy[kMaxNumVcn];
    uint64_t gfx_busy_acc[kMaxNumXcc];
};
struct amdsmi_gpu_metrics_t {
    amd_metrics_table_header_t common_header;
    uint16_t temperature_edge, temperature_hotspot, temperature_mem;  // C
    uint16_t temperature_vrgfx, temperature_vrsoc, temperature_vrmem;
    uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;  // %
    uint16_t average_socket_power;                                             // W
    uint64_t energy_accumulator;
    uint64_t system_clock_counter;  // ns
    uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency;
    uint16_t average_vclk0_frequency, average_dclk0_frequency, average_vclk1_frequency, average_dclk1_frequency;
    uint16_t current_gfxclk, current_socclk, current_uclk, current_vclk0, current_dclk0, current_vclk1, current_dclk1;
    uint32_t throttle_status;  // the ASIC's own bits (v1.0)
    uint16_t current_fan_speed;
    uint16_t pcie_link_width, pcie_link_speed;  // lanes, 0.1 GT/s
    uint32_t gfx_activity_acc, mem_activity_acc;
    uint16_t temperature_hbm[kNumHbmInstances];
    uint64_t firmware_timestamp;
    uint16_t voltage_soc, voltage_gfx, voltage_mem;
    uint64_t indep_throttle_status;  // ASIC-independent bits (v1.3): core/amd_throttle.hpp
    uint16_t current_socket_power;
    uint16_t vcn_activity[kMaxNumVcn];
    uint32_t gfxclk_lock_status;
    uint16_t xgmi_link_width, xgmi_link_speed;
    uint64_t pcie_bandwidth_acc, pcie_bandwidth_inst;
    uint64_t pcie_l0_to_recov_count_acc, pcie_replay_count_acc, pcie_replay_rover_count_acc;
    uint64_t xgmi_read_data_acc[kMaxNumXgmiLinks];
    uint64_t xgmi_write_data_acc[kMaxNumXgmiLinks];
    uint16_t current_gfxclks[kMaxNumGfxClks];
    uint16_t current_socclks[kMaxNumClks];
    uint16_t current_vclk0s[kMaxNumClks];
    uint16_t current_dclk0s[kMaxNumClks];
    uint16_t jpeg_activity[kMaxNumJpeg];
    uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
    // v1.6: throttle residencies; PVIOL/TVIOL % = residency difference * 100 / counter difference.
    uint64_t accumulation_counter;
    uint64_t prochot_residency_acc, ppt_residency_acc, socket_thm_residency_acc, vr_thm_residency_acc,
        hbm_thm_residency_acc;
    uint16_t num_partition;
    amdsmi_gpu_xcp_metrics_t xcp_stats[kMaxNumXcp];
    uint32_t pcie_lc_perf_other_end_recovery;
};
// Room for metrics tables of newer libraries (the struct only grows at its end).
inline constexpr std::size_t kGpuMetricsBufferBytes = 4 * sizeof(amdsmi_gpu_metrics_t);
using amdsmi_get_gpu_metrics_info_fn = amdsmi_status_t (*)(H, amdsmi_gpu_metrics_t*);

using amdsmi_get_link_metrics_fn = amdsmi_status_t (*)(H, amdsmi_link_metrics_t*);
using amdsmi_get_xgmi_info_fn = amdsmi_status_t (*)(H, amdsmi_xgmi_info_t*);
using amdsmi_gpu_xgmi_error_status_fn = amdsmi_status_t (*)(H, amdsmi_xgmi_status_t*);
using amdsmi_get_gpu_fan_speed_fn = amdsmi_status_t (*)(H, uint32_t, int64_t*);
using amdsmi_get_energy_count_fn = amdsmi_status_t (*)(H, uint64_t*, float*, uint64_t*);

}  // namespace gpuvet::amdsmi

namespace gpuvet {
// A wrapped AMD SMI call that got no answer (driver_deadline.hpp): a value AMD SMI never returns (its
// statuses stop far below it), inside the enum's unsigned range.
inline constexpr unsigned kAmdSmiNoAnswer = 1000;
template <>
struct NoAnswer<amdsmi::amdsmi_status_t> {
    static amdsmi::amdsmi_status_t value() { return static_cast<amdsmi::amdsmi_status_t>(kAmdSmiNoAnswer); }
};
}  // namespace gpuvet

namespace gpuvet {

// Names another library file to load instead (a test double, or /nonexistent).
inline constexpr const char* kEnvLibAmdSmi = "GPUVET_LIBAMD_SMI";

struct AmdSmiApi {
    amdsmi::amdsmi_init_fn amdsmi_init = nullptr;
    amdsmi::amdsmi_shut_down_fn amdsmi_shut_down = nullptr;
    amdsmi::amdsmi_get_socket_handles_fn amdsmi_get_socket_handles = nullptr;
    amdsmi::amdsmi_get_processor_handles_fn amdsmi_get_processor_handles = nullptr;

    amdsmi::amdsmi_get_processor_type_fn amdsmi_get_processor_type = nullptr;
    amdsmi::amdsmi_status_code_to_string_fn amdsmi_status_code_to_string = nullptr;
    amdsmi::amdsmi_get_lib_version_fn amdsmi_get_lib_version = nullptr;
    amdsmi::amdsmi_get_gpu_driver_info_fn amdsmi_get_gpu_driver_info = nullptr;
    amdsmi::amdsmi_get_gpu_asic_info_fn amdsmi_get_gpu_asic_info = nullptr;
    amdsmi::amdsmi_get_gpu_board_info_fn amdsmi_get_gpu_board_info = nullptr;
    amdsmi::amdsmi_get_gpu_vbios_info_fn amdsmi_get_gpu_vbios_info = nullptr;
    amdsmi::amdsmi_get_gpu_u64_fn amdsmi_get_gpu_bdf_id = nullptr;
    amdsmi::amdsmi_get_gpu_u16_fn amdsmi_get_gpu_id = nullptr;
    amdsmi::amdsmi_get_gpu_u16_fn amdsmi_get_gpu_subsystem_id = nullptr;
    amdsmi::amdsmi_get_gpu_device_uuid_fn amdsmi_get_gpu_device_uuid = nullptr;
    amdsmi::amdsmi_get_gpu_memory_fn amdsmi_get_gpu_memory_total = nullptr;
    amdsmi::amdsmi_get_gpu_memory_fn amdsmi_get_gpu_memory_usage = nullptr;
    amdsmi::amdsmi_get_gpu_vram_info_fn amdsmi_get_gpu_vram_info = nullptr;
    amdsmi::amdsmi_get_gpu_total_ecc_count_fn amdsmi_get_gpu_total_ecc_count = nullptr;
    amdsmi::amdsmi_get_gpu_ecc_count_fn amdsmi_get_gpu_ecc_count = nullptr;
    amdsmi::amdsmi_get_gpu_u64_fn amdsmi_get_gpu_ecc_enabled = nullptr;  // mask of amdsmi_gpu_block_t
    amdsmi::amdsmi_get_gpu_bad_page_info_fn amdsmi_get_gpu_bad_page_info = nullptr;
    amdsmi::amdsmi_get_pcie_info_fn amdsmi_get_pcie_info = nullptr;
    amdsmi::amdsmi_get_gpu_u64_fn amdsmi_get_gpu_pci_replay_counter = nullptr;
    amdsmi::amdsmi_topo_get_link_type_fn amdsmi_topo_get_link_type = nullptr;
    amdsmi::amdsmi_topo_get_link_weight_fn amdsmi_topo_get_link_weight = nullptr;
    amdsmi::amdsmi_is_P2P_accessible_fn amdsmi_is_P2P_accessible = nullptr;
    amdsmi::amdsmi_get_gpu_u32_fn amdsmi_topo_get_numa_node_number = nullptr;
    amdsmi::amdsmi_get_link_metrics_fn amdsmi_get_link_metrics = nullptr;
    amdsmi::amdsmi_get_xgmi_info_fn amdsmi_get_xgmi_info = nullptr;
    amdsmi::amdsmi_gpu_xgmi_error_status_fn amdsmi_gpu_xgmi_error_status = nullptr;
    amdsmi::amdsmi_get_power_cap_info_fn amdsmi_get_power_cap_info = nullptr;
    amdsmi::amdsmi_get_power_info_fn amdsmi_get_power_info = nullptr;
    amdsmi::amdsmi_get_energy_count_fn amdsmi_get_energy_count = nullptr;
    amdsmi::amdsmi_get_temp_metric_fn amdsmi_get_temp_metric = nullptr;  // degrees C
    amdsmi::amdsmi_get_clock_info_fn amdsmi_get_clock_info = nullptr;
    amdsmi::amdsmi_get_gpu_activity_fn amdsmi_get_gpu_activity = nullptr;
    amdsmi::amdsmi_get_gpu_fan_speed_fn amdsmi_get_gpu_fan_speed = nullptr;
    amdsmi::amdsmi_get_gpu_process_list_fn amdsmi_get_gpu_process_list = nullptr;
    amdsmi::amdsmi_get_gpu_partition_fn amdsmi_get_gpu_compute_partition = nullptr;
    amdsmi::amdsmi_get_gpu_partition_fn amdsmi_get_gpu_memory_partition = nullptr;
    amdsmi::amdsmi_get_gpu_kfd_info_fn amdsmi_get_gpu_kfd_info = nullptr;
    // Its struct's size depends on the library's version: passed as is, the caller's buffer has room.
    amdsmi::amdsmi_get_gpu_metrics_info_fn amdsmi_get_gpu_metrics_info = nullptr;

    std::string path;
    std::string error;
    SymbolResolution symbols;
    DriverLib* deadline = nullptr;  // the calls' deadline (driver_deadline.hpp); none: called directly

    bool ok() const { return error.empty(); }
    // Loads through GPUVET_LIBAMD_SMI, else the usual sonames and /opt/rocm/lib, every call under the
    // deadline of amd_smi_driver_lib(). Never throws.
    static AmdSmiApi load();
    static AmdSmiApi load_file(const std::string& file);
    static AmdSmiApi from_library(const DynLib& lib, DriverLib* deadline = nullptr);
    // The library's own name for a status (amdsmi_status_code_to_string), else our table's.
    std::string error_name(unsigned code) const;
};

std::span<const SymbolEntry<AmdSmiApi>> amd_smi_symbol_table();
// The deadline state of AMD SMI's calls: a GPU is named by its processor handle, recorded by the
// session in the order it lists them.
DriverLib& amd_smi_driver_lib();
std::vector<std::string> amd_smi_candidates();

// "AMDSMI_STATUS_NO_PERM"; "AMDSMI_STATUS_<code>" when unknown.
std::string amdsmi_status_name(unsigned code);
// A short absent reason for a fact whose call returned `code`.
std::string amdsmi_absent_reason(unsigned code);

}  // namespace gpuvet
