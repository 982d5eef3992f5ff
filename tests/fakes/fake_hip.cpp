// A test double of HIP (libamdhip64.so) built on Debian's hip_runtime_api.h (HIP 5.2), so the
// compiler holds every exported function to the real declaration. It loads gpuvet's code objects
// as HIP does: the ELF is checked for the GPU's gfx target (e_flags) and its kernels and their
// argument layout are read from the metadata note (amdgpu_elf.hpp); hipModuleLaunchKernel copies
// each explicit argument by the size the metadata records and runs the same kernel's OpenCL C
// source (src/gpu/amd_kernels, or $GPUVET_FAKE_CL_DIR) on the CPU through PoCL, over the launch's
// whole grid, on the very memory gpuvet allocated (shared virtual memory: a device pointer is the
// same address to gpuvet and to the kernels). How long a launch or copy took comes from the
// scenario's rates on a simulated clock per stream, as in the CUDA double.
//
// The scenario is the AMD SMI double's file (GPUVET_FAKE_AMD_SCENARIO): gpu_count, and from [all]
// and [gpu.N] the gfx_target_version, vram_total_bytes and vram_used_bytes; the HIP-only figures
// are in [hip] (every GPU) and [hip.gpu.N] (README.md). GPUVET_FAKE_HANG works as in the others.
// toml++ first: the HIP headers define __noinline__, which toml++'s attribute tests trip over.
#include <toml++/toml.h>
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "amdgpu_elf.hpp"
#include "fake_hang.hpp"
#include "opencl_device.hpp"

struct ihipStream_t {
    int device = 0;
    double clock_s = 0;  // simulated time the stream's last operation ends at
};
struct ihipEvent_t {
    double at_s = -1;  // -1: never recorded
};
struct ihipModuleSymbol_t {
    struct ihipModule_t* module = nullptr;
    const fake::amdgpu::Kernel* kernel = nullptr;
};
struct ihipModule_t {
    int device = 0;
    fake::amdgpu::CodeObject co;
    // As in HIP, a module owns the functions got from it: hipModuleUnload frees them.
    std::vector<std::unique_ptr<ihipModuleSymbol_t>> functions;
};

namespace {

struct StuckBit {
    uint64_t offset_bytes = 0, mask = 0;  // into the GPU's memory, allocations laid end to end
};

struct Gpu {
    uint64_t gfx_target_version = 942;
    uint64_t vram_total_bytes = 206141652992ull, vram_used_bytes = 297963520ull;
    // [hip] figures: an MI300X OAM at roughly what healthy ones reach (docs in README.md)
    int cu_count = 304;
    int l2_cache_bytes = 4 << 20;
    double hbm_bandwidth_gbps = 4500, h2d_gbps = 55, d2h_gbps = 55;
    double fp64_tflops = 70, fp32_tflops = 140, fp16_tflops = 140;
    bool fma_wrong_results = false;
    std::vector<StuckBit> stuck_one_bits;
    double rccl_busbw_gbps = 300;  // the RCCL double's all-reduce bus bandwidth (the slowest rank's counts)
    bool rccl_wrong_sums = false;  // every all-reduce result on this GPU's rank one too high
    // The hipBLASLt double's GEMM rates (TFLOPS) by precision, and wrong outputs at full speed.
    double hipblaslt_fp16_tflops = 1000, hipblaslt_bf16_tflops = 1000;
    bool hipblaslt_wrong = false;
    // live state
    uint64_t allocated_bytes = 0;
    ihipStream_t null_stream;
};

struct Alloc {
    int device = 0;
    uint64_t bytes = 0, base_offset = 0;  // where it sits in the GPU's memory
    bool device_memory = true;            // false: hipHostMalloc
};

struct State {
    bool loaded = false;
    std::string error;
    std::vector<Gpu> gpus;
    std::map<uintptr_t, Alloc> allocs;  // by start address
    // The RCCL double's: called before device memory is copied out (its sums are computed when read).
    std::vector<void (*)(unsigned long long, size_t)> read_hooks;
    std::unique_ptr<fake::opencl::Kernels> kernels;
};

std::recursive_mutex& mu() {
    static std::recursive_mutex m;
    return m;
}
State& state() {
    static State s;
    return s;
}
thread_local int t_device = 0;

const uint8_t kBus[] = {0x05, 0x26, 0x46, 0x65, 0x85, 0xa6, 0xc6, 0xe5};  // as the AMD SMI double lays them out

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw std::runtime_error(where + ": " + what);
}

double num(const toml::node& n, const std::string& w) {
    if (auto v = n.value<double>()) return *v;
    bad(w, "a number was expected");
}

void apply_smi_keys(Gpu& g, const toml::table& t, const std::string& w) {
    for (auto&& [k, v] : t) {
        std::string key(k.str());
        if (key == "gfx_target_version") g.gfx_target_version = uint64_t(num(v, w));
        else if (key == "vram_total_bytes") g.vram_total_bytes = uint64_t(num(v, w));
        else if (key == "vram_used_bytes") g.vram_used_bytes = uint64_t(num(v, w));
    }
}

void apply_hip_keys(Gpu& g, const toml::table& t, const std::string& w) {
    for (auto&& [k, v] : t) {
        std::string key(k.str());
        if (key == "gpu") continue;  // [hip.gpu.N]
        if (key == "cu_count") g.cu_count = int(num(v, w));
        else if (key == "l2_cache_bytes") g.l2_cache_bytes = int(num(v, w));
        else if (key == "hbm_bandwidth_gbps") g.hbm_bandwidth_gbps = num(v, w);
        else if (key == "h2d_gbps") g.h2d_gbps = num(v, w);
        else if (key == "d2h_gbps") g.d2h_gbps = num(v, w);
        else if (key == "fp64_tflops") g.fp64_tflops = num(v, w);
        else if (key == "fp32_tflops") g.fp32_tflops = num(v, w);
        else if (key == "fp16_tflops") g.fp16_tflops = num(v, w);
        else if (key == "fma_wrong_results") g.fma_wrong_results = v.value<bool>().value_or(false);
        else if (key == "rccl_busbw_gbps") g.rccl_busbw_gbps = num(v, w);
        else if (key == "rccl_wrong_sums") g.rccl_wrong_sums = v.value<bool>().value_or(false);
        else if (key == "hipblaslt_wrong") g.hipblaslt_wrong = v.value<bool>().value_or(false);
        else if (key == "hipblaslt_tflops") {  // one figure for every precision, or {fp16 = .., bf16 = ..}
            if (const auto* per = v.as_table()) {
                for (auto&& [pk, pv] : *per) {
                    if (pk.str() == "fp16") g.hipblaslt_fp16_tflops = num(pv, w);
                    else if (pk.str() == "bf16") g.hipblaslt_bf16_tflops = num(pv, w);
                    else bad(w, "hipblaslt_tflops: unknown precision " + std::string(pk.str()) + " (fp16, bf16)");
                }
            } else {
                g.hipblaslt_fp16_tflops = g.hipblaslt_bf16_tflops = num(v, w);
            }
        } else if (key == "stuck_one_bits") {
            const auto* a = v.as_array();
            if (!a) bad(w, "stuck_one_bits must be an array of {offset_bytes, mask}");
            for (auto&& e : *a) {
                const auto* c = e.as_table();
                if (!c || !(*c)["offset_bytes"] || !(*c)["mask"]) bad(w, "a stuck bit needs offset_bytes and mask");
                g.stuck_one_bits.push_back(
                    {uint64_t(num(*(*c)["offset_bytes"].node(), w)), uint64_t(num(*(*c)["mask"].node(), w))});
            }
        } else bad(w, "unknown [hip] key " + key);
    }
}

void for_each_gpu_table(const toml::table* t, State& s, const std::string& path,
                        void (*apply)(Gpu&, const toml::table&, const std::string&)) {
    if (!t) return;
    for (auto&& [idx, v] : *t) {
        size_t i = std::stoul(std::string(idx.str()));
        if (i >= s.gpus.size() || !v.as_table()) bad(path, "[gpu." + std::string(idx.str()) + "] is not a GPU");
        apply(s.gpus[i], *v.as_table(), path);
    }
}

bool load() {
    State& s = state();
    if (s.loaded) return s.error.empty();
    s.loaded = true;
    const char* path = std::getenv("GPUVET_FAKE_AMD_SCENARIO");
    try {
        if (!path || !*path) bad("fake HIP", "GPUVET_FAKE_AMD_SCENARIO is not set");
        toml::table t = toml::parse_file(path);
        auto n = t["gpu_count"].value<int64_t>();
        if (!n || *n < 0 || *n > 64) bad(path, "gpu_count (0..64) is required");
        s.gpus.assign(size_t(*n), Gpu{});
        for (size_t i = 0; i < s.gpus.size(); ++i) s.gpus[i].null_stream.device = int(i);
        if (auto* all = t["all"].as_table())
            for (auto& g : s.gpus) apply_smi_keys(g, *all, path);
        for_each_gpu_table(t["gpu"].as_table(), s, path, apply_smi_keys);
        if (auto* hip = t["hip"].as_table()) {
            for (auto& g : s.gpus) apply_hip_keys(g, *hip, path);
            for_each_gpu_table((*hip)["gpu"].as_table(), s, path, apply_hip_keys);
        }
        const char* dir = std::getenv("GPUVET_FAKE_CL_DIR");
        s.kernels = std::make_unique<fake::opencl::Kernels>(dir && *dir ? dir : FAKE_HIP_CL_DIR);
    } catch (const std::exception& e) {
        s.error = e.what();
        std::fprintf(stderr, "fake HIP: %s\n", s.error.c_str());
    }
    return s.error.empty();
}

Gpu* gpu(int d) {
    State& s = state();
    return d >= 0 && size_t(d) < s.gpus.size() ? &s.gpus[size_t(d)] : nullptr;
}

// The allocation `p` points into, or null.
Alloc* alloc_of(const void* p, uintptr_t* start = nullptr) {
    auto& m = state().allocs;
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = m.upper_bound(a);
    if (it == m.begin()) return nullptr;
    --it;
    if (a >= it->first + it->second.bytes) return nullptr;
    if (start) *start = it->first;
    return &it->second;
}

// Stuck bits read back as ones whatever was stored: applied after everything that writes memory.
void apply_stuck_bits(int device) {
    Gpu* g = gpu(device);
    if (!g || g->stuck_one_bits.empty()) return;
    for (auto& [start, a] : state().allocs) {
        if (!a.device_memory || a.device != device) continue;
        for (const StuckBit& b : g->stuck_one_bits)
            if (b.offset_bytes >= a.base_offset && b.offset_bytes + 8 <= a.base_offset + a.bytes) {
                auto* w = reinterpret_cast<uint64_t*>(start + (b.offset_bytes - a.base_offset) / 8 * 8);
                *w |= b.mask;
            }
    }
}

ihipStream_t* stream_of(hipStream_t s) {
    if (s) return s;
    Gpu* g = gpu(t_device);
    return g ? &g->null_stream : nullptr;
}

void advance(hipStream_t s, double seconds) {
    if (ihipStream_t* st = stream_of(s)) st->clock_s += seconds;
}

#define ENTRY(gpu_index)                              \
    fake::hang_point(__func__, gpu_index);            \
    std::lock_guard<std::recursive_mutex> lock(mu()); \
    if (!load()) return hipErrorNotInitialized

// The explicit argument named `name` as an integer (n_vec, n_words, iterations).
uint64_t arg_value(const fake::amdgpu::Kernel& k, void** params, const char* name) {
    size_t i = 0;
    for (const auto& a : k.args) {
        if (a.value_kind.rfind("hidden_", 0) == 0) break;
        if (a.name == name) {
            uint64_t v = 0;
            std::memcpy(&v, params[i], std::min<size_t>(a.size, 8));
            return v;
        }
        ++i;
    }
    return 0;
}

// Simulated seconds a launch takes on GPU g, from the bytes or FLOPs its contract says it moves.
double launch_seconds(const std::string& name, const fake::amdgpu::Kernel& k, void** params, uint64_t threads,
                      const Gpu& g) {
    const double bw = g.hbm_bandwidth_gbps * 1e9;
    const uint64_t n_vec = arg_value(k, params, "n_vec"), n_words = arg_value(k, params, "n_words");
    if (name == "stream_copy") return 32.0 * double(n_vec) / bw;
    if (name == "stream_triad") return 48.0 * double(n_vec) / bw;
    if (name.rfind("stream_", 0) == 0) return 16.0 * double(n_vec) / bw;
    if (name.rfind("memtest_", 0) == 0) return 8.0 * double(n_words) / bw;
    const double flops = double(threads) * double(arg_value(k, params, "iterations")) * 256;
    if (name == "fma_f64") return flops / (g.fp64_tflops * 1e12);
    if (name == "fma_f32") return flops / (g.fp32_tflops * 1e12);
    if (name == "fma_f16x2") return 2 * flops / (g.fp16_tflops * 1e12);
    return 0;
}

// With fma_wrong_results every fma_* result is off by one (+1 for f64/f32, one unit in the low
// lane of packed halves), as the CUDA double does.
void corrupt_fma(const std::string& name, void* out, uint64_t threads) {
    for (uint64_t t = 0; t < threads; ++t) {
        if (name == "fma_f64") static_cast<double*>(out)[t] += 1;
        else if (name == "fma_f32") static_cast<float*>(out)[t] += 1;
        else static_cast<uint32_t*>(out)[t] += 1;
    }
}

// How long an ELF image is: its section headers come last (lld's layout).
size_t image_size(const void* image) {
    const auto* b = static_cast<const unsigned char*>(image);
    if (std::memcmp(b,
                    "\x7f"
                    "ELF",
                    4) != 0 ||
        b[4] != 2)
        return 0;
    uint64_t shoff;
    uint16_t shnum;
    std::memcpy(&shoff, b + 40, 8);
    std::memcpy(&shnum, b + 60, 2);
    return size_t(shoff + uint64_t(shnum) * 64);
}

}  // namespace

extern "C" {

hipError_t hipInit(unsigned int flags) {
    ENTRY(-1);
    return flags == 0 ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipDriverGetVersion(int* v) {
    ENTRY(-1);
    *v = 60342134;  // HIP_VERSION of ROCm 6.3 (major * 10^7 + minor * 10^5 + patch)
    return hipSuccess;
}

hipError_t hipRuntimeGetVersion(int* v) { return hipDriverGetVersion(v); }

hipError_t hipGetDeviceCount(int* n) {
    ENTRY(-1);
    *n = int(state().gpus.size());
    return *n ? hipSuccess : hipErrorNoDevice;
}

hipError_t hipSetDevice(int d) {
    ENTRY(d);
    if (!gpu(d)) return hipErrorInvalidDevice;
    t_device = d;
    return hipSuccess;
}

hipError_t hipDeviceGetPCIBusId(char* bus, int len, int d) {
    ENTRY(d);
    if (!gpu(d) || len < 13) return hipErrorInvalidValue;
    std::snprintf(bus, size_t(len), "0000:%02x:00.0", d < 8 ? kBus[d] : 0x10 + d);
    return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int* v, hipDeviceAttribute_t attr, int d) {
    ENTRY(d);
    Gpu* g = gpu(d);
    if (!g) return hipErrorInvalidDevice;
    if (attr == hipDeviceAttributeMultiprocessorCount) *v = g->cu_count;
    else if (attr == hipDeviceAttributeL2CacheSize) *v = g->l2_cache_bytes;
    else return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hipMemGetInfo(size_t* free_b, size_t* total_b) {
    ENTRY(t_device);
    Gpu* g = gpu(t_device);
    *total_b = g->vram_total_bytes;
    uint64_t used = g->vram_used_bytes + g->allocated_bytes;
    *free_b = used < g->vram_total_bytes ? g->vram_total_bytes - used : 0;
    return hipSuccess;
}

hipError_t hipMalloc(void** p, size_t bytes) {
    ENTRY(t_device);
    Gpu* g = gpu(t_device);
    if (bytes == 0) return *p = nullptr, hipSuccess;
    if (g->vram_used_bytes + g->allocated_bytes + bytes > g->vram_total_bytes) return hipErrorOutOfMemory;
    void* m = fake::opencl::svm_alloc(bytes);
    if (!m) return hipErrorOutOfMemory;
    state().allocs[reinterpret_cast<uintptr_t>(m)] = Alloc{t_device, bytes, g->allocated_bytes, true};
    g->allocated_bytes += bytes;
    apply_stuck_bits(t_device);
    *p = m;
    return hipSuccess;
}

hipError_t hipFree(void* p) {
    ENTRY(t_device);
    if (!p) return hipSuccess;
    auto& m = state().allocs;
    auto it = m.find(reinterpret_cast<uintptr_t>(p));
    if (it == m.end() || !it->second.device_memory) return hipErrorInvalidValue;
    // Memory is laid end to end by allocation order; a freed hole is not reused (simple and enough
    // for gpuvet's pattern of allocating, measuring and freeing everything).
    fake::opencl::svm_free(p);
    m.erase(it);
    return hipSuccess;
}

hipError_t hipHostMalloc(void** p, size_t bytes, unsigned int flags) {
    ENTRY(t_device);
    if (flags != hipHostMallocDefault) return hipErrorInvalidValue;
    void* m = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (!m) return hipErrorOutOfMemory;
    state().allocs[reinterpret_cast<uintptr_t>(m)] = Alloc{t_device, bytes, 0, false};
    *p = m;
    return hipSuccess;
}

hipError_t hipHostFree(void* p) {
    ENTRY(t_device);
    auto& m = state().allocs;
    auto it = m.find(reinterpret_cast<uintptr_t>(p));
    if (it == m.end() || it->second.device_memory) return hipErrorInvalidValue;
    m.erase(it);
    std::free(p);
    return hipSuccess;
}

static hipError_t copy(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t s) {
    Alloc* d = alloc_of(dst);
    Alloc* from = alloc_of(src);
    const bool dst_dev = d && d->device_memory, src_dev = from && from->device_memory;
    if (kind == hipMemcpyHostToDevice && (!dst_dev || src_dev)) return hipErrorInvalidValue;
    if (kind == hipMemcpyDeviceToHost && (dst_dev || !src_dev)) return hipErrorInvalidValue;
    if ((dst_dev && alloc_of(static_cast<char*>(dst) + bytes - 1) != d) ||
        (src_dev && alloc_of(static_cast<const char*>(src) + bytes - 1) != from))
        return hipErrorInvalidValue;
    if (src_dev)
        for (auto* hook : state().read_hooks) hook(reinterpret_cast<unsigned long long>(src), bytes);
    std::memmove(dst, src, bytes);
    Gpu* g = gpu(dst_dev ? d->device : src_dev ? from->device : t_device);
    if (dst_dev) apply_stuck_bits(d->device);
    const double rate = dst_dev && src_dev ? g->hbm_bandwidth_gbps / 2
                        : dst_dev          ? g->h2d_gbps
                        : src_dev          ? g->d2h_gbps
                                           : 1e3;
    advance(s, double(bytes) / (rate * 1e9));
    return hipSuccess;
}

hipError_t hipMemcpy(void* dst, const void* src, size_t bytes, hipMemcpyKind kind) {
    ENTRY(t_device);
    return copy(dst, src, bytes, kind, nullptr);
}

hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t s) {
    ENTRY(s ? s->device : t_device);
    return copy(dst, src, bytes, kind, s);
}

hipError_t hipMemset(void* dst, int value, size_t bytes) {
    ENTRY(t_device);
    Alloc* a = alloc_of(dst);
    if (!a || !a->device_memory) return hipErrorInvalidValue;
    std::memset(dst, value, bytes);
    apply_stuck_bits(a->device);
    return hipSuccess;
}

hipError_t hipStreamCreate(hipStream_t* s) {
    ENTRY(t_device);
    *s = new ihipStream_t{t_device, stream_of(nullptr)->clock_s};
    return hipSuccess;
}

hipError_t hipStreamDestroy(hipStream_t s) {
    ENTRY(s ? s->device : -1);
    delete s;
    return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t s) {
    ENTRY(s ? s->device : t_device);
    return hipSuccess;  // every operation completed when it was issued
}

hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int flags) {
    ENTRY(s ? s->device : t_device);
    if (!e || flags != 0) return hipErrorInvalidValue;
    ihipStream_t* st = stream_of(s);
    if (e->at_s >= 0) st->clock_s = std::max(st->clock_s, e->at_s);
    return hipSuccess;
}

hipError_t hipDeviceSynchronize() {
    ENTRY(t_device);
    return hipSuccess;
}

hipError_t hipEventCreate(hipEvent_t* e) {
    ENTRY(t_device);
    *e = new ihipEvent_t{};
    return hipSuccess;
}

hipError_t hipEventDestroy(hipEvent_t e) {
    ENTRY(-1);
    delete e;
    return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
    ENTRY(s ? s->device : t_device);
    if (!e) return hipErrorInvalidHandle;
    e->at_s = stream_of(s)->clock_s;
    return hipSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t e) {
    ENTRY(-1);
    return e && e->at_s >= 0 ? hipSuccess : hipErrorInvalidHandle;
}

hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
    ENTRY(-1);
    if (!a || !b || a->at_s < 0 || b->at_s < 0) return hipErrorInvalidHandle;
    *ms = float((b->at_s - a->at_s) * 1e3);
    return hipSuccess;
}

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
    ENTRY(t_device);
    Gpu* g = gpu(t_device);
    const size_t size = image ? image_size(image) : 0;
    if (!size) return hipErrorInvalidImage;
    auto m = std::make_unique<ihipModule_t>();
    m->device = t_device;
    try {
        m->co = fake::amdgpu::parse(std::string_view(static_cast<const char*>(image), size));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fake HIP: %s\n", e.what());
        return hipErrorInvalidImage;
    }
    if (m->co.machine != fake::amdgpu::kEmAmdgpu || m->co.os_abi != fake::amdgpu::kOsAbiAmdgpuHsa)
        return hipErrorInvalidKernelFile;
    // Exactly the GPU's target: a gfx942 GPU refuses a gfx940 object, as ROCm does.
    const std::string want = fake::amdgpu::gfx_of_target_version(g->gfx_target_version);
    if (fake::amdgpu::gfx_of_mach(m->co.e_flags & fake::amdgpu::kMachMask) != want) return hipErrorNoBinaryForGpu;
    *module = m.release();
    return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module) {
    ENTRY(module ? module->device : -1);
    delete module;
    return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t module, const char* name) {
    ENTRY(module ? module->device : -1);
    if (!module || !name) return hipErrorInvalidValue;
    auto it = module->co.kernels.find(name);
    if (it == module->co.kernels.end() || !it->second.has_descriptor) return hipErrorNotFound;
    module->functions.push_back(std::make_unique<ihipModuleSymbol_t>(ihipModuleSymbol_t{module, &it->second}));
    *f = module->functions.back().get();
    return hipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                 unsigned int by, unsigned int bz, unsigned int shared, hipStream_t s, void** params,
                                 void** extra) {
    ENTRY(f && f->module ? f->module->device : -1);
    if (!f || !f->kernel || extra || shared || gy != 1 || gz != 1 || by != 1 || bz != 1 || !gx || !bx || bx > 1024)
        return hipErrorInvalidValue;
    const fake::amdgpu::Kernel& k = *f->kernel;
    const int device = f->module->device;
    std::vector<fake::opencl::Arg> args;
    void* first_buffer = nullptr;
    size_t i = 0;
    for (const auto& a : k.args) {
        if (a.value_kind.rfind("hidden_", 0) == 0) break;  // the runtime's own, after the explicit ones
        if (!params || !params[i]) return hipErrorInvalidValue;
        if (a.value_kind == "global_buffer") {
            void* p = nullptr;
            std::memcpy(&p, params[i], sizeof p);
            Alloc* al = alloc_of(p);
            if (!al || !al->device_memory || al->device != device) {
                std::fprintf(stderr, "fake HIP: %s argument %zu is not memory of GPU %d\n", k.name.c_str(), i, device);
                return hipErrorIllegalAddress;
            }
            if (!first_buffer) first_buffer = p;
            args.push_back({true, p, 8});
        } else {
            args.push_back({false, params[i], a.size});
        }
        ++i;
    }
    const uint64_t threads = uint64_t(gx) * bx;
    std::string err = state().kernels->run(k.name, threads, bx, args);
    if (!err.empty()) {
        std::fprintf(stderr, "fake HIP: %s\n", err.c_str());
        return hipErrorLaunchFailure;
    }
    Gpu* g = gpu(device);
    if (g->fma_wrong_results && k.name.rfind("fma_", 0) == 0) corrupt_fma(k.name, first_buffer, threads);
    apply_stuck_bits(device);
    advance(s, launch_seconds(k.name, k, params, threads, *g));
    return hipSuccess;
}

const char* hipGetErrorName(hipError_t e) {
    switch (e) {
        case hipSuccess: return "hipSuccess";
        case hipErrorInvalidValue: return "hipErrorInvalidValue";
        case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
        case hipErrorNotInitialized: return "hipErrorNotInitialized";
        case hipErrorNoDevice: return "hipErrorNoDevice";
        case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
        case hipErrorInvalidImage: return "hipErrorInvalidImage";
        case hipErrorNoBinaryForGpu: return "hipErrorNoBinaryForGpu";
        case hipErrorInvalidKernelFile: return "hipErrorInvalidKernelFile";
        case hipErrorNotFound: return "hipErrorNotFound";
        case hipErrorIllegalAddress: return "hipErrorIllegalAddress";
        case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
        default: return "hipErrorUnknown";
    }
}

const char* hipGetErrorString(hipError_t e) { return hipGetErrorName(e); }

// The hooks the RCCL double (fake_nccl.cpp built with FAKE_RCCL) runs on, as the NCCL double runs on
// the CUDA double's gpuvet_fake_* (fake_hooks.hpp): device memory as the host sees it, a stream's
// simulated clock, and the scenario's RCCL figures.
void* gpuvet_fake_hip_host_view(unsigned long long p, size_t n) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    Alloc* a = alloc_of(reinterpret_cast<const void*>(p));
    if (!a || !a->device_memory || n == 0) return nullptr;
    if (alloc_of(reinterpret_cast<const char*>(p) + n - 1) != a) return nullptr;
    return reinterpret_cast<void*>(p);
}
int gpuvet_fake_hip_charge(void* s, double seconds) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    if (!load()) return 1;
    advance(static_cast<hipStream_t>(s), seconds);
    return 0;
}
int gpuvet_fake_hip_stream_device(void* s) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    return s ? static_cast<hipStream_t>(s)->device : t_device;
}
int gpuvet_fake_hip_device_count() {
    std::lock_guard<std::recursive_mutex> lock(mu());
    return load() ? int(state().gpus.size()) : 0;
}
double gpuvet_fake_hip_rccl_busbw_gbps(int d) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    const Gpu* g = load() ? gpu(d) : nullptr;
    return g ? g->rccl_busbw_gbps : 0;
}
int gpuvet_fake_hip_rccl_wrong_sums(int d) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    const Gpu* g = load() ? gpu(d) : nullptr;
    return g && g->rccl_wrong_sums;
}
// The hipBLASLt double's figures: the rate of a GEMM whose inputs are `bf16` (else FP16) on device d.
double gpuvet_fake_hip_hipblaslt_tflops(int d, int bf16) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    const Gpu* g = load() ? gpu(d) : nullptr;
    return g ? (bf16 ? g->hipblaslt_bf16_tflops : g->hipblaslt_fp16_tflops) : 0;
}
int gpuvet_fake_hip_hipblaslt_wrong(int d) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    const Gpu* g = load() ? gpu(d) : nullptr;
    return g && g->hipblaslt_wrong;
}
void gpuvet_fake_hip_on_device_read(void (*hook)(unsigned long long, size_t)) {
    std::lock_guard<std::recursive_mutex> lock(mu());
    auto& h = state().read_hooks;
    if (std::find(h.begin(), h.end(), hook) == h.end()) h.push_back(hook);
}

}  // extern "C"
