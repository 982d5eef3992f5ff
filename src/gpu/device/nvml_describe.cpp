// NvmlDevice::describe(): the fixed facts of one GPU.
#include <string>

#include "gpu/device/nvml_backend.hpp"
#include "gpu/device/nvml_decode.hpp"

namespace gpuvet {

using namespace nvml;
using namespace nvml_backend;

namespace {

std::string compute_mode_name(nvmlComputeMode_t m) {
    switch (m) {
        case NVML_COMPUTEMODE_DEFAULT: return "Default";
        case NVML_COMPUTEMODE_EXCLUSIVE_THREAD: return "Exclusive_Thread";
        case NVML_COMPUTEMODE_PROHIBITED: return "Prohibited";
        case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS: return "Exclusive_Process";
        default: return "unknown";
    }
}

std::string virtualization_name(nvmlGpuVirtualizationMode_t m) {
    switch (m) {
        case NVML_GPU_VIRTUALIZATION_MODE_NONE: return "None";
        case NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH: return "Pass-Through";
        case NVML_GPU_VIRTUALIZATION_MODE_VGPU: return "vGPU";
        case NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU: return "Host vGPU";
        case NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA: return "Host vSGA";
        default: return "unknown";
    }
}

std::string remote_type_name(nvmlIntNvLinkDeviceType_t t) {
    switch (t) {
        case NVML_NVLINK_DEVICE_TYPE_GPU: return "gpu";
        case NVML_NVLINK_DEVICE_TYPE_SWITCH: return "switch";
        case NVML_NVLINK_DEVICE_TYPE_IBMNPU: return "ibmnpu";
        default: return "unknown";
    }
}

}  // namespace

NvmlDevice::NvmlDevice(const NvmlApi& api, int index) : index_(index), r_{api, nullptr, false, {}} {
    int rc = api.nvmlDeviceGetHandleByIndex(static_cast<unsigned>(index), &r_.dev);
    if (rc == NVML_SUCCESS) return;
    r_.dev = nullptr;
    r_.errors.push_back("nvmlDeviceGetHandleByIndex_v2 failed: " + api.error_name(rc) + ": " + nvml_advice(rc));
    r_.lost = rc == NVML_ERROR_GPU_IS_LOST;
    open_error_ = nvml_absent_reason(rc);
    unopened_ = "nvmlDeviceGetHandleByIndex failed: " + open_error_;
}

DeviceFacts NvmlDevice::describe() {
    DeviceFacts f;
    if (!open_error_.empty()) {
        f.name = Fact<std::string>::absent(open_error_);
        return f;
    }
    read_identity(f);
    read_memory_totals(f);
    read_limits(f);
    read_nvlinks(f);
    read_modes(f);
    // The board firmware beside the VBIOS: the history's diff names a reflashed InfoROM.
    f.inforom_image_version = r_.text("nvmlDeviceGetInforomImageVersion", r_.api.nvmlDeviceGetInforomImageVersion);
    return f;
}

void NvmlDevice::read_identity(DeviceFacts& f) {
    const NvmlApi& a = r_.api;
    f.name = r_.text("nvmlDeviceGetName", a.nvmlDeviceGetName);
    f.uuid = r_.text("nvmlDeviceGetUUID", a.nvmlDeviceGetUUID);
    f.serial = r_.text("nvmlDeviceGetSerial", a.nvmlDeviceGetSerial);
    f.vbios_version = r_.text("nvmlDeviceGetVbiosVersion", a.nvmlDeviceGetVbiosVersion);
    f.board_part_number = r_.text("nvmlDeviceGetBoardPartNumber", a.nvmlDeviceGetBoardPartNumber);

    // PCI: the versioned Ext struct when the driver has it, else v3.
    std::string why, bus_id;
    std::uint32_t dev_id = 0, subsys = 0;
    if (a.nvmlDeviceGetPciInfoExt) {
        nvmlPciInfoExt_v1_t p{};
        p.version = kPciInfoExt_v1;
        why = r_.call("nvmlDeviceGetPciInfoExt", a.nvmlDeviceGetPciInfoExt, &p);
        bus_id = p.busId, dev_id = p.pciDeviceId, subsys = p.pciSubSystemId;
    }
    if (!a.nvmlDeviceGetPciInfoExt || (!why.empty() && !r_.lost)) {
        nvmlPciInfo_t p{};
        why = r_.call("nvmlDeviceGetPciInfo_v3", a.nvmlDeviceGetPciInfo, &p);
        bus_id = p.busId, dev_id = p.pciDeviceId, subsys = p.pciSubSystemId;
    }
    f.pci_bus_id = fact_of(why, bus_id);
    f.pci_device_id = fact_of(why, dev_id >> 16);  // upper half is the device id, lower the vendor
    f.pci_subsystem_id = fact_of(why, subsys);

    f.architecture = r_.fact("nvmlDeviceGetArchitecture", a.nvmlDeviceGetArchitecture,
                             [](unsigned arch) { return architecture_name(arch); });
    int ma = 0, mi = 0;
    why = r_.call("nvmlDeviceGetCudaComputeCapability", a.nvmlDeviceGetCudaComputeCapability, &ma, &mi);
    f.compute_capability = fact_of(why, std::to_string(ma) + "." + std::to_string(mi));
}

void NvmlDevice::read_memory_totals(DeviceFacts& f) {
    MemoryInfo m = read_memory();
    f.memory_total_bytes = m.total;
    f.memory_reserved_bytes = m.reserved;
}

void NvmlDevice::read_limits(DeviceFacts& f) {
    const NvmlApi& a = r_.api;
    nvmlEnableState_t cur{}, pend{};
    std::string why = r_.call("nvmlDeviceGetEccMode", a.nvmlDeviceGetEccMode, &cur, &pend);
    f.ecc_enabled = fact_of(why, is_enabled(cur));
    f.ecc_pending = fact_of(why, is_enabled(pend));
    f.pcie_gen_max_gpu =
        r_.fact("nvmlDeviceGetGpuMaxPcieLinkGeneration", a.nvmlDeviceGetGpuMaxPcieLinkGeneration, as_int);
    f.pcie_gen_max_host = r_.fact("nvmlDeviceGetMaxPcieLinkGeneration", a.nvmlDeviceGetMaxPcieLinkGeneration, as_int);
    f.pcie_width_max = r_.fact("nvmlDeviceGetMaxPcieLinkWidth", a.nvmlDeviceGetMaxPcieLinkWidth, as_int);
    f.power_default_limit_w = r_.fact("nvmlDeviceGetPowerManagementDefaultLimit",
                                      a.nvmlDeviceGetPowerManagementDefaultLimit, milliwatts_to_w);
    unsigned pmin = 0, pmax = 0;
    why = r_.call("nvmlDeviceGetPowerManagementLimitConstraints", a.nvmlDeviceGetPowerManagementLimitConstraints, &pmin,
                  &pmax);
    f.power_min_limit_w = fact_of(why, milliwatts_to_w(pmin));
    f.power_max_limit_w = fact_of(why, milliwatts_to_w(pmax));
    f.clock_sm_max_mhz = r_.fact("nvmlDeviceGetMaxClockInfo", a.nvmlDeviceGetMaxClockInfo, as_int, NVML_CLOCK_SM);
    f.clock_mem_max_mhz = r_.fact("nvmlDeviceGetMaxClockInfo", a.nvmlDeviceGetMaxClockInfo, as_int, NVML_CLOCK_MEM);
    auto threshold = [&](nvmlTemperatureThresholds_t which) {
        return r_.fact("nvmlDeviceGetTemperatureThreshold", a.nvmlDeviceGetTemperatureThreshold, as_int, which);
    };
    f.temperature_slowdown_c = threshold(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
    f.temperature_shutdown_c = threshold(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
    f.temperature_memory_max_c = threshold(NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
}

void NvmlDevice::read_modes(DeviceFacts& f) {
    const NvmlApi& a = r_.api;
    f.persistence_mode = r_.fact("nvmlDeviceGetPersistenceMode", a.nvmlDeviceGetPersistenceMode, is_enabled);
    f.compute_mode = r_.fact("nvmlDeviceGetComputeMode", a.nvmlDeviceGetComputeMode, compute_mode_name);
    unsigned mig = 0, mig_pending = 0;
    std::string why = r_.call("nvmlDeviceGetMigMode", a.nvmlDeviceGetMigMode, &mig, &mig_pending);
    f.mig_enabled = fact_of(why, mig != 0);
    f.virtualization_mode =
        r_.fact("nvmlDeviceGetVirtualizationMode", a.nvmlDeviceGetVirtualizationMode, virtualization_name);
    f.numa_node = r_.fact("nvmlDeviceGetNumaNodeId", a.nvmlDeviceGetNumaNodeId, as_int);
    std::uint64_t mask[16] = {0};  // 1024 CPUs
    static_assert(sizeof(unsigned long) == sizeof(std::uint64_t), "64-bit Linux only");
    why = r_.call("nvmlDeviceGetCpuAffinity", a.nvmlDeviceGetCpuAffinity, 16u, reinterpret_cast<unsigned long*>(mask));
    f.cpu_affinity = fact_of(why, cpu_list_from_mask(mask, 16));
}

void NvmlDevice::read_nvlinks(DeviceFacts& f) {
    const NvmlApi& a = r_.api;
    // The link count grew 12 -> 18 -> 36 across drivers: ask until the driver says no.
    for (unsigned link = 0; link < 64 && !r_.lost; ++link) {
        if (!a.nvmlDeviceGetNvLinkState) {
            f.nvlink_absent_reason = driver_lacks("nvmlDeviceGetNvLinkState");
            return;
        }
        nvmlEnableState_t st{};
        int rc = a.nvmlDeviceGetNvLinkState(r_.dev, link, &st);
        if (rc != NVML_SUCCESS) {
            if (rc == NVML_ERROR_GPU_IS_LOST) r_.status("nvmlDeviceGetNvLinkState", rc);
            if (link == 0) {
                // INVALID_ARGUMENT for link 0: the GPU has no link at all; NOT_SUPPORTED: the
                // driver has no NVLink for this GPU (PCIe cards without a bridge).
                f.nvlink_none = rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_SUPPORTED;
                f.nvlink_absent_reason =
                    rc == NVML_ERROR_INVALID_ARGUMENT ? "this GPU has no NVLink" : nvml_absent_reason(rc);
            }
            return;
        }
        NvLinkInfo l;
        l.link = static_cast<int>(link);
        l.active = is_enabled(st);
        nvmlPciInfo_t pci{};
        std::string why =
            r_.call("nvmlDeviceGetNvLinkRemotePciInfo_v2", a.nvmlDeviceGetNvLinkRemotePciInfo, link, &pci);
        l.remote_pci_bus_id = fact_of(why, std::string(pci.busId));
        l.remote_type = r_.fact("nvmlDeviceGetNvLinkRemoteDeviceType", a.nvmlDeviceGetNvLinkRemoteDeviceType,
                                remote_type_name, link);
        l.version = r_.fact("nvmlDeviceGetNvLinkVersion", a.nvmlDeviceGetNvLinkVersion, as_int, link);
        f.nvlinks.push_back(std::move(l));
    }
}

}  // namespace gpuvet
