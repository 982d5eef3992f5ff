// Fake CUDA driver (libcuda.so.1) driven by a scenario file. Device memory is host memory behind
// fake device addresses; copies and memsets really move bytes, and a simulated clock charges each
// operation bytes / scenario bandwidth, so bandwidth timed with events equals the scenario figure.
// Built twice: current driver, and with FAKE_OLD_DRIVER a libcuda without the newer _v2 entry points.
#pragma GCC visibility push(default)
#include <cuda.h>
#pragma GCC visibility pop

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>

#include "ptx/kernel_launch.hpp"
#include "ptx/ptx_parse.hpp"
#include "fake_hang.hpp"
#include "scenario.hpp"

// Legacy names the real library still exports next to their _v2 successors (same signatures).
#undef cuDeviceGetUuid
#undef cuEventElapsedTime
#undef cuDevicePrimaryCtxRelease
extern "C" {
__attribute__((visibility("default"))) CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev);
__attribute__((visibility("default"))) CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end);
__attribute__((visibility("default"))) CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
}
static_assert(std::is_same_v<decltype(&cuDeviceGetUuid), decltype(&cuDeviceGetUuid_v2)>);
static_assert(std::is_same_v<decltype(&cuEventElapsedTime), decltype(&cuEventElapsedTime_v2)>);
static_assert(std::is_same_v<decltype(&cuDevicePrimaryCtxRelease), decltype(&cuDevicePrimaryCtxRelease_v2)>);

struct CUctx_st {
    int dev = 0;
    int refs = 0;
    double null_stream_ns = 0;  // the legacy default stream's position on the simulated clock
    std::set<int> peers;        // devices whose memory this context may access directly
};
struct CUstream_st {
    CUctx_st* ctx = nullptr;
    double t_ns = 0;
};
struct CUevent_st {
    unsigned flags = 0;
    bool recorded = false;
    double t_ns = 0;
};
struct CUmod_st {
    CUctx_st* ctx = nullptr;                       // the context it was loaded into, which owns it
    std::shared_ptr<const fake::ptx::Module> ptx;  // decoded for the interpreter
};
struct CUfunc_st {
    std::shared_ptr<const fake::ptx::Module> ptx;
    uint32_t entry = 0;
};

namespace {

struct Alloc {
    void* host = nullptr;
    size_t bytes = 0;
    int dev = 0;
    uint64_t phys = 0;  // where it lies in the GPU's memory (bad cells are physical offsets)
    // Once exported as a DMA-BUF: the shared-memory file its pages now live in, so the exported fd
    // names the very bytes the copies and kernels see, in this process and (by name) in another.
    int shm_fd = -1;
    std::string shm_name;
};

struct Device {
    fake::Gpu gpu;
    unsigned nvml_index = 0;  // position among all GPUs (MIG-enabled ones are hidden from CUDA)
    CUctx_st primary;
    uint64_t allocated = 0;
    uint64_t next_addr = 0;
    std::map<uint64_t, uint64_t> phys_used;  // physical start -> bytes (2 MiB pages), first fit
};

std::recursive_mutex g_mu;
bool g_init = false;
fake::Scenario g_sc;
std::vector<std::unique_ptr<Device>> g_devs;
std::map<CUdeviceptr, Alloc> g_allocs;  // by start address
std::map<void*, int> g_host_allocs;     // pinned buffer -> device of the context that made it
std::set<CUstream_st*> g_streams;
std::set<CUevent_st*> g_events;
std::set<CUmod_st*> g_modules;
thread_local CUctx_st* t_ctx = nullptr;

// The CUDA ordinal a call names for GPUVET_FAKE_HANG: its device argument, else the thread's
// current context (read without the lock: the hang must not hold it).
int ctx_gpu() { return t_ctx ? t_ctx->dev : -1; }

#define LOCK std::lock_guard<std::recursive_mutex> lock_(g_mu)
#define INITED \
    if (!g_init) return CUDA_ERROR_NOT_INITIALIZED
#define NEED(p) \
    if (!(p)) return CUDA_ERROR_INVALID_VALUE

void* map_bytes(size_t n) {
    // Untouched pages cost nothing, so large allocations only cost what a test writes.
    void* p = mmap(nullptr, std::max<size_t>(n, 1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

void drop_shm(Alloc& a) {
    if (a.shm_fd < 0) return;
    close(a.shm_fd);
    shm_unlink(a.shm_name.c_str());
    a.shm_fd = -1;
}

// Moves the allocation's pages into a shared-memory file (its bytes kept) and maps that file where
// the pages were; false when the file cannot be made.
bool back_with_shm(CUdeviceptr p, Alloc& a) {
    if (a.shm_fd >= 0) return true;
    const size_t page = size_t(sysconf(_SC_PAGESIZE)), len = (a.bytes + page - 1) / page * page;
    char name[96];
    std::snprintf(name, sizeof name, "/gpuvet-fakecuda-%u-%d-%llx", unsigned(getuid()), int(getpid()),
                  static_cast<unsigned long long>(p));
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    if (ftruncate(fd, off_t(len)) != 0 || pwrite(fd, a.host, a.bytes, 0) != ssize_t(a.bytes) ||
        mmap(a.host, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        close(fd);
        shm_unlink(name);
        return false;
    }
    a.shm_fd = fd;
    a.shm_name = name;
    return true;
}

size_t accounted(size_t bytes) { return (bytes + 255) & ~size_t(255); }

uint64_t free_bytes(const Device& d) {
    uint64_t taken = d.gpu.memory_reserved_bytes + d.gpu.memory_used_bytes + d.allocated;
    for (const auto& p : d.gpu.processes) taken += p.used_bytes;
    return d.gpu.memory_total_bytes > taken ? d.gpu.memory_total_bytes - taken : 0;
}

// Host view of [ptr, ptr+n) if it lies inside one allocation.
Alloc* find_alloc(CUdeviceptr ptr, size_t n, char** host) {
    auto it = g_allocs.upper_bound(ptr);
    if (it == g_allocs.begin()) return nullptr;
    --it;
    if (ptr + n > it->first + it->second.bytes) return nullptr;
    *host = static_cast<char*>(it->second.host) + (ptr - it->first);
    return &it->second;
}

Device* dev_of(CUdevice d) { return d >= 0 && static_cast<size_t>(d) < g_devs.size() ? g_devs[d].get() : nullptr; }

bool valid_ctx(CUctx_st* c) {
    for (auto& d : g_devs)
        if (&d->primary == c && c->refs > 0) return true;
    return false;
}

// Simulated clock. The legacy default stream waits for all work in its context and all work waits for it.
double& cursor(CUstream s, CUctx_st* ctx, double& scratch) {
    if (s) return s->t_ns;
    scratch = ctx->null_stream_ns;
    for (auto* st : g_streams)
        if (st->ctx == ctx) scratch = std::max(scratch, st->t_ns);
    return scratch;
}

// Charges `ns` of simulated time to stream `s` (0: the default stream of the current context).
CUresult charge(CUstream s, double ns) {
    CUctx_st* ctx = s ? s->ctx : t_ctx;
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    if (s && !g_streams.count(s)) return CUDA_ERROR_INVALID_HANDLE;
    if (s) {
        s->t_ns = std::max(s->t_ns, ctx->null_stream_ns) + ns;
    } else {
        double scratch;
        ctx->null_stream_ns = cursor(nullptr, ctx, scratch) + ns;
    }
    return CUDA_SUCCESS;
}

double ns_for(size_t bytes, double gbps) { return gbps > 0 ? static_cast<double>(bytes) / gbps : 0; }

// The scenario's bad cells of allocation `a` at `start`: device address of each 64-bit word -> bits.
std::map<uint64_t, uint64_t> bad_cells(uint64_t start, const Alloc& a) {
    std::map<uint64_t, uint64_t> out;
    for (const auto& c : g_devs[a.dev]->gpu.bad_memory_cells)
        if (c.offset_bytes >= a.phys && c.offset_bytes + 8 <= a.phys + a.bytes)
            out[start + (c.offset_bytes - a.phys)] = c.flip;
    return out;
}

// Host-copy rate of device `dev`: its own, or its share of a PCIe switch uplink among the GPUs of
// that switch whose contexts hold pinned host memory now (those copying at the same time).
double host_rate(int dev, double own) {
    unsigned nvml = g_devs[dev]->nvml_index;
    double rate = own;
    for (const auto& sw : g_sc.pcie_switches) {
        if (std::find(sw.gpus.begin(), sw.gpus.end(), nvml) == sw.gpus.end()) continue;
        std::set<int> active;
        for (auto& [p, d] : g_host_allocs)
            if (std::find(sw.gpus.begin(), sw.gpus.end(), g_devs[d]->nvml_index) != sw.gpus.end()) active.insert(d);
        rate = std::min(rate, sw.gbps / double(std::max<size_t>(1, active.size())));
    }
    return rate;
}

enum class Kind { HtoD, DtoH, DtoD };

// Added by gpuvet_fake_on_device_read: let a library emulated on top of this one (fake cuBLASLt)
// produce results lazily, only for the device bytes a copy is about to read.
std::vector<void (*)(unsigned long long ptr, size_t bytes)> g_read_hooks;

CUresult copy(Kind kind, void* dst_h, CUdeviceptr dst_d, const void* src_h, CUdeviceptr src_d, size_t n, CUstream s) {
    LOCK;
    INITED;
    if (!t_ctx && !s) return CUDA_ERROR_INVALID_CONTEXT;
    if (kind != Kind::HtoD)
        for (auto* hook : g_read_hooks) hook(src_d, n);
    char *dp = static_cast<char*>(dst_h), *sp = const_cast<char*>(static_cast<const char*>(src_h));
    Alloc* a = nullptr;
    if (kind != Kind::DtoH) NEED(a = find_alloc(dst_d, n, &dp));
    if (kind != Kind::HtoD) NEED(a = find_alloc(src_d, n, &sp));
    NEED(dp && sp);
    std::memmove(dp, sp, n);
    const fake::Gpu& g = g_devs[a->dev]->gpu;
    // A device-to-device copy reads and writes every byte: 2n bytes of memory traffic.
    double ns = kind == Kind::HtoD   ? ns_for(n, host_rate(a->dev, g.h2d_bandwidth_gbps))
                : kind == Kind::DtoH ? ns_for(n, host_rate(a->dev, g.d2h_bandwidth_gbps))
                                     : ns_for(2 * n, g.hbm_bandwidth_gbps);
    return charge(s, ns);
}

template <class T>
CUresult fill(CUdeviceptr p, T value, size_t count, CUstream s) {
    LOCK;
    INITED;
    char* h = nullptr;
    Alloc* a = find_alloc(p, count * sizeof(T), &h);
    NEED(a);
    T* t = reinterpret_cast<T*>(h);
    for (size_t i = 0; i < count; ++i) t[i] = value;
    return charge(s, ns_for(count * sizeof(T), g_devs[a->dev]->gpu.hbm_bandwidth_gbps));
}

CUresult attribute(const Device& d, CUdevice_attribute a, int* v) {
    const fake::Gpu& g = d.gpu;
    unsigned dom = 0, bus = 0, dev = 0;
    fake::parse_bus_id(g.pci_bus_id, dom, bus, dev);
    switch (a) {
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = g.sm_count; break;
        case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: *v = g_sc.fabric.dmabuf != "unsupported" ? 1 : 0; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = g.cc_major; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = g.cc_minor; break;
        case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = bus; break;
        case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = dev; break;
        case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = dom; break;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = g.max_sm_clock_mhz * 1000; break;          // kHz
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = g.max_mem_clock_mhz * 1000; break;  // kHz
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = g.memory_bus_width_bits; break;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = g.l2_cache_bytes; break;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
        case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *v = g.ecc_supported && g.ecc_enabled ? 1 : 0; break;
        case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *v = 1; break;
        case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = 3; break;
        case CU_DEVICE_ATTRIBUTE_INTEGRATED: *v = 0; break;
        case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: *v = g.multi_gpu_board ? 1 : 0; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
            *v = g.compute_mode == "prohibited"          ? CU_COMPUTEMODE_PROHIBITED
                 : g.compute_mode == "exclusive_process" ? CU_COMPUTEMODE_EXCLUSIVE_PROCESS
                                                         : CU_COMPUTEMODE_DEFAULT;
            break;
        // Not modelled: an explicit error, never a plausible-looking number.
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

struct ErrorText {
    CUresult code;
    const char* name;
    const char* text;
};
const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access is already enabled"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

}  // namespace

extern "C" {

// ---- fake-only hook ------------------------------------------------------------------------------
// Forgets everything, so the next cuInit reads GPUVET_FAKE_SCENARIO again (a real driver cannot be
// re-initialised; tests that run several scenarios in one process need this).
// ---- hooks for the fake cuBLASLt and NCCL, which run on this library's memory and clock ----------
// Host view of [ptr, ptr + bytes) when it lies inside one allocation, else nullptr.
__attribute__((visibility("default"))) void* gpuvet_fake_host_view(unsigned long long ptr, size_t bytes) {
    LOCK;
    char* h = nullptr;
    return find_alloc(ptr, bytes, &h) ? h : nullptr;
}
// Charges `seconds` of simulated time to stream `s` (nullptr: the current context's default stream).
__attribute__((visibility("default"))) int gpuvet_fake_charge(CUstream s, double seconds) {
    LOCK;
    INITED;
    return charge(s, seconds * 1e9);
}
// The device of stream `s` (nullptr: of the current context); -1 when there is none.
__attribute__((visibility("default"))) int gpuvet_fake_stream_device(CUstream s) {
    LOCK;
    if (s) return g_streams.count(s) ? s->ctx->dev : -1;
    return t_ctx ? t_ctx->dev : -1;
}
// The scenario GPU behind CUDA device `dev` (a fake::Gpu, built from the same scenario.hpp).
__attribute__((visibility("default"))) const void* gpuvet_fake_device_gpu(int dev) {
    LOCK;
    Device* d = g_init ? dev_of(dev) : nullptr;
    return d ? &d->gpu : nullptr;
}
__attribute__((visibility("default"))) const void* gpuvet_fake_scenario(void) {
    LOCK;
    return g_init ? &g_sc : nullptr;
}
__attribute__((visibility("default"))) void gpuvet_fake_on_device_read(void (*hook)(unsigned long long, size_t)) {
    LOCK;
    if (std::find(g_read_hooks.begin(), g_read_hooks.end(), hook) == g_read_hooks.end()) g_read_hooks.push_back(hook);
}

__attribute__((visibility("default"))) void gpuvet_fake_cuda_reset(void) {
    LOCK;
    for (auto& [p, a] : g_allocs) munmap(a.host, std::max<size_t>(a.bytes, 1)), drop_shm(a);
    for (auto& [p, dev] : g_host_allocs) std::free(p);
    for (auto* s : g_streams) delete s;
    for (auto* e : g_events) delete e;
    for (auto* m : g_modules) delete m;
    g_allocs.clear();
    g_host_allocs.clear();
    g_streams.clear();
    g_events.clear();
    g_modules.clear();
    g_devs.clear();
    g_init = false;
    t_ctx = nullptr;
}

// ---- initialisation, errors, versions ------------------------------------------------------------
CUresult CUDAAPI cuInit(unsigned int flags) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    NEED(flags == 0);
    if (g_init) return CUDA_SUCCESS;
    std::string err;
    auto sc = fake::load_scenario_from_env(err);
    if (!sc) {
        std::fprintf(stderr, "fake libcuda: %s\n", err.c_str());
        return CUDA_ERROR_UNKNOWN;
    }
    if (!sc->kernel_driver_loaded) return CUDA_ERROR_NO_DEVICE;
    g_sc = std::move(*sc);
    for (unsigned i = 0; i < g_sc.gpus.size(); ++i) {
        if (g_sc.gpus[i].mig_mode) continue;  // MIG-enabled GPUs show only their instances
        auto d = std::make_unique<Device>();
        d->gpu = g_sc.gpus[i];
        d->nvml_index = i;
        d->primary.dev = static_cast<int>(g_devs.size());
        d->next_addr = 0x7f0000000000ull + (uint64_t(g_devs.size()) << 40);
        g_devs.push_back(std::move(d));
    }
    // As the real driver: with every GPU in MIG mode and no instance, cuInit finds no device.
    if (g_devs.empty()) return CUDA_ERROR_NO_DEVICE;
    g_init = true;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    NEED(version);
    if (!g_init) {  // allowed before cuInit; the version still comes from the scenario
        std::string err;
        auto sc = fake::load_scenario_from_env(err);
        if (!sc) return CUDA_ERROR_UNKNOWN;
        *version = sc->cuda_driver_version;
        return CUDA_SUCCESS;
    }
    *version = g_sc.cuda_driver_version;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** str) {
    fake::hang_point(__func__, ctx_gpu());
    NEED(str);
    for (const auto& e : kErrors)
        if (e.code == error) return *str = e.name, CUDA_SUCCESS;
    *str = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuGetErrorString(CUresult error, const char** str) {
    fake::hang_point(__func__, ctx_gpu());
    NEED(str);
    for (const auto& e : kErrors)
        if (e.code == error) return *str = e.text, CUDA_SUCCESS;
    *str = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
}

// ---- devices -------------------------------------------------------------------------------------
CUresult CUDAAPI cuDeviceGetCount(int* count) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(count);
    *count = static_cast<int>(g_devs.size());
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(device);
    if (!dev_of(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
    fake::hang_point(__func__, dev);
    LOCK;
    INITED;
    Device* d = dev_of(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    NEED(name && len > 0);
    std::snprintf(name, static_cast<size_t>(len), "%s", d->gpu.name.c_str());  // truncates like the driver
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
    fake::hang_point(__func__, dev);
    LOCK;
    INITED;
    Device* d = dev_of(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    NEED(bytes);
    *bytes = d->gpu.memory_total_bytes;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
    fake::hang_point(__func__, dev);
    LOCK;
    INITED;
    Device* d = dev_of(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    NEED(pi);
    return attribute(*d, attrib, pi);
}
namespace {
CUresult uuid_of(CUuuid* uuid, CUdevice dev) {
    LOCK;
    INITED;
    Device* d = dev_of(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    NEED(uuid);
    // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" -> 16 bytes, the same identity NVML reports.
    std::string hex;
    for (char c : d->gpu.uuid.substr(d->gpu.uuid.rfind('-', 4) == 3 ? 4 : 0))
        if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
    std::memset(uuid->bytes, 0, sizeof uuid->bytes);
    for (size_t i = 0; i < 16 && 2 * i + 1 < hex.size(); ++i)
        uuid->bytes[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    return CUDA_SUCCESS;
}
}  // namespace
CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
    fake::hang_point(__func__, dev);
    return uuid_of(uuid, dev);
}
#ifndef FAKE_OLD_DRIVER
CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
    fake::hang_point(__func__, dev);
    return uuid_of(uuid, dev);
}
#endif
CUresult CUDAAPI cuDeviceGetPCIBusId(char* bus_id, int len, CUdevice dev) {
    fake::hang_point(__func__, dev);
    LOCK;
    INITED;
    Device* d = dev_of(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    NEED(bus_id && len > 0);
    unsigned dom = 0, bus = 0, dv = 0;
    fake::parse_bus_id(d->gpu.pci_bus_id, dom, bus, dv);
    std::snprintf(bus_id, static_cast<size_t>(len), "%04x:%02x:%02x.0", dom, bus, dv);  // the driver's format
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer) {
    fake::hang_point(__func__, dev);
    LOCK;
    INITED;
    Device *a = dev_of(dev), *b = dev_of(peer);
    if (!a || !b) return CUDA_ERROR_INVALID_DEVICE;
    NEED(can);
    auto nvlink_up = [](const fake::Gpu& g) { return g.nvlink_count > g.nvlink_down.size(); };
    bool pcie_close = fake::topology_level(g_sc, a->nvml_index, b->nvml_index) <= 30;  // up to HOSTBRIDGE
    if (a->gpu.p2p_disabled || b->gpu.p2p_disabled) return *can = 0, CUDA_SUCCESS;
    *can = dev != peer && ((nvlink_up(a->gpu) && nvlink_up(b->gpu)) || pcie_close) ? 1 : 0;
    return CUDA_SUCCESS;
}

// ---- contexts ------------------------------------------------------------------------------------
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    fake::hang_point(__func__, dev);
    LOCK;
    INITED;
    Device* d = dev_of(dev);
    if (!d) return CUDA_ERROR_INVALID_DEVICE;
    NEED(pctx);
    ++d->primary.refs;
    *pctx = &d->primary;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    fake::hang_point(__func__, dev);
    unsigned teardown_ms = 0;
    {
        LOCK;
        INITED;
        Device* d = dev_of(dev);
        if (!d) return CUDA_ERROR_INVALID_DEVICE;
        if (d->primary.refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
        // The last release destroys the primary context and, as in the real driver, the modules
        // loaded into it (gpuvet relies on that instead of unloading them itself).
        if (--d->primary.refs == 0) {
            for (auto it = g_modules.begin(); it != g_modules.end();) {
                if ((*it)->ctx != &d->primary) {
                    ++it;
                    continue;
                }
                delete *it;
                it = g_modules.erase(it);
            }
            teardown_ms = g_sc.context_release_ms;
        }
    }
    // Outside the lock: other threads' calls go on while this context is torn down.
    if (teardown_ms) std::this_thread::sleep_for(std::chrono::milliseconds(teardown_ms));
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
    fake::hang_point(__func__, dev);
    return cuDevicePrimaryCtxRelease_v2(dev);
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (ctx && !valid_ctx(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    t_ctx = ctx;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(ctx);
    *ctx = t_ctx;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice* dev) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(dev);
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    *dev = t_ctx->dev;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSynchronize(void) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    return t_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;  // all work already ran on the CPU
}
CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(flags == 0);
    if (!t_ctx || !valid_ctx(peer)) return CUDA_ERROR_INVALID_CONTEXT;
    int can = 0;
    cuDeviceCanAccessPeer(&can, t_ctx->dev, peer->dev);
    if (!can) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (!t_ctx->peers.insert(peer->dev).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    return CUDA_SUCCESS;
}

// ---- memory --------------------------------------------------------------------------------------
CUresult CUDAAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(free && total);
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    const Device& d = *g_devs[t_ctx->dev];
    *free = free_bytes(d);
    *total = d.gpu.memory_total_bytes;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(dptr && bytes > 0);
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    Device& d = *g_devs[t_ctx->dev];
    // Charged at the driver's 256-byte alignment so "allocate all free memory" works as on a GPU;
    // addresses step by 2 MiB pages, leaving a gap that catches overruns.
    size_t charged = accounted(bytes);
    if (charged > free_bytes(d)) return CUDA_ERROR_OUT_OF_MEMORY;
    void* host = map_bytes(bytes);
    if (!host) return CUDA_ERROR_OUT_OF_MEMORY;
    CUdeviceptr p = d.next_addr;
    d.next_addr += (bytes + 0x3FFFFF) & ~size_t(0x1FFFFF);
    d.allocated += charged;
    // Physical placement: lowest free range of whole 2 MiB pages, as a simple first fit.
    uint64_t pages = (bytes + 0x1FFFFF) & ~uint64_t(0x1FFFFF), phys = 0;
    for (auto& [s, n] : d.phys_used) {
        if (s >= phys + pages) break;
        phys = std::max(phys, s + n);
    }
    d.phys_used[phys] = pages;
    g_allocs[p] = Alloc{host, bytes, t_ctx->dev, phys, -1, {}};
    *dptr = p;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    auto it = g_allocs.find(dptr);
    NEED(it != g_allocs.end());
    munmap(it->second.host, std::max<size_t>(it->second.bytes, 1));
    drop_shm(it->second);
    g_devs[it->second.dev]->phys_used.erase(it->second.phys);
    g_devs[it->second.dev]->allocated -= accounted(it->second.bytes);
    g_allocs.erase(it);
    return CUDA_SUCCESS;
}
// A DMA-BUF fd for a whole allocation from its start (the double's limit: its fd's offset 0 is the
// allocation's first byte). The scenario's [fabric] dmabuf = "refused" answers as a driver whose
// kernel lacks dma-buf.
CUresult CUDAAPI cuMemGetHandleForAddressRange(void* handle, CUdeviceptr dptr, size_t size, CUmemRangeHandleType type,
                                               unsigned long long flags) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(handle && size > 0 && type == CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD && flags == 0);
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    if (g_sc.fabric.dmabuf != "ok") return CUDA_ERROR_NOT_SUPPORTED;
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    NEED(dptr % page == 0 && size % page == 0);  // cuda.h: both aligned to the host page size
    auto it = g_allocs.find(dptr);
    NEED(it != g_allocs.end() && size <= (it->second.bytes + page - 1) / page * page);
    if (!back_with_shm(dptr, it->second)) return CUDA_ERROR_OUT_OF_MEMORY;
    const int fd = fcntl(it->second.shm_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OPERATING_SYSTEM;
    *static_cast<int*>(handle) = fd;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytes, unsigned int) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(pp && bytes > 0);
    void* p = std::aligned_alloc(4096, (bytes + 4095) & ~size_t(4095));
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    g_host_allocs[p] = t_ctx ? t_ctx->dev : 0;
    *pp = p;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFreeHost(void* p) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(g_host_allocs.erase(p));  // by key
    std::free(p);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
    fake::hang_point(__func__, ctx_gpu());
    return copy(Kind::HtoD, nullptr, dst, src, 0, n, nullptr);
}
CUresult CUDAAPI cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
    fake::hang_point(__func__, ctx_gpu());
    return copy(Kind::DtoH, dst, 0, nullptr, src, n, nullptr);
}
CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    fake::hang_point(__func__, ctx_gpu());
    return copy(Kind::DtoD, nullptr, dst, nullptr, src, n, nullptr);
}
CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    return copy(Kind::HtoD, nullptr, dst, src, 0, n, s);
}
CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    return copy(Kind::DtoH, dst, 0, nullptr, src, n, s);
}
CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    return copy(Kind::DtoD, nullptr, dst, nullptr, src, n, s);
}
CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
    fake::hang_point(__func__, ctx_gpu());
    return fill(p, v, n, nullptr);
}
CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr p, unsigned int v, size_t n) {
    fake::hang_point(__func__, ctx_gpu());
    return fill(p, v, n, nullptr);
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    return fill(p, v, n, s);
}
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    return fill(p, v, n, s);
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                                   CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (!valid_ctx(dst_ctx) || !valid_ctx(src_ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    char *dp = nullptr, *sp = nullptr;
    Alloc* da = find_alloc(dst, n, &dp);
    Alloc* sa = find_alloc(src, n, &sp);
    NEED(da && sa && da->dev == dst_ctx->dev && sa->dev == src_ctx->dev);
    std::memmove(dp, sp, n);
    const fake::Gpu& g = g_devs[sa->dev]->gpu;
    // With peer access the copy goes over NVLink/PCIe directly; without it the driver stages it
    // through host memory (device-to-host then host-to-device).
    bool direct = src_ctx->peers.count(dst_ctx->dev) || dst_ctx->peers.count(src_ctx->dev);
    double ns = direct ? ns_for(n, g.p2p_bandwidth_gbps)
                       : ns_for(n, g.d2h_bandwidth_gbps) + ns_for(n, g_devs[da->dev]->gpu.h2d_bandwidth_gbps);
    if (!s) {
        CUctx_st* saved = t_ctx;
        t_ctx = src_ctx;
        CUresult r = charge(nullptr, ns);
        t_ctx = saved;
        return r;
    }
    return charge(s, ns);
}
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n) {
    fake::hang_point(__func__, ctx_gpu());
    return cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, n, nullptr);
}

// ---- streams and events (simulated clock) --------------------------------------------------------
CUresult CUDAAPI cuStreamCreate(CUstream* ps, unsigned int) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(ps);
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    auto* s = new CUstream_st{t_ctx, t_ctx->null_stream_ns};
    g_streams.insert(s);
    *ps = s;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamDestroy_v2(CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (!g_streams.erase(s)) return CUDA_ERROR_INVALID_HANDLE;
    // Later default-stream work still waits for what this stream did.
    s->ctx->null_stream_ns = std::max(s->ctx->null_stream_ns, s->t_ns);
    delete s;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (s && !g_streams.count(s)) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamQuery(CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    return cuStreamSynchronize(s);
}
CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (!g_events.count(e) || (s && !g_streams.count(s))) return CUDA_ERROR_INVALID_HANDLE;
    if (!e->recorded) return CUDA_SUCCESS;
    if (s) s->t_ns = std::max(s->t_ns, e->t_ns);
    else if (t_ctx) t_ctx->null_stream_ns = std::max(t_ctx->null_stream_ns, e->t_ns);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventCreate(CUevent* pe, unsigned int flags) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(pe);
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    auto* e = new CUevent_st{flags};
    g_events.insert(e);
    *pe = e;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy_v2(CUevent e) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (!g_events.erase(e)) return CUDA_ERROR_INVALID_HANDLE;
    delete e;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (!g_events.count(e) || (s && !g_streams.count(s))) return CUDA_ERROR_INVALID_HANDLE;
    CUctx_st* ctx = s ? s->ctx : t_ctx;
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    double scratch;
    e->t_ns = cursor(s, ctx, scratch);
    e->recorded = true;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventSynchronize(CUevent e) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    return g_events.count(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuEventQuery(CUevent e) {
    fake::hang_point(__func__, ctx_gpu());
    return cuEventSynchronize(e);
}
CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(ms);
    if (!g_events.count(start) || !g_events.count(end)) return CUDA_ERROR_INVALID_HANDLE;
    if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
    if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
    *ms = static_cast<float>((end->t_ns - start->t_ns) / 1e6);
    return CUDA_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
CUresult CUDAAPI cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
    fake::hang_point(__func__, ctx_gpu());
    return cuEventElapsedTime(ms, start, end);
}
#endif

// ---- modules and kernels -------------------------------------------------------------------------
// The interpreter's reason for refusing the last image, for cuModuleLoadDataEx's error log.
thread_local std::string t_load_error;

CUresult CUDAAPI cuModuleLoadData(CUmodule* mod, const void* image) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(mod && image);
    if (!t_ctx) return CUDA_ERROR_INVALID_CONTEXT;
    std::string ptx(static_cast<const char*>(image));
    if (ptx.find(".version") == std::string::npos) {
        t_load_error = "ptxas fatal   : no .version directive in the PTX text";
        return CUDA_ERROR_INVALID_IMAGE;
    }
    // Decoded now, as the driver JIT-compiles now: what the interpreter cannot run is refused here.
    std::string why;
    auto decoded = fake::load_module(ptx, why);
    if (!decoded) {
        t_load_error = "fake libcuda PTX interpreter: " + why;
        std::fprintf(stderr, "%s\n", t_load_error.c_str());
        return CUDA_ERROR_INVALID_PTX;
    }
    auto* m = new CUmod_st;
    m->ctx = t_ctx;
    m->ptx = std::move(decoded);
    g_modules.insert(m);
    *mod = m;
    return CUDA_SUCCESS;
}
// As cuModuleLoadData; a rejected image also fills the JIT error log when one is asked for.
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* mod, const void* image, unsigned int n, CUjit_option* opts, void** vals) {
    fake::hang_point(__func__, ctx_gpu());
    NEED(n == 0 || (opts && vals));
    CUresult rc = cuModuleLoadData(mod, image);
    if (rc == CUDA_ERROR_INVALID_IMAGE || rc == CUDA_ERROR_INVALID_PTX) {
        char* log = nullptr;
        size_t size = 0;
        for (unsigned i = 0; i < n; ++i) {
            if (opts[i] == CU_JIT_ERROR_LOG_BUFFER) log = static_cast<char*>(vals[i]);
            if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) size = reinterpret_cast<uintptr_t>(vals[i]);
        }
        if (log && size) std::snprintf(log, size, "%s", t_load_error.c_str());
    }
    return rc;
}
CUresult CUDAAPI cuModuleUnload(CUmodule mod) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    if (!g_modules.erase(mod)) return CUDA_ERROR_INVALID_HANDLE;
    delete mod;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule mod, const char* name) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(f && name);
    if (!g_modules.count(mod)) return CUDA_ERROR_INVALID_HANDLE;
    auto it = mod->ptx->by_name.find(name);
    if (it == mod->ptx->by_name.end() || !mod->ptx->functions[it->second].entry) return CUDA_ERROR_NOT_FOUND;
    // Handles live as long as the library; each keeps the decoded module it runs alive.
    static std::map<std::pair<const void*, std::string>, std::unique_ptr<CUfunc_st>> functions;
    auto& slot = functions[{mod->ptx.get(), name}];
    if (!slot) slot = std::make_unique<CUfunc_st>(CUfunc_st{mod->ptx, it->second});
    *f = slot.get();
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void** params,
                                void** extra) {
    fake::hang_point(__func__, ctx_gpu());
    LOCK;
    INITED;
    NEED(f && !extra && shared == 0);  // gpuvet's kernels use no dynamic shared memory
    NEED(gx && gy && gz && bx && by && bz && uint64_t{bx} * by * bz <= 1024);
    CUctx_st* ctx = s ? s->ctx : t_ctx;
    if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
    fake::DeviceMemory mem;
    mem.resolve = [](uint64_t p) {
        fake::ptx::Region r;
        auto it = g_allocs.upper_bound(p);
        if (it == g_allocs.begin()) return r;
        --it;
        if (p >= it->first + it->second.bytes) return r;
        r.lo = it->first, r.hi = it->first + it->second.bytes;
        r.host = static_cast<unsigned char*>(it->second.host);
        r.watch = !g_devs[it->second.dev]->gpu.bad_memory_cells.empty();
        return r;
    };
    mem.bad_cells = [](uint64_t p) {
        auto it = --g_allocs.upper_bound(p);
        return bad_cells(it->first, it->second);
    };
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    fake::LaunchOutcome o = fake::run_kernel(*f->ptx, f->entry, grid, block, params, g_devs[ctx->dev]->gpu, mem);
    if (o.status != fake::LaunchStatus::ok) std::fprintf(stderr, "fake libcuda: %s\n", o.message.c_str());
    switch (o.status) {
        case fake::LaunchStatus::ok: return charge(s, o.ns);
        case fake::LaunchStatus::too_big: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
        case fake::LaunchStatus::illegal_address: return CUDA_ERROR_ILLEGAL_ADDRESS;
        case fake::LaunchStatus::misaligned_address: return CUDA_ERROR_MISALIGNED_ADDRESS;
        case fake::LaunchStatus::timeout: return CUDA_ERROR_LAUNCH_TIMEOUT;
        case fake::LaunchStatus::invalid: break;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

}  // extern "C"
