#include "gpu/bindings/rocm_smi_api.hpp"

namespace gpuvet {

// A call names its GPU by its first argument, the device index, except these two.
template <>
struct DriverHooks<&RocmSmiApi::rsmi_init> {
    static int gpu(DriverLib&, uint64_t) { return -1; }  // flags
    template <class R, class... A>
    static void after(DriverLib&, int, R, A...) {}
};
template <>
struct DriverHooks<&RocmSmiApi::rsmi_compute_process_gpus_get> {
    static int gpu(DriverLib&, uint32_t, uint32_t*, uint32_t*) { return -1; }  // a process id
    template <class R, class... A>
    static void after(DriverLib&, int, R, A...) {}
};

// The arrays ROCm SMI writes, with the in-out count of what they can take (driver_deadline.hpp).
// The frequency and bandwidth structs changed size in ROCm SMI 7 (frequencies_layout_of): the
// caller's own struct is passed, which it must keep alive past a call that gets no answer.
template <>
struct DriverArgs<&RocmSmiApi::rsmi_dev_memory_reserved_pages_get> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&RocmSmiApi::rsmi_compute_process_info_get> : ArrayArgs<1, 0> {};
template <>
struct DriverArgs<&RocmSmiApi::rsmi_compute_process_gpus_get> : ArrayArgs<2, 1> {};
template <>
struct DriverArgs<&RocmSmiApi::rsmi_dev_gpu_clk_freq_get> : AsIsArgs<2> {};
template <>
struct DriverArgs<&RocmSmiApi::rsmi_dev_pci_bandwidth_get> : AsIsArgs<1> {};

namespace {

using A = RocmSmiApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <auto M>
constexpr void (*set)(RocmSmiApi&, void*, const char*, DriverLib*) = &assign_member<M, RocmSmiApi>;

// ROCm SMI never versioned a symbol name: one name per row.
const SymbolEntry<RocmSmiApi> kTable[] = {
    {{"rsmi_init"}, R, set<&A::rsmi_init>},
    {{"rsmi_shut_down"}, R, set<&A::rsmi_shut_down>},
    {{"rsmi_num_monitor_devices"}, R, set<&A::rsmi_num_monitor_devices>},
    {{"rsmi_status_string"}, O, set<&A::rsmi_status_string>},
    {{"rsmi_version_get"}, O, set<&A::rsmi_version_get>},
    {{"rsmi_version_str_get"}, O, set<&A::rsmi_version_str_get>},
    {{"rsmi_dev_name_get"}, O, set<&A::rsmi_dev_name_get>},
    {{"rsmi_dev_brand_get"}, O, set<&A::rsmi_dev_brand_get>},
    {{"rsmi_dev_serial_number_get"}, O, set<&A::rsmi_dev_serial_number_get>},
    {{"rsmi_dev_vbios_version_get"}, O, set<&A::rsmi_dev_vbios_version_get>},
    {{"rsmi_dev_id_get"}, O, set<&A::rsmi_dev_id_get>},
    {{"rsmi_dev_vendor_id_get"}, O, set<&A::rsmi_dev_vendor_id_get>},
    {{"rsmi_dev_subsystem_id_get"}, O, set<&A::rsmi_dev_subsystem_id_get>},
    {{"rsmi_dev_subsystem_vendor_id_get"}, O, set<&A::rsmi_dev_subsystem_vendor_id_get>},
    {{"rsmi_dev_pci_id_get"}, O, set<&A::rsmi_dev_pci_id_get>},
    {{"rsmi_dev_unique_id_get"}, O, set<&A::rsmi_dev_unique_id_get>},
    {{"rsmi_dev_pci_replay_counter_get"}, O, set<&A::rsmi_dev_pci_replay_counter_get>},
    {{"rsmi_dev_xgmi_hive_id_get"}, O, set<&A::rsmi_dev_xgmi_hive_id_get>},
    {{"rsmi_dev_ecc_enabled_get"}, O, set<&A::rsmi_dev_ecc_enabled_get>},
    {{"rsmi_dev_busy_percent_get"}, O, set<&A::rsmi_dev_busy_percent_get>},
    {{"rsmi_dev_memory_busy_percent_get"}, O, set<&A::rsmi_dev_memory_busy_percent_get>},
    {{"rsmi_topo_get_numa_node_number"}, O, set<&A::rsmi_topo_get_numa_node_number>},
    {{"rsmi_dev_drm_render_minor_get"}, O, set<&A::rsmi_dev_drm_render_minor_get>},
    {{"rsmi_dev_memory_total_get"}, O, set<&A::rsmi_dev_memory_total_get>},
    {{"rsmi_dev_memory_usage_get"}, O, set<&A::rsmi_dev_memory_usage_get>},
    {{"rsmi_dev_ecc_count_get"}, O, set<&A::rsmi_dev_ecc_count_get>},
    {{"rsmi_dev_memory_reserved_pages_get"}, O, set<&A::rsmi_dev_memory_reserved_pages_get>},
    {{"rsmi_dev_pci_bandwidth_get"}, O, set<&A::rsmi_dev_pci_bandwidth_get>},
    {{"rsmi_dev_pci_throughput_get"}, O, set<&A::rsmi_dev_pci_throughput_get>},
    {{"rsmi_dev_power_ave_get"}, O, set<&A::rsmi_dev_power_ave_get>},
    {{"rsmi_dev_power_cap_get"}, O, set<&A::rsmi_dev_power_cap_get>},
    {{"rsmi_dev_power_cap_default_get"}, O, set<&A::rsmi_dev_power_cap_default_get>},
    {{"rsmi_dev_power_cap_range_get"}, O, set<&A::rsmi_dev_power_cap_range_get>},
    {{"rsmi_dev_energy_count_get"}, O, set<&A::rsmi_dev_energy_count_get>},
    {{"rsmi_dev_temp_metric_get"}, O, set<&A::rsmi_dev_temp_metric_get>},
    {{"rsmi_dev_gpu_clk_freq_get"}, O, set<&A::rsmi_dev_gpu_clk_freq_get>},
    {{"rsmi_dev_perf_level_get"}, O, set<&A::rsmi_dev_perf_level_get>},
    {{"rsmi_dev_fan_speed_get"}, O, set<&A::rsmi_dev_fan_speed_get>},
    {{"rsmi_dev_xgmi_error_status"}, O, set<&A::rsmi_dev_xgmi_error_status>},
    {{"rsmi_topo_get_link_type"}, O, set<&A::rsmi_topo_get_link_type>},
    {{"rsmi_topo_get_link_weight"}, O, set<&A::rsmi_topo_get_link_weight>},
    {{"rsmi_is_P2P_accessible"}, O, set<&A::rsmi_is_P2P_accessible>},
    {{"rsmi_compute_process_info_get"}, O, set<&A::rsmi_compute_process_info_get>},
    {{"rsmi_compute_process_gpus_get"}, O, set<&A::rsmi_compute_process_gpus_get>},
    {{"rsmi_dev_compute_partition_get"}, O, set<&A::rsmi_dev_compute_partition_get>},
    {{"rsmi_dev_memory_partition_get"}, O, set<&A::rsmi_dev_memory_partition_get>},
};

struct StatusInfo {
    unsigned code;
    const char* name;
    const char* reason;  // short, for an absent fact
};

// Values from rocm_smi.h (rsmi_status_t); the reasons are ours.
const StatusInfo kStatus[] = {
    {0, "RSMI_STATUS_SUCCESS", "success"},
    {1, "RSMI_STATUS_INVALID_ARGS", "invalid arguments (RSMI_STATUS_INVALID_ARGS)"},
    {2, "RSMI_STATUS_NOT_SUPPORTED", "not supported by this GPU or driver"},
    {3, "RSMI_STATUS_FILE_ERROR", "the amdgpu sysfs file could not be read (RSMI_STATUS_FILE_ERROR)"},
    {4, "RSMI_STATUS_PERMISSION", "no permission: run as root or add the user to the video and render groups"},
    {5, "RSMI_STATUS_OUT_OF_RESOURCES", "out of memory (RSMI_STATUS_OUT_OF_RESOURCES)"},
    {6, "RSMI_STATUS_INTERNAL_EXCEPTION", "ROCm SMI failed internally (RSMI_STATUS_INTERNAL_EXCEPTION)"},
    {7, "RSMI_STATUS_INPUT_OUT_OF_BOUNDS", "not present on this GPU (RSMI_STATUS_INPUT_OUT_OF_BOUNDS)"},
    {8, "RSMI_STATUS_INIT_ERROR",
     "ROCm SMI could not start: is the amdgpu kernel driver loaded? (RSMI_STATUS_INIT_ERROR)"},
    {9, "RSMI_STATUS_NOT_YET_IMPLEMENTED", "not implemented by this ROCm SMI"},
    {10, "RSMI_STATUS_NOT_FOUND", "not found (RSMI_STATUS_NOT_FOUND)"},
    {11, "RSMI_STATUS_INSUFFICIENT_SIZE", "buffer too small (RSMI_STATUS_INSUFFICIENT_SIZE)"},
    {12, "RSMI_STATUS_INTERRUPT", "interrupted (RSMI_STATUS_INTERRUPT)"},
    {13, "RSMI_STATUS_UNEXPECTED_SIZE", "the driver returned data of an unexpected size"},
    {14, "RSMI_STATUS_NO_DATA", "no data (RSMI_STATUS_NO_DATA)"},
    {15, "RSMI_STATUS_UNEXPECTED_DATA", "the driver returned unexpected data"},
    {16, "RSMI_STATUS_BUSY", "the device is busy: retry (RSMI_STATUS_BUSY)"},
    {17, "RSMI_STATUS_REFCOUNT_OVERFLOW", "too many rsmi_init calls (RSMI_STATUS_REFCOUNT_OVERFLOW)"},
    {0xFFFFFFFF, "RSMI_STATUS_UNKNOWN_ERROR", "unknown error (RSMI_STATUS_UNKNOWN_ERROR)"},
};

const StatusInfo* find_status(unsigned code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

}  // namespace

std::span<const SymbolEntry<RocmSmiApi>> rocm_smi_symbol_table() { return kTable; }

std::vector<std::string> rocm_smi_candidates() {
    // The library's soname followed its own version: .so.7 with ROCm 6, .so.5 with ROCm 5.x,
    // .so.1 in Debian's 5.2 build. ROCm installs under /opt/rocm, not always in the loader's path.
    return {"librocm_smi64.so.7",
            "librocm_smi64.so.6",
            "librocm_smi64.so.5",
            "librocm_smi64.so.2",
            "librocm_smi64.so.1",
            "librocm_smi64.so",
            "/opt/rocm/lib/librocm_smi64.so"};
}

std::string rsmi_status_name(unsigned code) {
    if (code == kRocmSmiNoAnswer) return "no answer from the driver";
    if (auto* s = find_status(code)) return s->name;
    return "RSMI_STATUS_" + std::to_string(code);
}

std::string rsmi_absent_reason(unsigned code) {
    if (code == kRocmSmiNoAnswer) return last_driver_no_answer();
    if (auto* s = find_status(code)) return s->reason;
    return "ROCm SMI error " + std::to_string(code);
}

RocmSmiApi RocmSmiApi::from_library(const DynLib& lib, DriverLib* deadline) {
    RocmSmiApi api;
    api.path = lib.path();
    api.symbols = resolve_symbols<RocmSmiApi>(
        rocm_smi_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, deadline);
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = "librocm_smi64 at " + lib.path() + " lacks " + names;
    }
    return api;
}

RocmSmiApi RocmSmiApi::load() {
    DynLib lib = DynLib::open(kEnvLibRocmSmi, rocm_smi_candidates());
    if (!lib) {
        RocmSmiApi api;
        api.error = "librocm_smi64.so could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib, &driver_lib("ROCm SMI", GpuFrom::FirstIndex));  // the handle stays open (see DynLib)
}

RocmSmiApi RocmSmiApi::load_file(const std::string& file) {
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        RocmSmiApi api;
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib);
}

std::string RocmSmiApi::error_name(unsigned code) const {
    if (code == kRocmSmiNoAnswer) return rsmi_status_name(code);  // the absent reason names the call
    if (rsmi_status_string) {
        const char* s = nullptr;
        if (rsmi_status_string(static_cast<rsmi::rsmi_status_t>(code), &s) == rsmi::RSMI_STATUS_SUCCESS && s && *s)
            return s;
    }
    return rsmi_status_name(code);
}

}  // namespace gpuvet
