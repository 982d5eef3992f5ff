// A deadline on every driver call. A driver stuck in an ioctl cannot be cancelled, so the thread
// that waits for the answer must not be the one that makes the call: each thread that calls a
// vendor library gets a worker thread of its own (so CUDA's per-thread current context stays as
// it would be), the call runs there, and the caller waits at most the call's budget. A call that
// does not return in time is abandoned (its worker is detached, never joined), the library or
// the GPU it named is marked wedged, and every later call to it fails fast with the same reason.
//
// The calls are wrapped where the symbol tables store their function pointers (symbol_table.hpp),
// so call sites do not change: a wrapped pointer has the library's own signature and returns
// NoAnswer<status type> (a status the library never returns) when the call was abandoned or not
// made.
// docs/architecture.md ("A deadline on every driver call") has the budgets and the exit path.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>

namespace gpuvet {

// Names the seconds a driver query may take (default 30); calls that wait for GPU work (kernels,
// synchronisation, copies, module loads, collective set-up) get ten times as long.
inline constexpr const char* kEnvDriverTimeout = "GPUVET_DRIVER_TIMEOUT_S";
inline constexpr double kDefaultDriverTimeoutS = 30;
inline constexpr double kDriverWorkFactor = 10;

// Overrides the budget (the --driver-timeout option); `s` > 0.
void set_driver_timeout_s(double s);
// The budget in force: the option, else GPUVET_DRIVER_TIMEOUT_S, else 30 s.
double driver_timeout_s();
// Parses GPUVET_DRIVER_TIMEOUT_S; empty when unset or valid, else what is wrong with it.
std::string driver_timeout_env_problem();

// How a library's calls name their GPU, for the message and the per-GPU wedged state.
enum class GpuFrom {
    Handle,      // a handle recorded by DriverHooks (NVML device handles, CUDA contexts)
    CurrentCtx,  // the calling thread's current CUDA context (cuBLASLt, CUDA work calls)
};

// One vendor library's deadline state. Process-wide: one per library name.
class DriverLib {
public:
    explicit DriverLib(const char* name, GpuFrom from) : name_(name), from_(from) {}
    const char* name() const { return name_; }
    GpuFrom gpu_from() const { return from_; }

private:
    const char* name_;
    GpuFrom from_;
};

DriverLib& nvml_driver_lib();
DriverLib& cuda_driver_lib();
DriverLib& cublaslt_driver_lib();
DriverLib& nccl_driver_lib();
// A library bound later (the AMD libraries): one DriverLib per name, created on first use.
DriverLib& driver_lib(const char* name, GpuFrom from);

// Handles that name a GPU (recorded when the library hands them out); -1 when unknown.
void record_gpu_handle(DriverLib& lib, const void* handle, int gpu);
int gpu_of_handle(const DriverLib& lib, const void* handle);
// The GPU of the calling thread's current CUDA context (set by the cuCtxSetCurrent wrapper).
void set_thread_gpu(int gpu);
int thread_gpu();

// True when a library, or one GPU of it, stopped answering; the report's and top's wording.
bool any_driver_wedged();
// Why the GPU behind `handle` gets no more calls of `lib` (it, or the whole library, stopped
// answering); empty while it answers.
std::string handle_no_answer(const DriverLib& lib, const void* handle);
// Every wedged library and GPU, one line each ("GPU 3: nvmlDeviceGetPowerUsage did not ...").
std::string driver_wedge_summary();
// The text of the last call this thread saw abandoned or refused (for messages built right after).
std::string last_driver_no_answer();
// Advice for a call that got no answer.
const char* driver_no_answer_advice();

// The work a wrapped call hands to its thread's worker.
class DriverJob {
public:
    virtual ~DriverJob() = default;
    virtual void run() = 0;
};

// Runs `job` on the calling thread's worker and waits for it at most the call's budget (shorter
// once a stop was requested). False: the call was refused (library or GPU already wedged) or
// abandoned; last_driver_no_answer() says which and why.
bool run_driver_call(DriverLib& lib, const char* call, int gpu, const std::shared_ptr<DriverJob>& job);

// Per-symbol hooks, specialised next to a symbol table: which GPU a call names, and what to
// record from its answer (a handle it handed out).
template <auto M>
struct DriverHooks {
    template <class... A>
    static int gpu(DriverLib& lib, A... a) {
        int g = -1;
        if constexpr (sizeof...(A) > 0) {
            using First = std::tuple_element_t<0, std::tuple<A...>>;
            if constexpr (std::is_pointer_v<First> && !std::is_function_v<std::remove_pointer_t<First>>)
                g = gpu_of_handle(lib, std::get<0>(std::tie(a...)));
        }
        if (g < 0 && lib.gpu_from() == GpuFrom::CurrentCtx) g = thread_gpu();
        return g;
    }
    template <class R, class... A>
    static void after(DriverLib&, int, R, A...) {}
};

// What a wrapped call returns when it got no answer. A library's status enum must name its own
// (a specialisation next to the enum): a value the library never returns, inside the enum's
// range so that it is a valid value of the type (NVML and CUDA: 1000; cuBLAS: 31; NCCL: 15).
template <class R>
struct NoAnswer {
    static_assert(!std::is_enum_v<R>, "a status enum needs its NoAnswer<> specialisation");
    static R value() {
        if constexpr (std::is_pointer_v<R>) {
            return nullptr;  // nvmlErrorString and the like: callers fall back to their own tables
        } else {
            return R{};  // version queries (size_t): 0, which callers read as unknown
        }
    }
};

// The wrapped function of member `M` of a library's API struct: the real address lives here.
template <auto M, class Fn>
struct GuardedCall;

template <auto M, class R, class... A>
struct GuardedCall<M, R (*)(A...)> {
    static inline R (*real)(A...) = nullptr;
    static inline const char* name = "";
    static inline DriverLib* lib = nullptr;

    struct Job final : DriverJob {
        R (*fn)(A...);
        std::tuple<A...> args;
        R result{};
        Job(R (*f)(A...), A... a) : fn(f), args(a...) {}
        void run() override { result = std::apply(fn, args); }
    };

    static R call(A... a) {
        int gpu = DriverHooks<M>::gpu(*lib, a...);
        auto job = std::make_shared<Job>(real, a...);
        if (!run_driver_call(*lib, name, gpu, job)) return NoAnswer<R>::value();
        DriverHooks<M>::after(*lib, gpu, job->result, a...);
        return job->result;
    }
};

// Stores `p` (the address dlsym found under `symbol`) into member `M`: wrapped when `lib` is
// given. The wrapper's slot holds one address per member, the library loaded last: gpuvet loads
// one file per vendor library and keeps it (a candidate it rejects is loaded before the one it
// keeps); tests that load several doubles in one process load them unwrapped (load_file).
template <auto M, class Api>
void store_member(Api& api, void* p, const char* symbol, DriverLib* lib) {
    using Fn = std::remove_reference_t<decltype(api.*M)>;
    auto real = reinterpret_cast<Fn>(p);
    using G = GuardedCall<M, Fn>;
    if (!lib || !real) {
        api.*M = real;
        return;
    }
    if (G::real != real || G::lib != lib) {
        G::real = real;
        G::name = symbol;
        G::lib = lib;
    }
    api.*M = &G::call;
}

}  // namespace gpuvet
