// Per-GPU execution on the CUDA driver API: the layer every GPU measurement runs on.
//
// GpuSession: one CUDA device. It retains the device's PRIMARY context and makes it current on the
// calling thread (DESIGN.md §2.3), so gpuvet's kernels, cuBLASLt and NCCL (which all work in the
// thread's current context) share one context. A thread other than the opening one calls
// make_current() before using the session. Modules load on first use of one of their kernels.
// Every failed driver call throws CudaError (core Error, kind Driver) naming the call, the status
// and advice; JIT failures carry the driver's error log.
//
// GpuSet: the sessions for the GPUs a run selected (--gpus, empty = all), by NVML index
// (what the report calls a GPU), each mapped to its CUDA ordinal through the inventory. A GPU that
// cannot be opened carries the reason instead of a session; the others are unaffected.
//
// Typical use:
//   GpuSet set = GpuSet::open(ctx.facts->selected_gpus());
//   for (auto& m : set.members()) {
//       if (!m.session) { /* ERROR result for m.index with m.error */ continue; }
//       GpuSession& s = *m.session;
//       DeviceBuffer buf = s.alloc(bytes);
//       Stream st = s.stream();
//       auto t = s.time_ms(st, [&] { s.launch("stream_write", s.geometry("stream_write"), st,
//                                             {arg::ptr(buf), arg::u64(n_vec), arg::u32(7)}); });
//   }
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/kernels.hpp"
#include "gpu/bindings/cuda_api.hpp"

namespace gpuvet {

struct CheckContext;
struct GpuInfo;
class GpuSession;

// Throws CudaError(call, code, name) unless code is CUDA_SUCCESS. `what` is the call's name.
void cuda_check(const CudaApi& api, int code, const char* what);

// A device allocation, freed on destruction (in the owning session's context).
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const CudaApi* api, cu::CUdeviceptr ptr, std::size_t bytes) : api_(api), ptr_(ptr), bytes_(bytes) {}
    DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { reset(); }
    cu::CUdeviceptr ptr() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }
    explicit operator bool() const { return ptr_ != 0; }
    void reset();

private:
    const CudaApi* api_ = nullptr;
    cu::CUdeviceptr ptr_ = 0;
    std::size_t bytes_ = 0;
};

// Page-locked host memory (cuMemHostAlloc, portable: usable by every context), for copies at
// full PCIe speed.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(const CudaApi* api, void* p, std::size_t bytes) : api_(api), p_(p), bytes_(bytes) {}
    PinnedBuffer(PinnedBuffer&& o) noexcept { *this = std::move(o); }
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    ~PinnedBuffer() { reset(); }
    void* data() const { return p_; }
    std::size_t bytes() const { return bytes_; }
    void reset();

private:
    const CudaApi* api_ = nullptr;
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
};

class Stream {
public:
    Stream() = default;
    Stream(const CudaApi* api, cu::CUstream s) : api_(api), s_(s) {}
    Stream(Stream&& o) noexcept { *this = std::move(o); }
    Stream& operator=(Stream&& o) noexcept;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream();
    cu::CUstream get() const { return s_; }
    void synchronize() const;  // throws CudaError

private:
    const CudaApi* api_ = nullptr;
    cu::CUstream s_ = nullptr;
};

class Event {
public:
    Event() = default;
    Event(const CudaApi* api, cu::CUevent e) : api_(api), e_(e) {}
    Event(Event&& o) noexcept { *this = std::move(o); }
    Event& operator=(Event&& o) noexcept;
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    ~Event();
    cu::CUevent get() const { return e_; }
    void record(const Stream& s) const;
    void synchronize() const;

private:
    const CudaApi* api_ = nullptr;
    cu::CUevent e_ = nullptr;
};

// Milliseconds between two recorded events (waits for `end`).
double elapsed_ms(const CudaApi& api, const Event& start, const Event& end);

// One kernel argument with its catalogue type, so launch() can check the list against
// kernels::catalogue() before the driver sees it (a mismatch is an Internal error, not a crash).
struct KernelArg {
    kernels::Param type;
    union {
        std::uint64_t u64;
        std::uint32_t u32;
        float f32;
        double f64;
    } v;
};
namespace arg {
inline KernelArg ptr(cu::CUdeviceptr p) {
    KernelArg a{kernels::Param::ptr, {}};
    a.v.u64 = p;
    return a;
}
inline KernelArg ptr(const DeviceBuffer& b) { return ptr(b.ptr()); }
inline KernelArg u64(std::uint64_t x) {
    KernelArg a{kernels::Param::u64, {}};
    a.v.u64 = x;
    return a;
}
inline KernelArg u32(std::uint32_t x) {
    KernelArg a{kernels::Param::u32, {}};
    a.v.u32 = x;
    return a;
}
inline KernelArg f32(float x) {
    KernelArg a{kernels::Param::f32, {}};
    a.v.f32 = x;
    return a;
}
inline KernelArg f64(double x) {
    KernelArg a{kernels::Param::f64, {}};
    a.v.f64 = x;
    return a;
}
inline KernelArg b32(std::uint32_t x) {
    KernelArg a{kernels::Param::b32, {}};
    a.v.u32 = x;
    return a;
}
}  // namespace arg

class GpuSession {
public:
    // Retains the primary context of CUDA device `cuda_ordinal` and makes it current on this
    // thread. Throws CudaError (cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain...) or a Driver
    // Error when a needed symbol is missing from libcuda.
    GpuSession(std::shared_ptr<const CudaApi> api, int cuda_ordinal);
    ~GpuSession();  // releases the primary context
    GpuSession(const GpuSession&) = delete;
    GpuSession& operator=(const GpuSession&) = delete;

    const CudaApi& api() const { return *api_; }
    int ordinal() const { return ordinal_; }
    cu::CUdevice device() const { return dev_; }
    cu::CUcontext context() const { return ctx_; }
    void make_current() const;  // on the calling thread

    // Device facts (cuDeviceGetAttribute); throw CudaError when unreadable.
    int attribute(cu::CUdevice_attribute a) const;
    int sm_count() const { return attribute(cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT); }
    int compute_capability() const;  // x10: 90 for 9.0
    std::uint64_t l2_cache_bytes() const {
        return static_cast<std::uint64_t>(attribute(cu::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    }
    struct MemInfo {
        std::uint64_t free_bytes = 0, total_bytes = 0;
    };
    MemInfo mem_info() const;

    DeviceBuffer alloc(std::size_t bytes) const;
    // A DMA-BUF file descriptor naming the device memory [ptr, ptr + bytes) (cuMemGetHandleForAddressRange),
    // for a NIC to register (ibv_reg_dmabuf_mr); the caller closes it. ptr and bytes must be multiples
    // of the host page size. fd < 0: `why` says which step refused and why.
    struct DmaBuf {
        int fd = -1;
        std::string why;
    };
    DmaBuf export_dmabuf(cu::CUdeviceptr ptr, std::size_t bytes) const;
    PinnedBuffer alloc_pinned(std::size_t bytes) const;
    Stream stream() const;     // non-blocking with respect to the legacy default stream
    Event event() const;       // timing event
    void synchronize() const;  // cuCtxSynchronize

    // Memory helpers (synchronous unless a stream is given).
    void zero(const DeviceBuffer& b, const Stream* s = nullptr) const;
    void upload(cu::CUdeviceptr dst, const void* src, std::size_t bytes) const;
    void download(void* dst, cu::CUdeviceptr src, std::size_t bytes) const;

    // The kernel's function handle; loads its PTX module on first use. Throws a Driver Error for
    // a kernel the catalogue does not know or a GPU below its minimum compute capability, and
    // CudaError (with the JIT error log in the message) when the driver rejects the PTX.
    cu::CUfunction function(std::string_view kernel);
    // The catalogue's suggested grid for this GPU.
    kernels::LaunchGeometry geometry(std::string_view kernel) const;
    // Launches after checking `args` against the catalogue's parameter list.
    void launch(std::string_view kernel, kernels::LaunchGeometry g, const Stream& s,
                std::initializer_list<KernelArg> args);

    // Records events around `work` on `s` and returns the elapsed milliseconds.
    double time_ms(const Stream& s, const std::function<void()>& work) const;

private:
    void need(const void* fn, const char* name) const;

    std::shared_ptr<const CudaApi> api_;
    int ordinal_ = -1;
    cu::CUdevice dev_ = 0;
    cu::CUcontext ctx_ = nullptr;
    std::map<std::string, cu::CUmodule, std::less<>> modules_;
    std::map<std::string, cu::CUfunction, std::less<>> functions_;
    std::mutex mu_;  // module cache
};

// Sessions for the selected GPUs.
class GpuSet {
public:
    struct Member {
        int index = 0;                        // NVML index (report's GPU number)
        int cuda_ordinal = -1;                // -1 when unknown
        const GpuInfo* info = nullptr;        // inventory entry, when known
        std::unique_ptr<GpuSession> session;  // null when the GPU could not be opened
        std::string error;                    // why session is null
        std::string advice;
        bool unavailable = false;  // CUDA cannot see it (MIG mode, CUDA_VISIBLE_DEVICES): SKIP, not ERROR
    };

    // Opens a session for each of `gpus` (the run's selected GPUs, RunFacts::selected_gpus).
    // Throws only when libcuda itself is unusable (Driver Error); per-GPU failures land in
    // Member::error. Leaves the last opened session current on this thread.
    static GpuSet open(const std::vector<const GpuInfo*>& gpus);
    // Same with an explicit API and list of (NVML index, CUDA ordinal) pairs; for tests and tools.
    static GpuSet open(std::shared_ptr<const CudaApi> api, const std::vector<std::pair<int, int>>& gpus);

    std::vector<Member>& members() { return members_; }
    const std::vector<Member>& members() const { return members_; }
    Member* find(int index);
    const CudaApi& api() const { return *api_; }

    // Runs fn(member) for every opened member, each on its own thread with its context current,
    // and returns when all are done. An exception from one member is rethrown after all finish.
    void run_parallel(const std::function<void(Member&)>& fn);

private:
    std::shared_ptr<const CudaApi> api_;
    std::vector<Member> members_;
};

// The libcuda the sessions use (GPUVET_LIBCUDA or libcuda.so.1), loaded and cuInit'ed once per
// process. Throws a Driver Error naming the reason when unusable.
std::shared_ptr<const CudaApi> shared_cuda_api();

}  // namespace gpuvet
