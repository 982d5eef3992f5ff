// Per-GPU execution on HIP (libamdhip64, loaded at run time): the layer gpuvet's AMD measurements
// run on, beside the CUDA one (session.hpp) and not mixed into it.
//
// HipSession: one HIP device, chosen by PCI bus id so that the report's GPU (AMD SMI's index) and
// HIP's ordinal name the same card. It loads the code object built for the GPU's gfx target
// (amd_kernels.hpp: one per target, embedded at build time) through hipModuleLoadData and launches
// kernels with hipModuleLaunchKernel; HIP's current device is per thread, so a thread other than the
// opening one calls make_current() first. Every failed call throws HipError (Error kind Driver)
// naming the call, the status and advice. Every call runs under the driver deadline (HipApi::load).
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

#include "core/error.hpp"
#include "gpu/amd_kernels.hpp"
#include "gpu/bindings/hip_api.hpp"
#include "gpu/session.hpp"  // KernelArg and arg::, shared with the CUDA kernels

namespace gpuvet {

// Throws HipError unless `code` is hipSuccess. `what` names the call.
void hip_check(const HipApi& api, unsigned code, std::string_view what);

class HipError : public Error {
public:
    HipError(std::string_view call, unsigned code, const std::string& name);
    unsigned code() const { return code_; }

private:
    unsigned code_;
};

// A device allocation (hipMalloc), freed on destruction.
class HipBuffer {
public:
    HipBuffer() = default;
    HipBuffer(const HipApi* api, void* p, std::size_t bytes) : api_(api), p_(p), bytes_(bytes) {}
    HipBuffer(HipBuffer&& o) noexcept { *this = std::move(o); }
    HipBuffer& operator=(HipBuffer&& o) noexcept;
    HipBuffer(const HipBuffer&) = delete;
    HipBuffer& operator=(const HipBuffer&) = delete;
    ~HipBuffer() { reset(); }
    void* get() const { return p_; }
    std::uint64_t address() const { return reinterpret_cast<std::uint64_t>(p_); }  // as the kernels see it
    std::size_t bytes() const { return bytes_; }
    void reset();

private:
    const HipApi* api_ = nullptr;
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
};

// Page-locked host memory (hipHostMalloc), for copies at full PCIe speed.
class HipPinned {
public:
    HipPinned() = default;
    HipPinned(const HipApi* api, void* p, std::size_t bytes) : api_(api), p_(p), bytes_(bytes) {}
    HipPinned(HipPinned&& o) noexcept { *this = std::move(o); }
    HipPinned& operator=(HipPinned&& o) noexcept;
    HipPinned(const HipPinned&) = delete;
    HipPinned& operator=(const HipPinned&) = delete;
    ~HipPinned() { reset(); }
    void* data() const { return p_; }
    std::size_t bytes() const { return bytes_; }
    void reset();

private:
    const HipApi* api_ = nullptr;
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
};

class HipStream {
public:
    HipStream() = default;
    HipStream(const HipApi* api, hip::hipStream_t s) : api_(api), s_(s) {}
    HipStream(HipStream&& o) noexcept { *this = std::move(o); }
    HipStream& operator=(HipStream&& o) noexcept;
    HipStream(const HipStream&) = delete;
    HipStream& operator=(const HipStream&) = delete;
    ~HipStream();
    hip::hipStream_t get() const { return s_; }
    void synchronize() const;

private:
    const HipApi* api_ = nullptr;
    hip::hipStream_t s_ = nullptr;
};

class HipEvent {
public:
    HipEvent() = default;
    HipEvent(const HipApi* api, hip::hipEvent_t e) : api_(api), e_(e) {}
    HipEvent(HipEvent&& o) noexcept { *this = std::move(o); }
    HipEvent& operator=(HipEvent&& o) noexcept;
    HipEvent(const HipEvent&) = delete;
    HipEvent& operator=(const HipEvent&) = delete;
    ~HipEvent();
    hip::hipEvent_t get() const { return e_; }
    void record(const HipStream& s) const;
    // Milliseconds from this event to `end` (waits for `end`).
    double ms_until(const HipEvent& end) const;

private:
    const HipApi* api_ = nullptr;
    hip::hipEvent_t e_ = nullptr;
};

class HipSession {
public:
    // Opens the HIP device whose PCI bus id is `pci_bus_id` (else, when HIP cannot say bus ids,
    // ordinal `fallback_ordinal`) and loads the code object for `gfx`. Throws a Driver Error when
    // gpuvet has no code object for `gfx` (with the targets it has), and HipError otherwise.
    HipSession(std::shared_ptr<const HipApi> api, const std::string& pci_bus_id, int fallback_ordinal,
               const std::string& gfx);
    ~HipSession();
    HipSession(const HipSession&) = delete;
    HipSession& operator=(const HipSession&) = delete;

    const HipApi& api() const { return *api_; }
    int ordinal() const { return ordinal_; }
    const std::string& gfx() const { return gfx_; }
    void make_current() const;  // hipSetDevice on the calling thread
    int cu_count() const;       // compute units (hipDeviceAttributeMultiprocessorCount)

    struct MemInfo {
        std::uint64_t free_bytes = 0, total_bytes = 0;
    };
    MemInfo mem_info() const;
    HipBuffer alloc(std::size_t bytes) const;
    // nullopt-like empty buffer instead of an error when the memory is not there (memtest's chunks).
    HipBuffer try_alloc(std::size_t bytes) const;
    HipPinned alloc_pinned(std::size_t bytes) const;
    HipStream stream() const;
    HipEvent event() const;
    void synchronize() const;
    void zero(const HipBuffer& b) const;
    void upload(const HipBuffer& dst, const void* src, std::size_t bytes) const;
    void download(void* dst, const HipBuffer& src, std::size_t bytes) const;

    kernels::LaunchGeometry geometry(std::string_view kernel) const;
    // Launches after checking `args` against the catalogue's parameter list.
    void launch(std::string_view kernel, kernels::LaunchGeometry g, const HipStream& s,
                std::initializer_list<KernelArg> args);
    // Milliseconds `work` took on stream `s`, between two events.
    double time_ms(const HipStream& s, const std::function<void()>& work) const;

private:
    hip::hipFunction_t function(std::string_view kernel);
    void need(const void* fn, const char* name) const;

    std::shared_ptr<const HipApi> api_;
    int ordinal_ = -1;
    std::string gfx_;
    hip::hipModule_t module_ = nullptr;
    mutable int cu_count_ = 0;
    std::mutex mu_;
    std::map<std::string, hip::hipFunction_t, std::less<>> functions_;
};

// HIP for the run, loaded once (GPUVET_LIBHIP, else the usual names) and hipInit called; null
// with `why` set when it cannot be used.
std::shared_ptr<const HipApi> shared_hip(std::string& why);

}  // namespace gpuvet
