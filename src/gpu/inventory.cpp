// The inventory collector: CUDA driver API for ordinals, SM counts and compute capability; NVML
// for everything else. Every call is guarded: one failing call or GPU never stops the others.
#include "gpu/inventory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "gpu/driver_problems.hpp"
#include "gpu/memory_temperature.hpp"
#include "gpu/bindings/cuda_api.hpp"
#include "gpu/bindings/nvml_api.hpp"
#include "host/sysfs.hpp"

namespace gpuvet {

namespace {

using namespace nvml;

// What CUDA tells about one device, matched to NVML by PCI bus id.
struct CudaDevice {
    int ordinal = 0;
    std::string bus_id;  // normalized
    Fact<std::string> name, uuid, compute_capability;
    Fact<std::uint64_t> memory_total_bytes;
    Fact<int> sm_count;
};

template <class T>
void fill(Fact<T>& f, const std::string& why, T value) {
    if (why.empty()) f = Fact<T>(std::move(value));
    else f = Fact<T>::absent(why);
}

std::string cuda_reason(const CudaApi& api, const char* call, int rc) {
    return std::string(call) + " failed: " + api.error_name(rc) + " (CUDA error " + std::to_string(rc) + ")";
}

std::string uuid_string(const cu::CUuuid& u) {
    static const char* hex = "0123456789abcdef";
    std::string s = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        auto b = static_cast<unsigned char>(u.bytes[i]);
        s += hex[b >> 4];
        s += hex[b & 15];
    }
    return s;
}

std::vector<CudaDevice> read_cuda(const CudaApi& api, Inventory& inv) {
    std::vector<CudaDevice> out;
    int v = 0;
    if (int rc = api.cuDriverGetVersion(&v); rc == 0) inv.cuda_driver_version = v;
    else inv.cuda_driver_version = Fact<int>::absent(cuda_reason(api, "cuDriverGetVersion", rc));
    if (int rc = api.cuInit(0); rc != 0) {
        inv.cuda_init_status = rc;
        inv.cuda_absent_reason = cuda_reason(api, "cuInit", rc);
        inv.errors.push_back(inv.cuda_absent_reason + ": " + cuda_advice(rc));
        return out;
    }
    inv.cuda_present = true;
    int n = 0;
    if (int rc = api.cuDeviceGetCount(&n); rc != 0) {
        inv.errors.push_back(cuda_reason(api, "cuDeviceGetCount", rc));
        return out;
    }
    auto attr = [&](cu::CUdevice d, cu::CUdevice_attribute a, std::string& why) {
        int x = 0;
        if (!api.cuDeviceGetAttribute) why = driver_lacks("cuDeviceGetAttribute");
        else if (int rc = api.cuDeviceGetAttribute(&x, a, d); rc != 0) why = cuda_reason(api, "cuDeviceGetAttribute", rc);
        return x;
    };
    for (int i = 0; i < n; ++i) {
        CudaDevice c;
        c.ordinal = i;
        cu::CUdevice d = 0;
        if (int rc = api.cuDeviceGet(&d, i); rc != 0) {
            inv.errors.push_back("CUDA device " + std::to_string(i) + ": " + cuda_reason(api, "cuDeviceGet", rc));
            continue;
        }
        std::string why;
        int dom = attr(d, cu::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, why);
        int bus = attr(d, cu::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, why);
        int dev = attr(d, cu::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, why);
        if (why.empty()) {
            char b[32];
            std::snprintf(b, sizeof b, "%04x:%02x:%02x.0", dom, bus, dev);
            c.bus_id = b;
        }
        why.clear();
        int sm = attr(d, cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, why);
        fill(c.sm_count, why, sm);
        why.clear();
        int ma = attr(d, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, why);
        int mi = attr(d, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, why);
        fill(c.compute_capability, why, std::to_string(ma) + "." + std::to_string(mi));
        char name[256] = {0};
        if (!api.cuDeviceGetName) c.name = Fact<std::string>::absent(driver_lacks("cuDeviceGetName"));
        else if (int rc = api.cuDeviceGetName(name, sizeof name - 1, d); rc != 0)
            c.name = Fact<std::string>::absent(cuda_reason(api, "cuDeviceGetName", rc));
        else c.name = std::string(name);
        std::size_t bytes = 0;
        if (!api.cuDeviceTotalMem) c.memory_total_bytes = Fact<std::uint64_t>::absent(driver_lacks("cuDeviceTotalMem_v2"));
        else if (int rc = api.cuDeviceTotalMem(&bytes, d); rc != 0)
            c.memory_total_bytes = Fact<std::uint64_t>::absent(cuda_reason(api, "cuDeviceTotalMem_v2", rc));
        else c.memory_total_bytes = static_cast<std::uint64_t>(bytes);
        cu::CUuuid u{};
        if (!api.cuDeviceGetUuid) c.uuid = Fact<std::string>::absent(driver_lacks("cuDeviceGetUuid_v2"));
        else if (int rc = api.cuDeviceGetUuid(&u, d); rc != 0)
            c.uuid = Fact<std::string>::absent(cuda_reason(api, "cuDeviceGetUuid_v2", rc));
        else c.uuid = uuid_string(u);
        out.push_back(std::move(c));
    }
    return out;
}

// Runs NVML calls for one GPU, turning statuses into absent reasons and noticing a lost GPU.
struct Reader {
    const NvmlApi& api;
    nvmlDevice_t dev;
    GpuInfo& gpu;

    // Returns "" on success, else why the fact is absent.
    template <class Fn, class... Args>
    std::string call(const char* symbol, Fn fn, Args... args) {
        if (gpu.lost) return "GPU is lost";
        if (!fn) return driver_lacks(symbol);
        int rc = fn(dev, args...);
        return status(symbol, rc);
    }
    std::string status(const char* symbol, int rc) {
        if (rc == NVML_SUCCESS) return {};
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            if (!gpu.lost) gpu.errors.push_back(std::string(symbol) + ": " + nvml_advice(rc));
            gpu.lost = true;
        } else if (rc != NVML_ERROR_NOT_SUPPORTED) {
            std::string e = std::string(symbol) + " failed: " + api.error_name(rc) + " (" + nvml_status_name(rc) + ")";
            if (std::find(gpu.errors.begin(), gpu.errors.end(), e) == gpu.errors.end()) gpu.errors.push_back(e);
        }
        return nvml_absent_reason(rc);
    }
    Fact<std::string> text(const char* symbol, nvmlDeviceGetString_fn fn) {
        char buf[128] = {0};
        std::string why = call(symbol, fn, buf, static_cast<unsigned>(sizeof buf - 1));
        Fact<std::string> f;
        fill(f, why, std::string(buf));
        return f;
    }
    template <class T>
    void uint(Fact<T>& out, const char* symbol, nvmlDeviceGetUInt_fn fn, double scale = 1.0) {
        unsigned v = 0;
        std::string why = call(symbol, fn, &v);
        fill(out, why, static_cast<T>(v * scale));
    }
};

const char* compute_mode_name(int m) {
    switch (m) {
        case NVML_COMPUTEMODE_DEFAULT: return "Default";
        case NVML_COMPUTEMODE_EXCLUSIVE_THREAD: return "Exclusive_Thread";
        case NVML_COMPUTEMODE_PROHIBITED: return "Prohibited";
        case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS: return "Exclusive_Process";
        default: return "unknown";
    }
}

const char* virtualization_name(int m) {
    switch (m) {
        case NVML_GPU_VIRTUALIZATION_MODE_NONE: return "None";
        case NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH: return "Pass-Through";
        case NVML_GPU_VIRTUALIZATION_MODE_VGPU: return "vGPU";
        case NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU: return "Host vGPU";
        case NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA: return "Host vSGA";
        default: return "unknown";
    }
}

void read_processes(Reader& r, const HostFs& fs, const char* symbol, nvmlDeviceGetRunningProcesses_fn fn,
                    const char* v1_symbol, nvmlDeviceGetRunningProcesses_v1_fn fn_v1, const char* type,
                    std::string& why_out) {
    GpuInfo& g = r.gpu;
    std::vector<RawProcess> procs;
    // A few spare entries: processes may start between the two calls.
    if (fn) {
        unsigned count = 0;  // sizing call: SUCCESS when idle, INSUFFICIENT_SIZE with the count otherwise
        if (!g.lost) fn(r.dev, &count, nullptr);
        unsigned cap = count + 8;
        // Room for 32-byte entries (see decode_process_entries), 8-byte aligned.
        std::vector<std::uint64_t> buf(cap * 4, 0);
        unsigned n = cap;
        int rc = r.gpu.lost ? NVML_ERROR_GPU_IS_LOST : fn(r.dev, &n, reinterpret_cast<nvmlProcessInfo_v2_t*>(buf.data()));
        if (rc != NVML_SUCCESS) {
            why_out = r.status(symbol, rc);
            return;
        }
        procs = decode_process_entries(reinterpret_cast<const unsigned char*>(buf.data()), std::min(n, cap));
    } else if (fn_v1) {
        unsigned cap = 64;
        std::vector<nvmlProcessInfo_v1_t> buf(cap);
        unsigned n = cap;
        std::string why = r.call(v1_symbol, fn_v1, &n, buf.data());
        if (!why.empty()) {
            why_out = why;
            return;
        }
        for (unsigned i = 0; i < std::min(n, cap); ++i) procs.push_back({buf[i].pid, buf[i].usedGpuMemory});
    } else {
        why_out = driver_lacks(symbol);
        return;
    }
    for (const auto& p : procs) {
        GpuProcess gp;
        gp.pid = p.pid;
        gp.type = type;
        if (auto comm = fs.read_line("/proc/" + std::to_string(p.pid) + "/comm")) gp.name = *comm;
        if (p.used_memory_bytes == ~0ULL)  // NVML_VALUE_NOT_AVAILABLE
            gp.used_memory_bytes = Fact<std::uint64_t>::absent("not available (MIG or WDDM)");
        else gp.used_memory_bytes = p.used_memory_bytes;
        g.processes.push_back(std::move(gp));
    }
}

void read_nvlinks(Reader& r) {
    GpuInfo& g = r.gpu;
    const NvmlApi& a = r.api;
    // The link count grew 12 -> 18 -> 36 across drivers: ask until the driver says no.
    for (unsigned link = 0; link < 64; ++link) {
        nvmlEnableState_t st{};
        if (g.lost) break;
        if (!a.nvmlDeviceGetNvLinkState) {
            g.nvlink_absent_reason = driver_lacks("nvmlDeviceGetNvLinkState");
            return;
        }
        int rc = a.nvmlDeviceGetNvLinkState(r.dev, link, &st);
        if (rc != NVML_SUCCESS) {
            if (rc == NVML_ERROR_GPU_IS_LOST) r.status("nvmlDeviceGetNvLinkState", rc);
            if (link == 0) g.nvlink_absent_reason = rc == NVML_ERROR_INVALID_ARGUMENT ? "this GPU has no NVLink"
                                                                                       : nvml_absent_reason(rc);
            return;
        }
        NvLinkInfo l;
        l.link = static_cast<int>(link);
        l.active = st == NVML_FEATURE_ENABLED;
        nvmlPciInfo_t pci{};
        std::string why = r.call("nvmlDeviceGetNvLinkRemotePciInfo_v2", a.nvmlDeviceGetNvLinkRemotePciInfo, link, &pci);
        fill(l.remote_pci_bus_id, why, std::string(pci.busId));
        nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
        why = r.call("nvmlDeviceGetNvLinkRemoteDeviceType", a.nvmlDeviceGetNvLinkRemoteDeviceType, link, &type);
        fill(l.remote_type, why,
             std::string(type == NVML_NVLINK_DEVICE_TYPE_GPU      ? "gpu"
                         : type == NVML_NVLINK_DEVICE_TYPE_SWITCH ? "switch"
                         : type == NVML_NVLINK_DEVICE_TYPE_IBMNPU ? "ibmnpu"
                                                                  : "unknown"));
        unsigned ver = 0;
        why = r.call("nvmlDeviceGetNvLinkVersion", a.nvmlDeviceGetNvLinkVersion, link, &ver);
        fill(l.version, why, static_cast<int>(ver));
        g.nvlinks.push_back(std::move(l));
    }
}

void read_gpu(const NvmlApi& a, nvmlDevice_t dev, GpuInfo& g, const HostFs& fs) {
    Reader r{a, dev, g};
    g.name = r.text("nvmlDeviceGetName", a.nvmlDeviceGetName);
    g.uuid = r.text("nvmlDeviceGetUUID", a.nvmlDeviceGetUUID);
    g.serial = r.text("nvmlDeviceGetSerial", a.nvmlDeviceGetSerial);
    g.vbios_version = r.text("nvmlDeviceGetVbiosVersion", a.nvmlDeviceGetVbiosVersion);

    // PCI: the versioned Ext struct when the driver has it, else v3.
    std::string why;
    std::string bus_id;
    std::uint32_t dev_id = 0, subsys = 0;
    if (a.nvmlDeviceGetPciInfoExt) {
        nvmlPciInfoExt_v1_t p{};
        p.version = kPciInfoExt_v1;
        why = r.call("nvmlDeviceGetPciInfoExt", a.nvmlDeviceGetPciInfoExt, &p);
        bus_id = p.busId, dev_id = p.pciDeviceId, subsys = p.pciSubSystemId;
    }
    if (!a.nvmlDeviceGetPciInfoExt || (!why.empty() && !g.lost)) {
        nvmlPciInfo_t p{};
        why = r.call("nvmlDeviceGetPciInfo_v3", a.nvmlDeviceGetPciInfo, &p);
        bus_id = p.busId, dev_id = p.pciDeviceId, subsys = p.pciSubSystemId;
    }
    fill(g.pci_bus_id, why, bus_id);
    fill(g.pci_device_id, why, dev_id >> 16);  // upper half is the device id, lower the vendor
    fill(g.pci_subsystem_id, why, subsys);

    unsigned arch = 0;
    why = r.call("nvmlDeviceGetArchitecture", a.nvmlDeviceGetArchitecture, &arch);
    fill(g.architecture, why, architecture_name(arch));
    int ma = 0, mi = 0;
    why = r.call("nvmlDeviceGetCudaComputeCapability", a.nvmlDeviceGetCudaComputeCapability, &ma, &mi);
    fill(g.compute_capability, why, std::to_string(ma) + "." + std::to_string(mi));
    g.sm_count = Fact<int>::absent("read through CUDA only");

    // Memory: v2 reports what the driver reserves; v1 folds it into "used".
    bool mem_done = false;
    if (a.nvmlDeviceGetMemoryInfo_v2) {
        nvmlMemory_v2_t m{};
        m.version = kMemory_v2;
        why = r.call("nvmlDeviceGetMemoryInfo_v2", a.nvmlDeviceGetMemoryInfo_v2, &m);
        if (why.empty()) {
            g.memory_total_bytes = m.total, g.memory_reserved_bytes = m.reserved;
            g.memory_used_bytes = m.used, g.memory_free_bytes = m.free;
            mem_done = true;
        }
    }
    if (!mem_done) {
        nvmlMemory_t m{};
        why = r.call("nvmlDeviceGetMemoryInfo", a.nvmlDeviceGetMemoryInfo, &m);
        fill(g.memory_total_bytes, why, static_cast<std::uint64_t>(m.total));
        fill(g.memory_used_bytes, why, static_cast<std::uint64_t>(m.used));
        fill(g.memory_free_bytes, why, static_cast<std::uint64_t>(m.free));
        g.memory_reserved_bytes = Fact<std::uint64_t>::absent(
            a.nvmlDeviceGetMemoryInfo_v2 ? why : driver_lacks("nvmlDeviceGetMemoryInfo_v2"));
    }

    nvmlEnableState_t cur{}, pend{};
    why = r.call("nvmlDeviceGetEccMode", a.nvmlDeviceGetEccMode, &cur, &pend);
    fill(g.ecc_enabled, why, cur == NVML_FEATURE_ENABLED);
    fill(g.ecc_pending, why, pend == NVML_FEATURE_ENABLED);
    auto ecc = [&](Fact<std::uint64_t>& out, nvmlMemoryErrorType_t t, nvmlEccCounterType_t c) {
        unsigned long long v = 0;
        {
            // The call must finish before its output is read: argument order is unspecified.
            auto why_ = r.call("nvmlDeviceGetTotalEccErrors", a.nvmlDeviceGetTotalEccErrors, t, c, &v);
            fill(out, why_, static_cast<std::uint64_t>(v));
        }
    };
    ecc(g.ecc.volatile_corrected, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC);
    ecc(g.ecc.volatile_uncorrected, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC);
    ecc(g.ecc.aggregate_corrected, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC);
    ecc(g.ecc.aggregate_uncorrected, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC);

    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    why = r.call("nvmlDeviceGetRemappedRows", a.nvmlDeviceGetRemappedRows, &corr, &unc, &pending, &failed);
    fill(g.remapped_rows_correctable, why, std::uint32_t(corr));
    fill(g.remapped_rows_uncorrectable, why, std::uint32_t(unc));
    fill(g.remap_pending, why, pending != 0);
    fill(g.remap_failure, why, failed != 0);
    auto pages = [&](Fact<std::uint32_t>& out, nvmlPageRetirementCause_t cause) {
        unsigned n = 0;  // count only: a null address buffer with count 0 asks for the size
        std::string w = r.call("nvmlDeviceGetRetiredPages", a.nvmlDeviceGetRetiredPages, cause, &n,
                               static_cast<unsigned long long*>(nullptr));
        if (w.find("NVML_ERROR_INSUFFICIENT_SIZE") != std::string::npos) w.clear();
        fill(out, w, std::uint32_t(n));
    };
    pages(g.retired_pages_single_bit, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
    pages(g.retired_pages_double_bit, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
    nvmlEnableState_t rp{};
    {
        // The call must finish before its output is read: argument order is unspecified.
        auto why_ = r.call("nvmlDeviceGetRetiredPagesPendingStatus", a.nvmlDeviceGetRetiredPagesPendingStatus, &rp);
        fill(g.retired_pages_pending, why_, rp == NVML_FEATURE_ENABLED);
    }

    r.uint(g.pcie_gen_current, "nvmlDeviceGetCurrPcieLinkGeneration", a.nvmlDeviceGetCurrPcieLinkGeneration);
    r.uint(g.pcie_gen_max_gpu, "nvmlDeviceGetGpuMaxPcieLinkGeneration", a.nvmlDeviceGetGpuMaxPcieLinkGeneration);
    r.uint(g.pcie_gen_max_host, "nvmlDeviceGetMaxPcieLinkGeneration", a.nvmlDeviceGetMaxPcieLinkGeneration);
    r.uint(g.pcie_width_current, "nvmlDeviceGetCurrPcieLinkWidth", a.nvmlDeviceGetCurrPcieLinkWidth);
    r.uint(g.pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth", a.nvmlDeviceGetMaxPcieLinkWidth);
    r.uint(g.pcie_replay_count, "nvmlDeviceGetPcieReplayCounter", a.nvmlDeviceGetPcieReplayCounter);
    read_nvlinks(r);

    nvmlEnableState_t pm{};
    {
        // The call must finish before its output is read: argument order is unspecified.
        auto why_ = r.call("nvmlDeviceGetPersistenceMode", a.nvmlDeviceGetPersistenceMode, &pm);
        fill(g.persistence_mode, why_, pm == NVML_FEATURE_ENABLED);
    }
    nvmlComputeMode_t cm{};
    {
        // The call must finish before its output is read: argument order is unspecified.
        auto why_ = r.call("nvmlDeviceGetComputeMode", a.nvmlDeviceGetComputeMode, &cm);
        fill(g.compute_mode, why_, std::string(compute_mode_name(cm)));
    }
    unsigned mig = 0, mig_pending = 0;
    {
        // The call must finish before its output is read: argument order is unspecified.
        auto why_ = r.call("nvmlDeviceGetMigMode", a.nvmlDeviceGetMigMode, &mig, &mig_pending);
        fill(g.mig_enabled, why_, mig != 0);
    }
    nvmlGpuVirtualizationMode_t vm{};
    {
        // The call must finish before its output is read: argument order is unspecified.
        auto why_ = r.call("nvmlDeviceGetVirtualizationMode", a.nvmlDeviceGetVirtualizationMode, &vm);
        fill(g.virtualization_mode, why_, std::string(virtualization_name(vm)));
    }

    // NVML reports power in milliwatts.
    r.uint(g.power_draw_w, "nvmlDeviceGetPowerUsage", a.nvmlDeviceGetPowerUsage, 1e-3);
    r.uint(g.power_limit_w, "nvmlDeviceGetPowerManagementLimit", a.nvmlDeviceGetPowerManagementLimit, 1e-3);
    r.uint(g.power_default_limit_w, "nvmlDeviceGetPowerManagementDefaultLimit",
           a.nvmlDeviceGetPowerManagementDefaultLimit, 1e-3);
    r.uint(g.power_enforced_limit_w, "nvmlDeviceGetEnforcedPowerLimit", a.nvmlDeviceGetEnforcedPowerLimit, 1e-3);
    unsigned pmin = 0, pmax = 0;
    why = r.call("nvmlDeviceGetPowerManagementLimitConstraints", a.nvmlDeviceGetPowerManagementLimitConstraints,
                 &pmin, &pmax);
    fill(g.power_min_limit_w, why, pmin * 1e-3);
    fill(g.power_max_limit_w, why, pmax * 1e-3);

    auto clock = [&](Fact<int>& out, const char* sym, nvmlDeviceGetClockInfo_fn fn, nvmlClockType_t t) {
        unsigned mhz = 0;
        {
            // The call must finish before its output is read: argument order is unspecified.
            auto why_ = r.call(sym, fn, t, &mhz);
            fill(out, why_, static_cast<int>(mhz));
        }
    };
    clock(g.clock_sm_mhz, "nvmlDeviceGetClockInfo", a.nvmlDeviceGetClockInfo, NVML_CLOCK_SM);
    clock(g.clock_mem_mhz, "nvmlDeviceGetClockInfo", a.nvmlDeviceGetClockInfo, NVML_CLOCK_MEM);
    clock(g.clock_sm_max_mhz, "nvmlDeviceGetMaxClockInfo", a.nvmlDeviceGetMaxClockInfo, NVML_CLOCK_SM);
    clock(g.clock_mem_max_mhz, "nvmlDeviceGetMaxClockInfo", a.nvmlDeviceGetMaxClockInfo, NVML_CLOCK_MEM);
    unsigned long long reasons = 0;
    {
        // The call must finish before its output is read: argument order is unspecified.
        auto why_ = r.call("nvmlDeviceGetCurrentClocksEventReasons", a.nvmlDeviceGetCurrentClocksEventReasons, &reasons);
        fill(g.clock_event_reasons, why_, static_cast<std::uint64_t>(reasons));
    }

    unsigned t = 0;
    {
        // The call must finish before its output is read: argument order is unspecified.
        auto why_ = r.call("nvmlDeviceGetTemperature", a.nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU, &t);
        fill(g.temperature_c, why_, static_cast<int>(t));
    }
    auto threshold = [&](Fact<int>& out, nvmlTemperatureThresholds_t which) {
        unsigned c = 0;
        {
            // The call must finish before its output is read: argument order is unspecified.
            auto why_ = r.call("nvmlDeviceGetTemperatureThreshold", a.nvmlDeviceGetTemperatureThreshold, which, &c);
            fill(out, why_, static_cast<int>(c));
        }
    };
    threshold(g.temperature_slowdown_c, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
    threshold(g.temperature_shutdown_c, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
    threshold(g.temperature_memory_max_c, NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
    if (g.lost) {
        g.temperature_memory_c = Fact<int>::absent("GPU is lost");
    } else {
        auto mt = read_memory_temperature(a, r.dev);
        if (mt.celsius) g.temperature_memory_c = Fact<int>(static_cast<int>(std::lround(*mt.celsius)));
        else if (mt.rc > 0 && mt.rc != NVML_ERROR_NOT_SUPPORTED)  // a real failure: logged, lost noticed
            g.temperature_memory_c = Fact<int>::absent(r.status("nvmlDeviceGetFieldValues", mt.rc));
        else g.temperature_memory_c = Fact<int>::absent(mt.absent_reason);
    }
    r.uint(g.fan_percent, "nvmlDeviceGetFanSpeed", a.nvmlDeviceGetFanSpeed);
    nvmlUtilization_t u{};
    why = r.call("nvmlDeviceGetUtilizationRates", a.nvmlDeviceGetUtilizationRates, &u);
    fill(g.utilization_gpu_percent, why, static_cast<int>(u.gpu));
    fill(g.utilization_memory_percent, why, static_cast<int>(u.memory));

    std::string why_c, why_g;
    read_processes(r, fs, "nvmlDeviceGetComputeRunningProcesses_v3", a.nvmlDeviceGetComputeRunningProcesses,
                   "nvmlDeviceGetComputeRunningProcesses", a.nvmlDeviceGetComputeRunningProcesses_v1, "compute",
                   why_c);
    read_processes(r, fs, "nvmlDeviceGetGraphicsRunningProcesses_v3", a.nvmlDeviceGetGraphicsRunningProcesses,
                   "nvmlDeviceGetGraphicsRunningProcesses", a.nvmlDeviceGetGraphicsRunningProcesses_v1, "graphics",
                   why_g);
    if (!why_c.empty()) g.processes_absent_reason = why_c;  // graphics lists are often unsupported

    r.uint(g.numa_node, "nvmlDeviceGetNumaNodeId", a.nvmlDeviceGetNumaNodeId);
    std::uint64_t mask[16] = {0};  // 1024 CPUs
    static_assert(sizeof(unsigned long) == sizeof(std::uint64_t), "64-bit Linux only");
    why = r.call("nvmlDeviceGetCpuAffinity", a.nvmlDeviceGetCpuAffinity, 16u, reinterpret_cast<unsigned long*>(mask));
    fill(g.cpu_affinity, why, cpu_list_from_mask(mask, 16));
}

// The matrix like `nvidia-smi topo -m`: NV<n> when n NVLinks join two GPUs, else the PCIe path.
void read_topology(const NvmlApi& a, const std::vector<nvmlDevice_t>& devs, Inventory& inv) {
    std::size_t n = inv.gpus.size();
    if (n == 0) return;
    if (!a.nvmlDeviceGetTopologyCommonAncestor) inv.topology.absent_reason = driver_lacks("nvmlDeviceGetTopologyCommonAncestor");
    inv.topology.matrix.assign(n, std::vector<std::string>(n, "?"));
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            auto& cell = inv.topology.matrix[i][j];
            if (i == j) {
                cell = "X";
                continue;
            }
            const GpuInfo& gi = inv.gpus[i];
            const GpuInfo& gj = inv.gpus[j];
            int links = 0;
            if (gj.pci_bus_id) {
                std::string target = normalize_pci_bus_id(*gj.pci_bus_id);
                for (const auto& l : gi.nvlinks)
                    if (l.active.value_or(false) && l.remote_pci_bus_id &&
                        normalize_pci_bus_id(*l.remote_pci_bus_id) == target)
                        ++links;
            }
            // On NVSwitch boards (HGX) every link goes to a switch and any two GPUs on the fabric
            // talk over all of them: nvidia-smi shows NV<links> for such pairs, and so do we.
            if (links == 0) {
                auto switch_links = [](const GpuInfo& g) {
                    int k = 0;
                    for (const auto& l : g.nvlinks)
                        if (l.active.value_or(false) && l.remote_type.value_or("") == "switch") ++k;
                    return k;
                };
                links = std::min(switch_links(gi), switch_links(gj));
            }
            if (links > 0) {
                cell = "NV" + std::to_string(links);
                continue;
            }
            if (gi.lost || gj.lost || !a.nvmlDeviceGetTopologyCommonAncestor) continue;
            nvmlGpuTopologyLevel_t level{};
            if (a.nvmlDeviceGetTopologyCommonAncestor(devs[i], devs[j], &level) == NVML_SUCCESS)
                cell = topology_label(level);
        }
    }
}

void read_nvml(const NvmlApi& a, Inventory& inv, const HostFs& fs) {
    int rc = a.nvmlInit();
    if (rc != NVML_SUCCESS) {
        inv.nvml_init_status = rc;
        inv.nvml_absent_reason = "nvmlInit_v2 failed: " + a.error_name(rc) + " (" + nvml_status_name(rc) + ")";
        inv.errors.push_back(inv.nvml_absent_reason + ": " + nvml_advice(rc));
        return;
    }
    inv.nvml_present = true;
    char buf[96] = {0};
    if (!a.nvmlSystemGetDriverVersion) inv.driver_version = Fact<std::string>::absent(driver_lacks("nvmlSystemGetDriverVersion"));
    else if (int r = a.nvmlSystemGetDriverVersion(buf, sizeof buf - 1); r != NVML_SUCCESS)
        inv.driver_version = Fact<std::string>::absent(nvml_absent_reason(r));
    else inv.driver_version = std::string(buf);
    std::memset(buf, 0, sizeof buf);
    if (!a.nvmlSystemGetNVMLVersion) inv.nvml_version = Fact<std::string>::absent(driver_lacks("nvmlSystemGetNVMLVersion"));
    else if (int r = a.nvmlSystemGetNVMLVersion(buf, sizeof buf - 1); r != NVML_SUCCESS)
        inv.nvml_version = Fact<std::string>::absent(nvml_absent_reason(r));
    else inv.nvml_version = std::string(buf);
    if (!inv.cuda_driver_version && a.nvmlSystemGetCudaDriverVersion) {
        int v = 0;
        if (a.nvmlSystemGetCudaDriverVersion(&v) == NVML_SUCCESS) inv.cuda_driver_version = v;
    }

    unsigned count = 0;
    if (int r = a.nvmlDeviceGetCount(&count); r != NVML_SUCCESS) {
        inv.errors.push_back("nvmlDeviceGetCount failed: " + a.error_name(r) + ": " + nvml_advice(r));
        a.nvmlShutdown();
        return;
    }
    std::vector<nvmlDevice_t> devs;
    for (unsigned i = 0; i < count; ++i) {
        GpuInfo g;
        g.index = static_cast<int>(i);
        nvmlDevice_t dev = nullptr;
        int r = a.nvmlDeviceGetHandleByIndex(i, &dev);
        if (r != NVML_SUCCESS) {
            // The GPU is still listed, with every fact absent for this reason.
            g.errors.push_back("nvmlDeviceGetHandleByIndex_v2 failed: " + a.error_name(r) + ": " + nvml_advice(r));
            if (r == NVML_ERROR_GPU_IS_LOST) g.lost = true;
            g.name = Fact<std::string>::absent(nvml_absent_reason(r));
        } else {
            try {
                read_gpu(a, dev, g, fs);
            } catch (const std::exception& e) {
                g.errors.push_back(std::string("reading this GPU stopped: ") + e.what());
            }
        }
        devs.push_back(dev);
        inv.gpus.push_back(std::move(g));
    }
    read_topology(a, devs, inv);
    a.nvmlShutdown();
}

}  // namespace

Inventory collect_inventory(const InventoryOptions& opt) {
    Inventory inv;
    HostFs fs(opt.root);
    CudaApi cuda = CudaApi::load();
    std::vector<CudaDevice> cuda_devs;
    if (!cuda.ok()) {
        inv.cuda_absent_reason = cuda.error;
        inv.cuda_driver_version = Fact<int>::absent(cuda.error);
    } else {
        inv.libcuda_path = cuda.path;
        cuda_devs = read_cuda(cuda, inv);
    }

    NvmlApi nvml = NvmlApi::load();
    if (!nvml.ok()) {
        inv.nvml_absent_reason = nvml.error;
        inv.driver_version = inv.nvml_version = Fact<std::string>::absent(nvml.error);
        if (cuda.ok()) inv.errors.push_back(nvml.error);
    } else {
        inv.libnvml_path = nvml.path;
        read_nvml(nvml, inv, fs);
    }
    if (!inv.nvml_present && !inv.driver_version && !inv.nvml_absent_reason.empty())
        inv.driver_version = inv.nvml_version = Fact<std::string>::absent(inv.nvml_absent_reason);

    // Without NVML the CUDA devices are still listed, with what CUDA knows.
    if (!inv.nvml_present) {
        for (const auto& c : cuda_devs) {
            GpuInfo g;
            g.index = c.ordinal;
            g.name = c.name;
            g.uuid = c.uuid;
            g.pci_bus_id = c.bus_id.empty() ? Fact<std::string>::absent("not read") : Fact<std::string>(c.bus_id);
            g.memory_total_bytes = c.memory_total_bytes;
            g.errors.push_back("NVML unavailable: " + inv.nvml_absent_reason);
            inv.gpus.push_back(std::move(g));
        }
        inv.topology.absent_reason = "NVML unavailable: " + inv.nvml_absent_reason;
    }

    // CUDA ordinals differ from NVML indices unless CUDA_DEVICE_ORDER=PCI_BUS_ID: match by bus id.
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    for (auto& g : inv.gpus) {
        if (!inv.cuda_present) {
            std::string why = g.mig_enabled.value_or(false) ? cuda_invisible_reason(g, visible) : inv.cuda_absent_reason;
            g.cuda_ordinal = Fact<int>::absent(why);
            g.sm_count = Fact<int>::absent(why);
            continue;
        }
        std::string bus = g.pci_bus_id ? normalize_pci_bus_id(*g.pci_bus_id) : "";
        auto it = std::find_if(cuda_devs.begin(), cuda_devs.end(),
                               [&](const CudaDevice& c) { return !bus.empty() && c.bus_id == bus; });
        if (it == cuda_devs.end()) {
            std::string why = cuda_invisible_reason(g, visible);
            g.cuda_ordinal = Fact<int>::absent(why);
            g.sm_count = Fact<int>::absent(why);
            continue;
        }
        g.cuda_ordinal = it->ordinal;
        g.sm_count = it->sm_count;
        if (!g.compute_capability) g.compute_capability = it->compute_capability;
        if (!g.memory_total_bytes) g.memory_total_bytes = it->memory_total_bytes;
    }
    inv.problems = diagnose_driver(inv, visible);
    return inv;
}

DriverInfo driver_info_of(const Inventory& inv) {
    DriverInfo d;
    d.present = inv.cuda_present || inv.nvml_present;
    d.cuda_usable = inv.cuda_present;
    if (!inv.cuda_present) d.cuda_absent_reason = inv.cuda_absent_reason;
    if (!d.present) d.absent_reason = inv.cuda_absent_reason;
    d.problems = inv.problems;
    if (inv.driver_version) d.driver_version = *inv.driver_version;
    if (inv.cuda_driver_version) d.cuda_driver_version = *inv.cuda_driver_version;
    if (inv.nvml_version) d.nvml_version = *inv.nvml_version;
    if (!inv.libcuda_path.empty()) d.libcuda_path = inv.libcuda_path;
    if (!inv.libnvml_path.empty()) d.libnvml_path = inv.libnvml_path;
    return d;
}

std::vector<GpuSummary> gpu_summaries_of(const Inventory& inv) {
    std::vector<GpuSummary> out;
    for (const auto& g : inv.gpus) {
        GpuSummary s;
        s.index = g.index;
        if (g.name) s.name = *g.name;
        if (g.uuid) s.uuid = *g.uuid;
        if (g.pci_bus_id) s.pci_bus_id = *g.pci_bus_id;
        if (g.memory_total_bytes) s.memory_total_bytes = *g.memory_total_bytes;
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace gpuvet
