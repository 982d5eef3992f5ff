#include "gpu/session.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

#include "core/context.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

namespace {

Error driver_error(std::string msg, std::string advice) {
    return Error(ErrorKind::Driver, std::move(msg), std::move(advice));
}

std::string trim_log(const char* log) {
    std::string s(log);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
    return s;
}

// A call abandoned at its deadline, or when gpuvet was stopped, may still read or write what it was
// given after its caller has moved on and freed it: what such a call can touch lives on the heap
// and is left to the call (never freed) when it got no answer.
template <class T>
void leave_to_abandoned_call(cu::CUresult rc, std::unique_ptr<T>& held) {
    if (rc == NoAnswer<cu::CUresult>::value()) static_cast<void>(held.release());
}

}  // namespace

void cuda_check(const CudaApi& api, int code, const char* what) {
    if (code != cu::CUDA_SUCCESS) throw CudaError(what, code, api.error_name(code));
}

// ---- RAII handles -------------------------------------------------------------------------------
// Destructors ignore errors: they run during unwinding, and a freed-after-fault context answers
// with the fault again.

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        reset();
        api_ = o.api_, ptr_ = o.ptr_, bytes_ = o.bytes_;
        o.ptr_ = 0, o.bytes_ = 0;
    }
    return *this;
}
void DeviceBuffer::reset() {
    if (ptr_ && api_ && api_->cuMemFree) api_->cuMemFree(ptr_);
    ptr_ = 0, bytes_ = 0;
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
        reset();
        api_ = o.api_, p_ = o.p_, bytes_ = o.bytes_;
        o.p_ = nullptr, o.bytes_ = 0;
    }
    return *this;
}
void PinnedBuffer::reset() {
    if (p_ && api_ && api_->cuMemFreeHost) api_->cuMemFreeHost(p_);
    p_ = nullptr, bytes_ = 0;
}

Stream& Stream::operator=(Stream&& o) noexcept {
    if (this != &o) {
        if (s_ && api_ && api_->cuStreamDestroy) api_->cuStreamDestroy(s_);
        api_ = o.api_, s_ = o.s_;
        o.s_ = nullptr;
    }
    return *this;
}
Stream::~Stream() {
    if (s_ && api_ && api_->cuStreamDestroy) api_->cuStreamDestroy(s_);
}
void Stream::synchronize() const { cuda_check(*api_, api_->cuStreamSynchronize(s_), "cuStreamSynchronize"); }

Event& Event::operator=(Event&& o) noexcept {
    if (this != &o) {
        if (e_ && api_ && api_->cuEventDestroy) api_->cuEventDestroy(e_);
        api_ = o.api_, e_ = o.e_;
        o.e_ = nullptr;
    }
    return *this;
}
Event::~Event() {
    if (e_ && api_ && api_->cuEventDestroy) api_->cuEventDestroy(e_);
}
void Event::record(const Stream& s) const { cuda_check(*api_, api_->cuEventRecord(e_, s.get()), "cuEventRecord"); }
void Event::synchronize() const { cuda_check(*api_, api_->cuEventSynchronize(e_), "cuEventSynchronize"); }

double elapsed_ms(const CudaApi& api, const Event& start, const Event& end) {
    end.synchronize();
    float ms = 0;
    cuda_check(api, api.cuEventElapsedTime(&ms, start.get(), end.get()), "cuEventElapsedTime");
    return ms;
}

// ---- GpuSession ---------------------------------------------------------------------------------

void GpuSession::need(const void* fn, const char* name) const {
    if (!fn)
        throw driver_error(std::string("libcuda at ") + api_->path + " lacks " + name,
                           "update the NVIDIA driver: GPU measurements need it");
}

GpuSession::GpuSession(std::shared_ptr<const CudaApi> api, int cuda_ordinal)
    : api_(std::move(api)), ordinal_(cuda_ordinal) {
    const CudaApi& a = *api_;
    // Everything the measurements use; checked up front so a missing one fails at open, clearly.
    need(reinterpret_cast<const void*>(a.cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain");
    need(reinterpret_cast<const void*>(a.cuDevicePrimaryCtxRelease), "cuDevicePrimaryCtxRelease");
    need(reinterpret_cast<const void*>(a.cuCtxSetCurrent), "cuCtxSetCurrent");
    need(reinterpret_cast<const void*>(a.cuDeviceGetAttribute), "cuDeviceGetAttribute");
    need(reinterpret_cast<const void*>(a.cuMemAlloc), "cuMemAlloc_v2");
    need(reinterpret_cast<const void*>(a.cuMemFree), "cuMemFree_v2");
    need(reinterpret_cast<const void*>(a.cuLaunchKernel), "cuLaunchKernel");
    need(reinterpret_cast<const void*>(a.cuEventElapsedTime), "cuEventElapsedTime");
    cuda_check(a, a.cuDeviceGet(&dev_, cuda_ordinal), "cuDeviceGet");
    cuda_check(a, a.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
    try {
        make_current();
    } catch (...) {
        a.cuDevicePrimaryCtxRelease(dev_);
        throw;
    }
}

GpuSession::~GpuSession() {
    // Modules die with the primary context when its last reference goes; other holders (cuBLASLt,
    // NCCL) may still use it, so unload ours explicitly only through the context's own lifetime.
    if (ctx_) api_->cuDevicePrimaryCtxRelease(dev_);
}

void GpuSession::make_current() const { cuda_check(*api_, api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); }

int GpuSession::attribute(cu::CUdevice_attribute attr) const {
    int v = 0;
    cuda_check(*api_, api_->cuDeviceGetAttribute(&v, attr, dev_), "cuDeviceGetAttribute");
    return v;
}

int GpuSession::compute_capability() const {
    return attribute(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
           attribute(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

GpuSession::MemInfo GpuSession::mem_info() const {
    need(reinterpret_cast<const void*>(api_->cuMemGetInfo), "cuMemGetInfo_v2");
    std::size_t f = 0, t = 0;
    cuda_check(*api_, api_->cuMemGetInfo(&f, &t), "cuMemGetInfo");
    return {f, t};
}

DeviceBuffer GpuSession::alloc(std::size_t bytes) const {
    cu::CUdeviceptr p = 0;
    cuda_check(*api_, api_->cuMemAlloc(&p, bytes), "cuMemAlloc");
    return DeviceBuffer(api_.get(), p, bytes);
}

GpuSession::DmaBuf GpuSession::export_dmabuf(cu::CUdeviceptr ptr, std::size_t bytes) const {
    DmaBuf out;
    if (!api_->cuMemGetHandleForAddressRange) {
        out.why = "libcuda at " + api_->path + " lacks cuMemGetHandleForAddressRange (driver older than 515)";
        return out;
    }
    int supported = 0;
    if (const int rc = api_->cuDeviceGetAttribute(&supported, cu::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev_);
        rc != cu::CUDA_SUCCESS) {
        out.why = "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) failed with " + api_->error_name(rc);
        return out;
    }
    if (!supported) {
        out.why =
            "the driver says this GPU cannot export DMA-BUF (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0: it needs "
            "driver 515 or later with the open kernel module, on a kernel with dma-buf, 5.12 or later)";
        return out;
    }
    int fd = -1;
    const int rc = api_->cuMemGetHandleForAddressRange(&fd, ptr, bytes, cu::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (rc != cu::CUDA_SUCCESS || fd < 0) {
        out.why = "cuMemGetHandleForAddressRange refused (" + api_->error_name(rc) +
                  "): driver older than 515, or a kernel without dma-buf";
        return out;
    }
    out.fd = fd;
    return out;
}

PinnedBuffer GpuSession::alloc_pinned(std::size_t bytes) const {
    need(reinterpret_cast<const void*>(api_->cuMemHostAlloc), "cuMemHostAlloc");
    void* p = nullptr;
    cuda_check(*api_, api_->cuMemHostAlloc(&p, bytes, cu::kMemHostAllocPortable), "cuMemHostAlloc");
    return PinnedBuffer(api_.get(), p, bytes);
}

Stream GpuSession::stream() const {
    need(reinterpret_cast<const void*>(api_->cuStreamCreate), "cuStreamCreate");
    cu::CUstream s = nullptr;
    cuda_check(*api_, api_->cuStreamCreate(&s, cu::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return Stream(api_.get(), s);
}

Event GpuSession::event() const {
    need(reinterpret_cast<const void*>(api_->cuEventCreate), "cuEventCreate");
    cu::CUevent e = nullptr;
    cuda_check(*api_, api_->cuEventCreate(&e, cu::CU_EVENT_DEFAULT), "cuEventCreate");
    return Event(api_.get(), e);
}

void GpuSession::synchronize() const { cuda_check(*api_, api_->cuCtxSynchronize(), "cuCtxSynchronize"); }

void GpuSession::zero(const DeviceBuffer& b, const Stream* s) const {
    if (s) {
        need(reinterpret_cast<const void*>(api_->cuMemsetD32Async), "cuMemsetD32Async");
        if (b.bytes() % 4 == 0) {
            cuda_check(*api_, api_->cuMemsetD32Async(b.ptr(), 0, b.bytes() / 4, s->get()), "cuMemsetD32Async");
            return;
        }
    }
    cuda_check(*api_, api_->cuMemsetD8(b.ptr(), 0, b.bytes()), "cuMemsetD8");
}

// Both copies stage through a buffer of their own (they move kilobytes: results, counters, tiles).
void GpuSession::upload(cu::CUdeviceptr dst, const void* src, std::size_t bytes) const {
    auto staged = std::make_unique<std::byte[]>(bytes);
    std::memcpy(staged.get(), src, bytes);
    cu::CUresult rc = api_->cuMemcpyHtoD(dst, staged.get(), bytes);
    leave_to_abandoned_call(rc, staged);
    cuda_check(*api_, rc, "cuMemcpyHtoD");
}

void GpuSession::download(void* dst, cu::CUdeviceptr src, std::size_t bytes) const {
    auto staged = std::make_unique<std::byte[]>(bytes);
    cu::CUresult rc = api_->cuMemcpyDtoH(staged.get(), src, bytes);
    leave_to_abandoned_call(rc, staged);
    cuda_check(*api_, rc, "cuMemcpyDtoH");
    std::memcpy(dst, staged.get(), bytes);
}

cu::CUfunction GpuSession::function(std::string_view kernel) {
    std::lock_guard lock(mu_);
    if (auto it = functions_.find(kernel); it != functions_.end()) return it->second;
    const kernels::KernelInfo* k = kernels::find_kernel(kernel);
    if (!k) throw internal_error("unknown GPU kernel " + std::string(kernel));
    int cc = compute_capability();
    if (cc < k->min_cc)
        throw driver_error("kernel " + std::string(kernel) + " needs compute capability " +
                               std::to_string(k->min_cc / 10) + "." + std::to_string(k->min_cc % 10) +
                               "; this GPU has " + std::to_string(cc / 10) + "." + std::to_string(cc % 10),
                           "nothing to do: this GPU cannot run that measurement");
    auto mit = modules_.find(k->module);
    if (mit == modules_.end()) {
        const kernels::PtxModule* m = kernels::find_module(k->module);
        if (!m) throw internal_error("no embedded PTX module " + std::string(k->module));
        std::string ptx(m->text());  // NUL-terminated copy: the driver reads a C string
        cu::CUmodule mod = nullptr;
        if (api_->cuModuleLoadDataEx) {
            // Ask for the JIT error log so a rejected module says why (line, instruction).
            static constexpr std::size_t kLog = 8192;
            std::vector<char> err(kLog, '\0');
            cu::CUjit_option opts[] = {cu::CU_JIT_ERROR_LOG_BUFFER, cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
            void* vals[] = {err.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(kLog - 1))};
            int rc = api_->cuModuleLoadDataEx(&mod, ptx.c_str(), 2, opts, vals);
            if (rc == kCudaNoAnswer) {
                // The abandoned load may still read the image and write the log one day: both
                // stay allocated (moving keeps their buffers) for the rest of the process.
                static_cast<void>(new std::vector<char>(std::move(err)));
                static_cast<void>(new std::string(std::move(ptx)));
                cuda_check(*api_, rc, ("cuModuleLoadDataEx(" + std::string(m->stem) + ".ptx)").c_str());
            }
            if (rc != cu::CUDA_SUCCESS) {
                CudaError e("cuModuleLoadDataEx(" + std::string(m->stem) + ".ptx)", rc, api_->error_name(rc));
                std::string log = trim_log(err.data());
                if (log.empty()) throw e;
                throw driver_error(std::string(e.what()) + ": " + log, e.advice());
            }
        } else {
            need(reinterpret_cast<const void*>(api_->cuModuleLoadData), "cuModuleLoadData");
            int rc = api_->cuModuleLoadData(&mod, ptx.c_str());
            if (rc == kCudaNoAnswer) static_cast<void>(new std::string(std::move(ptx)));  // as above
            cuda_check(*api_, rc, ("cuModuleLoadData(" + std::string(m->stem) + ".ptx)").c_str());
        }
        mit = modules_.emplace(std::string(k->module), mod).first;
    }
    cu::CUfunction f = nullptr;
    std::string name(kernel);
    cuda_check(*api_, api_->cuModuleGetFunction(&f, mit->second, name.c_str()), "cuModuleGetFunction");
    functions_.emplace(name, f);
    return f;
}

kernels::LaunchGeometry GpuSession::geometry(std::string_view kernel) const {
    const kernels::KernelInfo* k = kernels::find_kernel(kernel);
    if (!k) throw internal_error("unknown GPU kernel " + std::string(kernel));
    return kernels::launch_geometry(*k, static_cast<uint32_t>(std::max(1, sm_count())));
}

void GpuSession::launch(std::string_view kernel, kernels::LaunchGeometry g, const Stream& s,
                        std::initializer_list<KernelArg> args) {
    const kernels::KernelInfo* k = kernels::find_kernel(kernel);
    if (!k) throw internal_error("unknown GPU kernel " + std::string(kernel));
    bool same = k->params.size() == args.size();
    for (std::size_t i = 0; same && i < args.size(); ++i) same = k->params[i] == args.begin()[i].type;
    if (!same) throw internal_error("arguments of " + std::string(kernel) + " do not match its parameter list");
    cu::CUfunction f = function(kernel);
    // The driver copies each parameter from the address given; pointers into our own copy.
    struct Params {
        std::vector<KernelArg> vals;
        std::vector<void*> ptrs;
    };
    auto held = std::make_unique<Params>(Params{std::vector<KernelArg>(args), {}});
    held->ptrs.reserve(held->vals.size());
    for (auto& v : held->vals) held->ptrs.push_back(&v.v);
    cu::CUresult rc = api_->cuLaunchKernel(f, g.grid, 1, 1, g.block, 1, 1, 0, s.get(), held->ptrs.data(), nullptr);
    leave_to_abandoned_call(rc, held);
    cuda_check(*api_, rc, "cuLaunchKernel");
}

double GpuSession::time_ms(const Stream& s, const std::function<void()>& work) const {
    Event a = event(), b = event();
    a.record(s);
    work();
    b.record(s);
    return elapsed_ms(*api_, a, b);
}

// ---- GpuSet -------------------------------------------------------------------------------------

std::shared_ptr<const CudaApi> shared_cuda_api() {
    static std::mutex mu;
    static std::shared_ptr<const CudaApi> api;
    std::lock_guard lock(mu);
    if (api) return api;
    auto a = std::make_shared<CudaApi>(CudaApi::load());
    if (!a->ok()) throw driver_error(a->error, "install the NVIDIA driver, or set GPUVET_LIBCUDA to libcuda's path");
    cuda_check(*a, a->cuInit(0), "cuInit");
    api = a;
    return api;
}

GpuSet GpuSet::open(std::shared_ptr<const CudaApi> api, const std::vector<std::pair<int, int>>& gpus) {
    GpuSet set;
    set.api_ = std::move(api);
    for (auto [index, ordinal] : gpus) {
        Member m;
        m.index = index;
        m.cuda_ordinal = ordinal;
        if (ordinal < 0) {
            m.error = "GPU " + std::to_string(index) + " has no CUDA device (not visible to CUDA)";
            m.advice = "check CUDA_VISIBLE_DEVICES, MIG mode and nvidia-smi";
        } else {
            try {
                m.session = std::make_unique<GpuSession>(set.api_, ordinal);
            } catch (const Error& e) {
                m.error = e.what();
                m.advice = e.advice();
            }
        }
        set.members_.push_back(std::move(m));
    }
    return set;
}

GpuSet GpuSet::open(const std::vector<const GpuInfo*>& gpus) {
    std::vector<std::pair<int, int>> pairs;
    const std::vector<const GpuInfo*>& infos = gpus;
    for (const GpuInfo* g : gpus) pairs.emplace_back(g->index, g->cuda_ordinal.value_or(-1));
    GpuSet set = open(shared_cuda_api(), pairs);
    for (std::size_t i = 0; i < set.members_.size(); ++i) {
        Member& m = set.members_[i];
        m.info = infos[i];
        if (!m.session && infos[i]->lost)
            m.error = "GPU " + std::to_string(infos[i]->index) + " has fallen off the bus";
        else if (!m.session && !infos[i]->cuda_ordinal) {
            // The inventory knows why CUDA cannot see it; that is configuration, judged elsewhere.
            m.error = "GPU " + std::to_string(m.index) + " cannot be measured: " + infos[i]->cuda_ordinal.absent_reason;
            m.unavailable = true;
            m.advice.clear();  // the report's Problem line says what to do
        }
    }
    return set;
}

GpuSet::Member* GpuSet::find(int index) {
    for (auto& m : members_)
        if (m.index == index) return &m;
    return nullptr;
}

void GpuSet::run_parallel(const std::function<void(Member&)>& fn) {
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(members_.size());
    for (std::size_t i = 0; i < members_.size(); ++i) {
        if (!members_[i].session) continue;
        threads.emplace_back([&, i] {
            try {
                members_[i].session->make_current();
                fn(members_[i]);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        });
    }
    for (auto& t : threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

}  // namespace gpuvet
