// The inventory collector: CUDA driver API for ordinals, SM counts and compute capability; NVML
// for everything else. Every call is guarded: one failing call or GPU never stops the others.
#include "gpu/inventory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/text_safety.hpp"
#include "gpu/driver_problems.hpp"
#include "gpu/device/amd_backend.hpp"
#include "gpu/device/backend_choice.hpp"
#include "gpu/device/nvml_backend.hpp"
#include "gpu/device/rocm_smi_backend.hpp"
#include "gpu/bindings/cuda_api.hpp"
#include "core/host_fs.hpp"

namespace gpuvet {

namespace {

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
    if (rc == kCudaNoAnswer) return api.error_name(rc);  // names the call, its budget and the advice
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
        inv.errors.push_back(rc == kCudaNoAnswer ? inv.cuda_absent_reason
                                                 : inv.cuda_absent_reason + ": " + cuda_advice(rc));
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
        else if (int rc = api.cuDeviceGetAttribute(&x, a, d); rc != 0)
            why = cuda_reason(api, "cuDeviceGetAttribute", rc);
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
        else c.name = visible_text(name, false);
        std::size_t bytes = 0;
        if (!api.cuDeviceTotalMem)
            c.memory_total_bytes = Fact<std::uint64_t>::absent(driver_lacks("cuDeviceTotalMem_v2"));
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

// What the inventory samples: everything but the throughput counters, which need a window.
constexpr unsigned kInventoryReadings = kReadEverything & ~(kReadPcieThroughput | kReadNvLinkThroughput | kReadGpm);

// NV<n> when n NVLinks join two GPUs (directly, or through NVSwitches), else 0.
int nvlinks_between(const GpuInfo& gi, const GpuInfo& gj) {
    int links = 0;
    if (gj.pci_bus_id) {
        std::string target = normalize_pci_bus_id(*gj.pci_bus_id);
        for (const auto& l : gi.nvlinks)
            if (l.active.value_or(false) && l.remote_pci_bus_id && normalize_pci_bus_id(*l.remote_pci_bus_id) == target)
                ++links;
    }
    if (links > 0) return links;
    // On NVSwitch boards (HGX) every link goes to a switch and any two GPUs on the fabric
    // talk over all of them: nvidia-smi shows NV<links> for such pairs, and so do we.
    auto switch_links = [](const GpuInfo& g) {
        int k = 0;
        for (const auto& l : g.nvlinks)
            if (l.active.value_or(false) && l.remote_type.value_or("") == "switch") ++k;
        return k;
    };
    return std::min(switch_links(gi), switch_links(gj));
}

// How an xGMI link joins two AMD GPUs: "XGMI" trained, "XDOWN" listed but not trained, empty when
// no listed link joins them or its state is unread (then the driver's link type stands).
std::string xgmi_between(const GpuInfo& gi, const GpuInfo& gj) {
    if (!gj.pci_bus_id) return {};
    std::string target = normalize_pci_bus_id(*gj.pci_bus_id);
    bool down = false;
    for (const auto& l : gi.xgmi_links) {
        if (!l.remote_pci_bus_id || normalize_pci_bus_id(*l.remote_pci_bus_id) != target || !l.active) continue;
        if (*l.active) return "XGMI";
        down = true;
    }
    return down ? "XDOWN" : "";
}

// The matrix like `nvidia-smi topo -m`: NV<n> when n NVLinks join two GPUs, else the PCIe path.
void read_topology(const DeviceBackend& b, const std::vector<std::unique_ptr<GpuDevice>>& devs, Inventory& inv) {
    std::size_t n = inv.gpus.size();
    if (n == 0) return;
    inv.topology.absent_reason = b.pcie_paths_absent_reason();
    inv.topology.matrix.assign(n, std::vector<std::string>(n, "?"));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            auto& cell = inv.topology.matrix[i][j];
            if (i == j) {
                cell = "X";
            } else if (int links = nvlinks_between(inv.gpus[i], inv.gpus[j]); links > 0) {
                cell = "NV" + std::to_string(links);
            } else if (std::string x = xgmi_between(inv.gpus[i], inv.gpus[j]); !x.empty()) {
                cell = x;
            } else if (auto path = b.pcie_path(*devs[i], *devs[j])) {
                cell = *path;
            }
        }
}

GpuInfo read_gpu(GpuDevice& dev, const HostFs& fs) {
    GpuInfo g;
    g.index = dev.index();
    std::string stopped;
    try {
        static_cast<DeviceFacts&>(g) = dev.describe();
        static_cast<DeviceSample&>(g) = dev.sample(kInventoryReadings);
    } catch (const std::exception& e) {
        stopped = std::string("reading this GPU stopped: ") + e.what();
    }
    for (auto& p : g.processes)
        if (auto comm = fs.read_line("/proc/" + std::to_string(p.pid) + "/comm")) p.name = *comm;
    g.lost = dev.lost();
    g.errors = dev.errors();
    if (!stopped.empty()) g.errors.push_back(stopped);
    return g;
}

void read_gpus(const DeviceBackend& b, Inventory& inv, const HostFs& fs) {
    Fact<int> count = b.device_count();
    if (!count) {
        inv.errors.push_back(count.absent_reason);
        return;
    }
    std::vector<std::unique_ptr<GpuDevice>> devs;
    for (int i = 0; i < *count; ++i) {
        devs.push_back(b.open(i));
        inv.gpus.push_back(read_gpu(*devs.back(), fs));
    }
    read_topology(b, devs, inv);
}

void read_nvml(Inventory& inv, bool cuda_ok) {
    const NvmlSession& s = NvmlSession::shared();
    if (!s.loaded()) {
        inv.nvml_absent_reason = s.absent_reason();
        inv.driver_version = inv.nvml_version = Fact<std::string>::absent(s.absent_reason());
        if (cuda_ok) inv.errors.push_back(s.absent_reason());
        return;
    }
    inv.libnvml_path = s.api().path;
    if (!s.ok()) {
        inv.nvml_init_status = s.init_status();
        inv.nvml_absent_reason = s.absent_reason();
        inv.errors.push_back(s.init_status() == kNvmlNoAnswer ? inv.nvml_absent_reason
                                                              : inv.nvml_absent_reason + ": " + s.init_advice());
        return;
    }
    inv.nvml_present = true;
    SystemFacts sys = NvmlBackend::shared().system();
    inv.driver_version = sys.driver_version;
    inv.nvml_version = sys.library_version;
    if (!inv.cuda_driver_version && sys.cuda_driver_version) inv.cuda_driver_version = sys.cuda_driver_version;
}

// AMD's side of the run's choice: which library lists AMD GPUs, its versions, or why none does.
void read_amd_state(const GpuBackends& b, Inventory& inv) {
    const VendorBackend& amd = b.amd();
    inv.amd_present = amd.in_use();
    if (!amd.in_use()) {
        inv.amd_absent_reason = amd.absent_reason;
        inv.amd_driver_version = inv.amd_library_version = Fact<std::string>::absent(amd.absent_reason);
        return;
    }
    inv.amd_library = amd.library;
    inv.libamd_path =
        amd.library == "ROCm SMI" ? RocmSmiSession::shared().api().path : AmdSmiSession::shared().api().path;
    SystemFacts sys = amd.backend->system();
    inv.amd_driver_version = sys.driver_version;
    inv.amd_library_version = sys.library_version;
}

bool is_amd(const GpuInfo& g) { return g.vendor.value_or("") == "AMD"; }

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

    read_nvml(inv, cuda.ok());
    // One choice of vendors for the run (backend_choice.hpp): NVIDIA's GPUs, AMD's, or both.
    const GpuBackends& backends = GpuBackends::shared();
    read_amd_state(backends, inv);
    if (inv.nvml_present || inv.amd_present) read_gpus(backends.devices(), inv, fs);
    if (backends.both())
        for (auto& g : inv.gpus)
            if (!is_amd(g)) g.vendor = std::string("NVIDIA");
    if (!inv.nvml_present && !inv.driver_version && !inv.nvml_absent_reason.empty())
        inv.driver_version = inv.nvml_version = Fact<std::string>::absent(inv.nvml_absent_reason);

    // Without NVML the CUDA devices are still listed, with what CUDA knows.
    if (!inv.nvml_present && !inv.amd_present) {
        for (const auto& c : cuda_devs) {
            GpuInfo g;
            g.index = c.ordinal;
            g.name = c.name;
            g.uuid = c.uuid;
            g.pci_bus_id = c.bus_id.empty() ? Fact<std::string>::absent("not read") : Fact<std::string>(c.bus_id);
            g.memory_total_bytes = c.memory_total_bytes;
            // Unread, not absent: no list of links must not read as a GPU that has none.
            g.nvlink_absent_reason = "NVML unavailable: " + inv.nvml_absent_reason;
            g.errors.push_back("NVML unavailable: " + inv.nvml_absent_reason);
            inv.gpus.push_back(std::move(g));
        }
        inv.topology.absent_reason = "NVML unavailable: " + inv.nvml_absent_reason;
    }

    // CUDA ordinals differ from NVML indices unless CUDA_DEVICE_ORDER=PCI_BUS_ID: match by bus id.
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    for (auto& g : inv.gpus) {
        if (is_amd(g)) {
            g.cuda_ordinal = Fact<int>::absent("an AMD GPU: CUDA runs on NVIDIA GPUs only (AMD GPUs run HIP)");
            g.sm_count = Fact<int>::absent("an NVIDIA unit: AMD GPUs have compute units (see compute_units)");
            continue;
        }
        if (!inv.cuda_present) {
            std::string why =
                g.mig_enabled.value_or(false) ? cuda_invisible_reason(g, visible) : inv.cuda_absent_reason;
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
    d.nvidia_found = inv.cuda_present || inv.nvml_present;
    d.present = d.nvidia_found || inv.amd_present;
    d.cuda_usable = inv.cuda_present;
    d.amd_present = inv.amd_present;
    d.amd_absent_reason = inv.amd_absent_reason;
    if (inv.amd_driver_version) d.amd_driver_version = *inv.amd_driver_version;
    if (!inv.amd_library.empty())
        d.amd_library = inv.amd_library + (inv.amd_library_version ? " " + *inv.amd_library_version : "");
    if (!inv.libamd_path.empty()) d.amd_library_path = inv.libamd_path;
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
        if (g.vendor) s.vendor = *g.vendor;
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace gpuvet
