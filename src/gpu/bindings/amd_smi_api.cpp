#include "gpu/bindings/amd_smi_api.hpp"

namespace gpuvet {

// The arrays AMD SMI writes, with the in-out count of what they can take (driver_deadline.hpp).
template <>
struct DriverArgs<&AmdSmiApi::amdsmi_get_socket_handles> : ArrayArgs<0, 1> {};
template <>
struct DriverArgs<&AmdSmiApi::amdsmi_get_processor_handles> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&AmdSmiApi::amdsmi_get_gpu_device_uuid> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&AmdSmiApi::amdsmi_get_gpu_bad_page_info> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&AmdSmiApi::amdsmi_get_gpu_process_list> : ArrayArgs<1, 2> {};
// The metrics table grows with the library's version: the caller's buffer (with room to spare,
// kept alive past a call that gets no answer) is passed unchanged.
template <>
struct DriverArgs<&AmdSmiApi::amdsmi_get_gpu_metrics_info> : AsIsArgs<1> {};

namespace {

using A = AmdSmiApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <auto M>
constexpr void (*set)(AmdSmiApi&, void*, const char*, DriverLib*) = &assign_member<M, AmdSmiApi>;

const SymbolEntry<AmdSmiApi> kTable[] = {
    {{"amdsmi_init"}, R, set<&A::amdsmi_init>},
    {{"amdsmi_shut_down"}, R, set<&A::amdsmi_shut_down>},
    {{"amdsmi_get_socket_handles"}, R, set<&A::amdsmi_get_socket_handles>},
    {{"amdsmi_get_processor_handles"}, R, set<&A::amdsmi_get_processor_handles>},
    {{"amdsmi_get_processor_type"}, O, set<&A::amdsmi_get_processor_type>},
    {{"amdsmi_status_code_to_string"}, O, set<&A::amdsmi_status_code_to_string>},
    {{"amdsmi_get_lib_version"}, O, set<&A::amdsmi_get_lib_version>},
    {{"amdsmi_get_gpu_driver_info"}, O, set<&A::amdsmi_get_gpu_driver_info>},
    {{"amdsmi_get_gpu_asic_info"}, O, set<&A::amdsmi_get_gpu_asic_info>},
    {{"amdsmi_get_gpu_board_info"}, O, set<&A::amdsmi_get_gpu_board_info>},
    {{"amdsmi_get_gpu_vbios_info"}, O, set<&A::amdsmi_get_gpu_vbios_info>},
    {{"amdsmi_get_gpu_bdf_id"}, O, set<&A::amdsmi_get_gpu_bdf_id>},
    {{"amdsmi_get_gpu_id"}, O, set<&A::amdsmi_get_gpu_id>},
    {{"amdsmi_get_gpu_subsystem_id"}, O, set<&A::amdsmi_get_gpu_subsystem_id>},
    {{"amdsmi_get_gpu_device_uuid"}, O, set<&A::amdsmi_get_gpu_device_uuid>},
    {{"amdsmi_get_gpu_memory_total"}, O, set<&A::amdsmi_get_gpu_memory_total>},
    {{"amdsmi_get_gpu_memory_usage"}, O, set<&A::amdsmi_get_gpu_memory_usage>},
    {{"amdsmi_get_gpu_vram_info"}, O, set<&A::amdsmi_get_gpu_vram_info>},
    {{"amdsmi_get_gpu_total_ecc_count"}, O, set<&A::amdsmi_get_gpu_total_ecc_count>},
    {{"amdsmi_get_gpu_ecc_count"}, O, set<&A::amdsmi_get_gpu_ecc_count>},
    {{"amdsmi_get_gpu_ecc_enabled"}, O, set<&A::amdsmi_get_gpu_ecc_enabled>},
    {{"amdsmi_get_gpu_bad_page_info"}, O, set<&A::amdsmi_get_gpu_bad_page_info>},
    {{"amdsmi_get_pcie_info"}, O, set<&A::amdsmi_get_pcie_info>},
    {{"amdsmi_get_gpu_pci_replay_counter"}, O, set<&A::amdsmi_get_gpu_pci_replay_counter>},
    {{"amdsmi_topo_get_link_type"}, O, set<&A::amdsmi_topo_get_link_type>},
    {{"amdsmi_topo_get_link_weight"}, O, set<&A::amdsmi_topo_get_link_weight>},
    {{"amdsmi_is_P2P_accessible"}, O, set<&A::amdsmi_is_P2P_accessible>},
    {{"amdsmi_topo_get_numa_node_number"}, O, set<&A::amdsmi_topo_get_numa_node_number>},
    {{"amdsmi_get_link_metrics"}, O, set<&A::amdsmi_get_link_metrics>},
    {{"amdsmi_get_xgmi_info"}, O, set<&A::amdsmi_get_xgmi_info>},
    {{"amdsmi_gpu_xgmi_error_status"}, O, set<&A::amdsmi_gpu_xgmi_error_status>},
    {{"amdsmi_get_power_cap_info"}, O, set<&A::amdsmi_get_power_cap_info>},
    {{"amdsmi_get_power_info"}, O, set<&A::amdsmi_get_power_info>},
    {{"amdsmi_get_energy_count"}, O, set<&A::amdsmi_get_energy_count>},
    {{"amdsmi_get_temp_metric"}, O, set<&A::amdsmi_get_temp_metric>},
    {{"amdsmi_get_clock_info"}, O, set<&A::amdsmi_get_clock_info>},
    {{"amdsmi_get_gpu_activity"}, O, set<&A::amdsmi_get_gpu_activity>},
    {{"amdsmi_get_gpu_fan_speed"}, O, set<&A::amdsmi_get_gpu_fan_speed>},
    {{"amdsmi_get_gpu_process_list"}, O, set<&A::amdsmi_get_gpu_process_list>},
    {{"amdsmi_get_gpu_compute_partition"}, O, set<&A::amdsmi_get_gpu_compute_partition>},
    {{"amdsmi_get_gpu_memory_partition"}, O, set<&A::amdsmi_get_gpu_memory_partition>},
    {{"amdsmi_get_gpu_kfd_info"}, O, set<&A::amdsmi_get_gpu_kfd_info>},
    {{"amdsmi_get_gpu_metrics_info"}, O, set<&A::amdsmi_get_gpu_metrics_info>},
};

struct StatusInfo {
    unsigned code;
    const char* name;
    const char* reason;  // short, for an absent fact
};

// Values from amdsmi.h (amdsmi_status_t); the reasons are ours.
const StatusInfo kStatus[] = {
    {0, "AMDSMI_STATUS_SUCCESS", "success"},
    {1, "AMDSMI_STATUS_INVAL", "invalid arguments (AMDSMI_STATUS_INVAL)"},
    {2, "AMDSMI_STATUS_NOT_SUPPORTED", "not supported by this GPU or driver"},
    {3, "AMDSMI_STATUS_NOT_YET_IMPLEMENTED", "not implemented by this AMD SMI"},
    {4, "AMDSMI_STATUS_FAIL_LOAD_MODULE", "AMD SMI could not load a module it needs (AMDSMI_STATUS_FAIL_LOAD_MODULE)"},
    {5, "AMDSMI_STATUS_FAIL_LOAD_SYMBOL", "AMD SMI could not load a symbol it needs (AMDSMI_STATUS_FAIL_LOAD_SYMBOL)"},
    {6, "AMDSMI_STATUS_DRM_ERROR", "the amdgpu DRM interface failed (AMDSMI_STATUS_DRM_ERROR)"},
    {7, "AMDSMI_STATUS_API_FAILED", "the call failed (AMDSMI_STATUS_API_FAILED)"},
    {8, "AMDSMI_STATUS_TIMEOUT", "the driver did not answer in time (AMDSMI_STATUS_TIMEOUT)"},
    {9, "AMDSMI_STATUS_RETRY", "the driver asked to retry (AMDSMI_STATUS_RETRY)"},
    {10, "AMDSMI_STATUS_NO_PERM", "no permission: run as root or add the user to the video and render groups"},
    {11, "AMDSMI_STATUS_INTERRUPT", "interrupted (AMDSMI_STATUS_INTERRUPT)"},
    {12, "AMDSMI_STATUS_IO", "I/O error (AMDSMI_STATUS_IO)"},
    {13, "AMDSMI_STATUS_ADDRESS_FAULT", "bad address (AMDSMI_STATUS_ADDRESS_FAULT)"},
    {14, "AMDSMI_STATUS_FILE_ERROR", "the amdgpu sysfs file could not be read (AMDSMI_STATUS_FILE_ERROR)"},
    {15, "AMDSMI_STATUS_OUT_OF_RESOURCES", "out of memory (AMDSMI_STATUS_OUT_OF_RESOURCES)"},
    {16, "AMDSMI_STATUS_INTERNAL_EXCEPTION", "AMD SMI failed internally (AMDSMI_STATUS_INTERNAL_EXCEPTION)"},
    {17, "AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS", "not present on this GPU (AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS)"},
    {18, "AMDSMI_STATUS_INIT_ERROR",
     "AMD SMI could not start: is the amdgpu kernel driver loaded? (AMDSMI_STATUS_INIT_ERROR)"},
    {19, "AMDSMI_STATUS_REFCOUNT_OVERFLOW", "too many amdsmi_init calls (AMDSMI_STATUS_REFCOUNT_OVERFLOW)"},
    {30, "AMDSMI_STATUS_BUSY", "the device is busy: retry (AMDSMI_STATUS_BUSY)"},
    {31, "AMDSMI_STATUS_NOT_FOUND", "not found (AMDSMI_STATUS_NOT_FOUND)"},
    {32, "AMDSMI_STATUS_NOT_INIT", "AMD SMI not initialised (AMDSMI_STATUS_NOT_INIT)"},
    {33, "AMDSMI_STATUS_NO_SLOT", "no free slot (AMDSMI_STATUS_NO_SLOT)"},
    {34, "AMDSMI_STATUS_DRIVER_NOT_LOADED", "the amdgpu kernel driver is not loaded: modprobe amdgpu, or reboot"},
    {40, "AMDSMI_STATUS_NO_DATA", "no data (AMDSMI_STATUS_NO_DATA)"},
    {41, "AMDSMI_STATUS_INSUFFICIENT_SIZE", "buffer too small (AMDSMI_STATUS_INSUFFICIENT_SIZE)"},
    {42, "AMDSMI_STATUS_UNEXPECTED_SIZE", "the driver returned data of an unexpected size"},
    {43, "AMDSMI_STATUS_UNEXPECTED_DATA", "the driver returned unexpected data"},
    {44, "AMDSMI_STATUS_NON_AMD_CPU", "not an AMD CPU"},
    {45, "AMDSMI_STATUS_NO_ENERGY_DRV", "the energy driver is not loaded"},
    {46, "AMDSMI_STATUS_NO_MSR_DRV", "the MSR driver is not loaded"},
    {47, "AMDSMI_STATUS_NO_HSMP_DRV", "the HSMP driver is not loaded"},
    {48, "AMDSMI_STATUS_NO_HSMP_SUP", "HSMP not supported"},
    {49, "AMDSMI_STATUS_NO_HSMP_MSG_SUP", "HSMP message not supported"},
    {50, "AMDSMI_STATUS_HSMP_TIMEOUT", "HSMP timed out"},
    {51, "AMDSMI_STATUS_NO_DRV", "no driver (AMDSMI_STATUS_NO_DRV)"},
    {52, "AMDSMI_STATUS_FILE_NOT_FOUND", "a driver file is missing (AMDSMI_STATUS_FILE_NOT_FOUND)"},
    {53, "AMDSMI_STATUS_ARG_PTR_NULL", "null argument (AMDSMI_STATUS_ARG_PTR_NULL)"},
    {54, "AMDSMI_STATUS_AMDGPU_RESTART_ERR", "the amdgpu driver could not be restarted"},
    {55, "AMDSMI_STATUS_SETTING_UNAVAILABLE", "setting unavailable (AMDSMI_STATUS_SETTING_UNAVAILABLE)"},
    {0xFFFFFFFE, "AMDSMI_STATUS_MAP_ERROR", "AMD SMI could not map the driver's status (AMDSMI_STATUS_MAP_ERROR)"},
    {0xFFFFFFFF, "AMDSMI_STATUS_UNKNOWN_ERROR", "unknown error (AMDSMI_STATUS_UNKNOWN_ERROR)"},
};

const StatusInfo* find_status(unsigned code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

}  // namespace

std::span<const SymbolEntry<AmdSmiApi>> amd_smi_symbol_table() { return kTable; }

std::vector<std::string> amd_smi_candidates() {
    // The soname carries the library's year: .so.26 and .so.25 with ROCm 7, .so.24 with ROCm 6.
    return {"libamd_smi.so.26", "libamd_smi.so.25", "libamd_smi.so.24", "libamd_smi.so", "/opt/rocm/lib/libamd_smi.so"};
}

DriverLib& amd_smi_driver_lib() { return driver_lib("AMD SMI", GpuFrom::Handle); }

std::string amdsmi_status_name(unsigned code) {
    if (code == kAmdSmiNoAnswer) return "no answer from the driver";
    if (auto* s = find_status(code)) return s->name;
    return "AMDSMI_STATUS_" + std::to_string(code);
}

std::string amdsmi_absent_reason(unsigned code) {
    if (code == kAmdSmiNoAnswer) return last_driver_no_answer();
    if (auto* s = find_status(code)) return s->reason;
    return "AMD SMI error " + std::to_string(code);
}

AmdSmiApi AmdSmiApi::from_library(const DynLib& lib, DriverLib* deadline) {
    AmdSmiApi api;
    api.path = lib.path();
    api.deadline = deadline;
    api.symbols = resolve_symbols<AmdSmiApi>(
        amd_smi_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, deadline);
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = "libamd_smi at " + lib.path() + " lacks " + names;
    }
    return api;
}

AmdSmiApi AmdSmiApi::load() {
    DynLib lib = DynLib::open(kEnvLibAmdSmi, amd_smi_candidates());
    if (!lib) {
        AmdSmiApi api;
        api.error = "libamd_smi.so could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib, &amd_smi_driver_lib());  // the handle stays open for the process (see DynLib)
}

AmdSmiApi AmdSmiApi::load_file(const std::string& file) {
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        AmdSmiApi api;
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib);
}

std::string AmdSmiApi::error_name(unsigned code) const {
    if (code == kAmdSmiNoAnswer) return amdsmi_status_name(code);  // the absent reason names the call
    if (amdsmi_status_code_to_string) {
        const char* s = nullptr;
        if (amdsmi_status_code_to_string(static_cast<amdsmi::amdsmi_status_t>(code), &s) ==
                amdsmi::AMDSMI_STATUS_SUCCESS &&
            s && *s)
            return s;
    }
    return amdsmi_status_name(code);
}

}  // namespace gpuvet
