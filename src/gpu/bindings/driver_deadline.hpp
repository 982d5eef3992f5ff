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
// made. What the library writes through its pointer arguments lands in the call's own storage and
// is copied to the caller only when the call returned in time (below: "What a wrapped call's job
// holds"), so an abandoned call that returns late never writes into a stack frame that is gone.
// docs/architecture.md ("A deadline on every driver call") has the budgets and the exit path.
#pragma once
#include <cerrno>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

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
    FirstIndex,  // the first argument, an integer, is the device index (ROCm SMI's dv_ind)
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
// Advice for a call of `library` (its deadline name: "NVML", "CUDA", "HIP", "RCCL", ...) that got no
// answer: where that vendor's kernel driver logs a hang.
const char* driver_no_answer_advice(std::string_view library);

// The work a wrapped call hands to its thread's worker.
class DriverJob {
public:
    virtual ~DriverJob() = default;
    virtual void run() = 0;
};

// The caller no longer needs the drivers' answers (`run`'s job ended): a call in flight, and every
// later one, is abandoned after the short grace a stop gives. `when` completes the message
// ("... had not returned after 2 s when <the job ended>"); it must have static storage duration.
void cut_driver_waits(const char* when);

// Runs `job` on the calling thread's worker and waits for it at most the call's budget (shorter
// once a stop was requested or the waits were cut). False: the call was refused (library or GPU already wedged) or
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
            else if constexpr (std::is_integral_v<First>)
                if (lib.gpu_from() == GpuFrom::FirstIndex) g = static_cast<int>(std::get<0>(std::tie(a...)));
        }
        if (g < 0 && lib.gpu_from() == GpuFrom::CurrentCtx) g = thread_gpu();
        return g;
    }
    template <class R, class... A>
    static void after(DriverLib&, int, R, A...) {}
};

// The hooks of a device query whose last argument is the device (cuDeviceGetName, hipDeviceGetName...).
struct LastArgDevice {
    template <class... A>
    static int gpu(DriverLib&, A... a) {
        return static_cast<int>(std::get<sizeof...(A) - 1>(std::tie(a...)));
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

// Calls that return a plain int return 0 for success and an errno value for a failure (libibverbs'
// ibv_modify_qp, ibv_query_port...): no answer is ETIMEDOUT, never the 0 that would read as success.
template <>
struct NoAnswer<int> {
    static int value() { return ETIMEDOUT; }
};

// ---- What a wrapped call's job holds ------------------------------------------------------------
// An abandoned call may return one day and write its answers through the pointers it was given.
// Those must not be its caller's: the caller has moved on and its stack frame is reused by then.
// So every argument the library writes through points into the job's own storage, which the
// worker keeps alive (the job is shared with it): copied in before the call (a struct's version
// field, a count that says how large an array is) and out to the caller's object only once the call
// returned in time. C strings and the inputs whose length a call says are held too (a late read of
// freed memory could fault). Pointers the job cannot hold are passed unchanged: handles (pointers
// to opaque types), device addresses, and buffers the caller keeps alive past an abandoned call
// (pinned host memory, which only the driver frees and a wedged driver never does; a module's
// image and JIT log, which gpu/session.cpp leaks when its load gets no answer).

// The argument is passed unchanged.
inline constexpr std::size_t kAsIs = static_cast<std::size_t>(-1);

template <class T>
concept CompleteType = requires {
    sizeof(T);
};

// A handle whose type is complete in the vendor's header but whose object is the library's own (the
// declared size only sizes a caller's storage for the library's *Init calls: cuBLASLt's *Opaque_t):
// passed as it is. Specialised next to the declaration; handles of incomplete types need nothing.
template <class T>
struct OpaqueHandle : std::false_type {};

// A pointer the job can hold the pointee of: a complete, trivially copyable object (void* only
// where DriverArgs gives its length in bytes).
template <class P>
constexpr bool holdable() {
    if constexpr (!std::is_pointer_v<P>) {
        return false;
    } else {
        using T = std::remove_cv_t<std::remove_pointer_t<P>>;
        if constexpr (std::is_function_v<T>) return false;
        else if constexpr (std::is_void_v<T>) return true;
        else if constexpr (!CompleteType<T> || OpaqueHandle<T>::value) return false;  // a handle
        else return std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>;
    }
}

template <class P>
using HeldElement = std::conditional_t<std::is_void_v<std::remove_pointer_t<P>>, unsigned char,
                                       std::remove_cv_t<std::remove_pointer_t<P>>>;

// The library only reads through it: held to be read, never copied back.
template <class P>
constexpr bool read_only() {
    return std::is_const_v<std::remove_pointer_t<P>>;
}

// The job's storage for one argument.
template <class P, bool = holdable<P>()>
struct HeldOf {
    using type = std::monostate;
};
template <class P>
struct HeldOf<P, true> {
    using type = std::unique_ptr<HeldElement<P>[]>;  // not a vector: vector<bool> has no data()
};
template <class P>
using Held = typename HeldOf<P>::type;

// An element count given by value, or through a pointer (an in-out count).
template <class X>
std::size_t count_of(const X& x) {
    if constexpr (std::is_pointer_v<X>) {
        return x ? count_of(*x) : 0;
    } else {
        static_assert(std::is_integral_v<X>, "a count is an integer or a pointer to one");
        return x > 0 ? static_cast<std::size_t>(x) : 0;
    }
}

// Elements of argument I the library reads and writes: one for a pointer to an object, the length
// that follows a char buffer, a C string's bytes; kAsIs for what the job does not hold (void*,
// other const inputs: read during the call).
template <std::size_t I, class... A>
std::size_t default_extent(const std::tuple<A...>& a) {
    using P = std::tuple_element_t<I, std::tuple<A...>>;
    if constexpr (std::is_same_v<P, const char*>) {
        return std::get<I>(a) ? std::strlen(std::get<I>(a)) + 1 : kAsIs;
    } else if constexpr (!holdable<P>() || std::is_void_v<std::remove_pointer_t<P>> || read_only<P>()) {
        return kAsIs;
    } else if constexpr (std::is_same_v<P, char*>) {
        if constexpr (I + 1 < sizeof...(A)) {
            using L = std::tuple_element_t<I + 1, std::tuple<A...>>;
            if constexpr (std::is_integral_v<L>) return count_of(std::get<I + 1>(a));
            else static_assert(sizeof(L) == 0, "a char buffer without its length after it: specialise DriverArgs");
        } else {
            static_assert(sizeof(P) == 0, "a char buffer without its length after it: specialise DriverArgs");
        }
    } else {
        return 1;
    }
}

// Per-symbol extents, specialised next to a symbol table for arrays (ArrayArgs) and for pointers
// to pass unchanged (AsIsArgs).
template <auto M>
struct DriverArgs {
    template <std::size_t I, class... A>
    static std::size_t extent(const std::tuple<A...>& a) {
        return default_extent<I>(a);
    }
};

// Arguments `Arrays...` hold as many elements as argument `Count` says (by value or through a
// pointer; a pointer's count is read before the call: what the caller's arrays can take).
template <std::size_t Count, std::size_t... Arrays>
struct ArrayArgs {
    template <std::size_t I, class... A>
    static std::size_t extent(const std::tuple<A...>& a) {
        if constexpr (((I == Arrays) || ...)) return count_of(std::get<Count>(a));
        else return default_extent<I>(a);
    }
};

// Arguments `Unheld...` are passed unchanged: arrays whose length the call does not say (a
// kernel's parameters, read during the launch), structs whose size depends on the library's version.
template <std::size_t... Unheld>
struct AsIsArgs {
    template <std::size_t I, class... A>
    static std::size_t extent(const std::tuple<A...>& a) {
        if constexpr (((I == Unheld) || ...)) return kAsIs;
        else return default_extent<I>(a);
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
        std::tuple<A...> given;   // the caller's arguments
        std::tuple<A...> passed;  // what the library gets: the job's storage instead of the caller's
        std::tuple<Held<A>...> held;
        std::array<std::size_t, sizeof...(A)> extent{};
        R result{};
        Job(R (*f)(A...), A... a) : fn(f), given(a...), passed(a...) { hold(std::index_sequence_for<A...>{}); }
        void run() override { result = std::apply(fn, passed); }
        // Only after the call returned in time: then the worker is done with the storage.
        void copy_out() { copy_out(std::index_sequence_for<A...>{}); }

    private:
        template <std::size_t... I>
        void hold(std::index_sequence<I...>) {
            (hold_one<I>(), ...);
        }
        template <std::size_t I>
        void hold_one() {
            using P = std::tuple_element_t<I, std::tuple<A...>>;
            if constexpr (holdable<P>()) {
                const std::size_t n = DriverArgs<M>::template extent<I>(given);
                P p = std::get<I>(given);
                extent[I] = (p && n != kAsIs) ? n : kAsIs;
                if (extent[I] == kAsIs) return;
                auto& v = std::get<I>(held);
                v = std::make_unique<HeldElement<P>[]>(n > 0 ? n : 1);
                if (n > 0) std::memcpy(v.get(), static_cast<const void*>(p), n * sizeof(HeldElement<P>));
                std::get<I>(passed) = static_cast<P>(static_cast<void*>(v.get()));
            }
        }
        template <std::size_t... I>
        void copy_out(std::index_sequence<I...>) {
            (copy_out_one<I>(), ...);
        }
        template <std::size_t I>
        void copy_out_one() {
            using P = std::tuple_element_t<I, std::tuple<A...>>;
            if constexpr (holdable<P>() && !read_only<P>()) {
                if (extent[I] == kAsIs || extent[I] == 0) return;
                std::memcpy(static_cast<void*>(std::get<I>(given)), std::get<I>(held).get(),
                            extent[I] * sizeof(HeldElement<P>));
            }
        }
    };

    static R call(A... a) {
        int gpu = DriverHooks<M>::gpu(*lib, a...);
        auto job = std::make_shared<Job>(real, a...);
        if (!run_driver_call(*lib, name, gpu, job)) return NoAnswer<R>::value();
        job->copy_out();
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
