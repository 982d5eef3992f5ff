#include "gpu/amd_session.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gpuvet {

namespace {

Error driver_error(std::string msg, std::string advice) {
    return Error(ErrorKind::Driver, std::move(msg), std::move(advice));
}

// What a call abandoned at its deadline may still touch lives on the heap and is left to it
// (never freed) when it got no answer (docs/architecture.md, "Late answers").
template <class T>
void leave_to_abandoned_call(unsigned rc, std::unique_ptr<T>& held) {
    if (rc == kHipNoAnswer) static_cast<void>(held.release());
}

// "0000:05:00.0" in one spelling: lower case, with the domain.
std::string normal_bus_id(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (std::count(s.begin(), s.end(), ':') == 1) s = "0000:" + s;
    return s;
}

}  // namespace

HipError::HipError(std::string_view call, unsigned code, const std::string& name)
    : Error(ErrorKind::Driver, std::string(call) + " failed: " + name + " (" + std::to_string(code) + ")",
            hip_advice(code)),
      code_(code) {}

void hip_check(const HipApi& api, unsigned code, std::string_view what) {
    if (code != hip::hipSuccess) throw HipError(what, code, api.error_name(code));
}

// ---- RAII handles: destructors ignore errors (they run during unwinding) -----------------------

HipBuffer& HipBuffer::operator=(HipBuffer&& o) noexcept {
    if (this != &o) {
        reset();
        api_ = o.api_, p_ = o.p_, bytes_ = o.bytes_;
        o.p_ = nullptr, o.bytes_ = 0;
    }
    return *this;
}
void HipBuffer::reset() {
    if (p_ && api_) api_->hipFree(p_);
    p_ = nullptr, bytes_ = 0;
}

HipPinned& HipPinned::operator=(HipPinned&& o) noexcept {
    if (this != &o) {
        reset();
        api_ = o.api_, p_ = o.p_, bytes_ = o.bytes_;
        o.p_ = nullptr, o.bytes_ = 0;
    }
    return *this;
}
void HipPinned::reset() {
    if (p_ && api_ && api_->hipHostFree) api_->hipHostFree(p_);
    p_ = nullptr, bytes_ = 0;
}

HipStream& HipStream::operator=(HipStream&& o) noexcept {
    if (this != &o) {
        if (s_ && api_) api_->hipStreamDestroy(s_);
        api_ = o.api_, s_ = o.s_;
        o.s_ = nullptr;
    }
    return *this;
}
HipStream::~HipStream() {
    if (s_ && api_) api_->hipStreamDestroy(s_);
}
void HipStream::synchronize() const { hip_check(*api_, api_->hipStreamSynchronize(s_), "hipStreamSynchronize"); }

HipEvent& HipEvent::operator=(HipEvent&& o) noexcept {
    if (this != &o) {
        if (e_ && api_) api_->hipEventDestroy(e_);
        api_ = o.api_, e_ = o.e_;
        o.e_ = nullptr;
    }
    return *this;
}
HipEvent::~HipEvent() {
    if (e_ && api_) api_->hipEventDestroy(e_);
}
void HipEvent::record(const HipStream& s) const {
    hip_check(*api_, api_->hipEventRecord(e_, s.get()), "hipEventRecord");
}
double HipEvent::ms_until(const HipEvent& end) const {
    hip_check(*api_, api_->hipEventSynchronize(end.e_), "hipEventSynchronize");
    float ms = 0;
    hip_check(*api_, api_->hipEventElapsedTime(&ms, e_, end.e_), "hipEventElapsedTime");
    return ms;
}

// ---- the session ---------------------------------------------------------------------------------

HipSession::HipSession(std::shared_ptr<const HipApi> api, const std::string& pci_bus_id, int fallback_ordinal,
                       const std::string& gfx)
    : api_(std::move(api)), gfx_(gfx) {
    const amd_kernels::CodeObject* co = amd_kernels::code_object_for(gfx);
    if (!co)
        throw driver_error(
            "gpuvet has no code object for this GPU's target " + gfx + " (built for " + amd_kernels::targets_list() +
                ")",
            "rebuild gpuvet with -DGPUVET_AMDGPU_TARGETS=\"...;" + gfx + "\" (clang 19 or newer must know the target)");
    int count = 0;
    hip_check(*api_, api_->hipGetDeviceCount(&count), "hipGetDeviceCount");
    ordinal_ = -1;
    if (api_->hipDeviceGetPCIBusId && !pci_bus_id.empty()) {
        for (int d = 0; d < count && ordinal_ < 0; ++d) {
            char buf[64] = {};
            if (api_->hipDeviceGetPCIBusId(buf, sizeof buf, d) == hip::hipSuccess &&
                normal_bus_id(buf) == normal_bus_id(pci_bus_id))
                ordinal_ = d;
        }
        if (ordinal_ < 0)
            throw driver_error("HIP lists no device at PCI bus id " + pci_bus_id + " (AMD SMI's GPU)",
                               "check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES: they hide GPUs from HIP");
    } else {
        if (fallback_ordinal >= count)
            throw driver_error("HIP sees " + std::to_string(count) + " GPUs; GPU " + std::to_string(fallback_ordinal) +
                                   " is not among them",
                               "check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES: they hide GPUs from HIP");
        ordinal_ = fallback_ordinal;
    }
    make_current();
    // HIP reads the image during the load; an abandoned load may read it later, so it is held.
    auto image = std::make_unique<std::string>(co->bytes());
    unsigned rc = api_->hipModuleLoadData(&module_, image->data());
    leave_to_abandoned_call(rc, image);
    hip_check(*api_, rc, "hipModuleLoadData(" + gfx + " code object)");
}

HipSession::~HipSession() {
    if (module_) {
        api_->hipSetDevice(ordinal_);
        api_->hipModuleUnload(module_);
    }
}

void HipSession::need(const void* fn, const char* name) const {
    if (!fn)
        throw driver_error("libamdhip64 at " + api_->path + " lacks " + name,
                           "update ROCm: gpuvet's AMD measurements need HIP 5 or newer");
}

void HipSession::make_current() const { hip_check(*api_, api_->hipSetDevice(ordinal_), "hipSetDevice"); }

int HipSession::cu_count() const {
    if (cu_count_ > 0) return cu_count_;
    need(reinterpret_cast<const void*>(api_->hipDeviceGetAttribute), "hipDeviceGetAttribute");
    int n = 0;
    hip_check(*api_, api_->hipDeviceGetAttribute(&n, hip::hipDeviceAttributeMultiprocessorCount, ordinal_),
              "hipDeviceGetAttribute(MultiprocessorCount)");
    if (n <= 0)
        throw driver_error("HIP reports " + std::to_string(n) + " compute units", "check dmesg for amdgpu errors");
    return cu_count_ = n;
}

HipSession::MemInfo HipSession::mem_info() const {
    need(reinterpret_cast<const void*>(api_->hipMemGetInfo), "hipMemGetInfo");
    std::size_t free_b = 0, total_b = 0;
    hip_check(*api_, api_->hipMemGetInfo(&free_b, &total_b), "hipMemGetInfo");
    return {free_b, total_b};
}

HipBuffer HipSession::alloc(std::size_t bytes) const {
    void* p = nullptr;
    hip_check(*api_, api_->hipMalloc(&p, bytes), "hipMalloc");
    return HipBuffer(api_.get(), p, bytes);
}

HipBuffer HipSession::try_alloc(std::size_t bytes) const {
    void* p = nullptr;
    unsigned rc = api_->hipMalloc(&p, bytes);
    if (rc == hip::hipErrorOutOfMemory) return {};
    hip_check(*api_, rc, "hipMalloc");
    return HipBuffer(api_.get(), p, bytes);
}

HipPinned HipSession::alloc_pinned(std::size_t bytes) const {
    need(reinterpret_cast<const void*>(api_->hipHostMalloc), "hipHostMalloc");
    need(reinterpret_cast<const void*>(api_->hipHostFree), "hipHostFree");
    void* p = nullptr;
    hip_check(*api_, api_->hipHostMalloc(&p, bytes, hip::kHostMallocDefault), "hipHostMalloc");
    return HipPinned(api_.get(), p, bytes);
}

HipStream HipSession::stream() const {
    need(reinterpret_cast<const void*>(api_->hipStreamCreate), "hipStreamCreate");
    need(reinterpret_cast<const void*>(api_->hipStreamDestroy), "hipStreamDestroy");
    need(reinterpret_cast<const void*>(api_->hipStreamSynchronize), "hipStreamSynchronize");
    hip::hipStream_t s = nullptr;
    hip_check(*api_, api_->hipStreamCreate(&s), "hipStreamCreate");
    return HipStream(api_.get(), s);
}

HipEvent HipSession::event() const {
    for (auto [fn, name] : {std::pair{reinterpret_cast<const void*>(api_->hipEventCreate), "hipEventCreate"},
                            {reinterpret_cast<const void*>(api_->hipEventRecord), "hipEventRecord"},
                            {reinterpret_cast<const void*>(api_->hipEventSynchronize), "hipEventSynchronize"},
                            {reinterpret_cast<const void*>(api_->hipEventElapsedTime), "hipEventElapsedTime"},
                            {reinterpret_cast<const void*>(api_->hipEventDestroy), "hipEventDestroy"}})
        need(fn, name);
    hip::hipEvent_t e = nullptr;
    hip_check(*api_, api_->hipEventCreate(&e), "hipEventCreate");
    return HipEvent(api_.get(), e);
}

void HipSession::synchronize() const { hip_check(*api_, api_->hipDeviceSynchronize(), "hipDeviceSynchronize"); }

void HipSession::zero(const HipBuffer& b) const {
    if (api_->hipMemset) {
        hip_check(*api_, api_->hipMemset(b.get(), 0, b.bytes()), "hipMemset");
        return;
    }
    std::vector<unsigned char> z(b.bytes(), 0);
    upload(b, z.data(), z.size());
}

// Both copies stage through a buffer of their own (they move kilobytes: results and counters).
void HipSession::upload(const HipBuffer& dst, const void* src, std::size_t bytes) const {
    auto staged = std::make_unique<std::byte[]>(bytes);
    std::memcpy(staged.get(), src, bytes);
    unsigned rc = api_->hipMemcpy(dst.get(), staged.get(), bytes, hip::hipMemcpyHostToDevice);
    leave_to_abandoned_call(rc, staged);
    hip_check(*api_, rc, "hipMemcpy(host to device)");
}

void HipSession::download(void* dst, const HipBuffer& src, std::size_t bytes) const {
    auto staged = std::make_unique<std::byte[]>(bytes);
    unsigned rc = api_->hipMemcpy(staged.get(), src.get(), bytes, hip::hipMemcpyDeviceToHost);
    leave_to_abandoned_call(rc, staged);
    hip_check(*api_, rc, "hipMemcpy(device to host)");
    std::memcpy(dst, staged.get(), bytes);
}

hip::hipFunction_t HipSession::function(std::string_view kernel) {
    std::lock_guard lock(mu_);
    if (auto it = functions_.find(kernel); it != functions_.end()) return it->second;
    hip::hipFunction_t f = nullptr;
    std::string name(kernel);
    hip_check(*api_, api_->hipModuleGetFunction(&f, module_, name.c_str()), "hipModuleGetFunction(" + name + ")");
    functions_.emplace(name, f);
    return f;
}

kernels::LaunchGeometry HipSession::geometry(std::string_view kernel) const {
    const amd_kernels::KernelInfo* k = amd_kernels::find_kernel(kernel);
    if (!k) throw internal_error("unknown AMD GPU kernel " + std::string(kernel));
    return amd_kernels::launch_geometry(*k, static_cast<std::uint32_t>(cu_count()));
}

void HipSession::launch(std::string_view kernel, kernels::LaunchGeometry g, const HipStream& s,
                        std::initializer_list<KernelArg> args) {
    const amd_kernels::KernelInfo* k = amd_kernels::find_kernel(kernel);
    if (!k) throw internal_error("unknown AMD GPU kernel " + std::string(kernel));
    bool same = k->params.size() == args.size();
    for (std::size_t i = 0; same && i < args.size(); ++i) same = k->params[i] == args.begin()[i].type;
    if (!same) throw internal_error("arguments of " + std::string(kernel) + " do not match its parameter list");
    hip::hipFunction_t f = function(kernel);
    // HIP copies each explicit argument from the address given, by the size the code object's
    // metadata records (8 for pointers and 64-bit values, 4 for the rest): pointers into our copy.
    struct Params {
        std::vector<KernelArg> vals;
        std::vector<void*> ptrs;
    };
    auto held = std::make_unique<Params>(Params{std::vector<KernelArg>(args), {}});
    for (auto& v : held->vals) held->ptrs.push_back(&v.v);
    unsigned rc = api_->hipModuleLaunchKernel(f, g.grid, 1, 1, g.block, 1, 1, 0, s.get(), held->ptrs.data(), nullptr);
    leave_to_abandoned_call(rc, held);
    hip_check(*api_, rc, "hipModuleLaunchKernel(" + std::string(kernel) + ")");
}

double HipSession::time_ms(const HipStream& s, const std::function<void()>& work) const {
    HipEvent a = event(), b = event();
    a.record(s);
    work();
    b.record(s);
    return a.ms_until(b);
}

std::shared_ptr<const HipApi> shared_hip(std::string& why) {
    static std::mutex mu;
    static std::shared_ptr<const HipApi> api;
    static std::string error;
    static bool tried = false;
    std::lock_guard lock(mu);
    if (!tried) {
        tried = true;
        auto a = std::make_shared<HipApi>(HipApi::load());
        if (!a->ok()) {
            error = a->error;
        } else if (unsigned rc = a->hipInit(0); rc != hip::hipSuccess) {
            error = "hipInit failed: " + a->error_name(rc) + " (" + hip_advice(rc) + ")";
        } else {
            api = a;
        }
    }
    why = error;
    return api;
}

}  // namespace gpuvet
