#include "gpu/bindings/driver_deadline.hpp"

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include "core/interrupt.hpp"
#include "gpu/bindings/driver_exit.hpp"

namespace gpuvet {

namespace {

using Clock = std::chrono::steady_clock;

// How long a call may go on after Ctrl-C/SIGTERM before it is abandoned: the run must end
// within seconds, and a healthy driver answers a query in milliseconds.
constexpr double kStopGraceS = 1.0;
// How often a waiting caller looks at the stop flag.
constexpr auto kStopPoll = std::chrono::milliseconds(100);

std::atomic<double> g_timeout_override_s{0};
std::atomic<const char*> g_cut_when{nullptr};  // cut_driver_waits()

// The wedged state of every library: what stopped answering, in the words of the first call.
struct LibState {
    std::string reason;                  // the whole library; empty while it answers
    std::map<int, std::string> gpus;     // GPU index -> reason
    std::map<const void*, int> handles;  // handle -> GPU index
};
std::mutex g_mu;
std::map<const DriverLib*, LibState> g_state;
std::atomic<bool> g_any_wedged{false};
std::atomic<bool> g_exit_without_teardown{false};

thread_local int t_gpu = -1;
thread_local std::string t_last_no_answer;

const char* kWedgedAdvice = "check `dmesg` for Xid and NVRM messages, a reset or reboot is needed";
// AMD's kernel driver logs a hang as amdgpu ring timeouts and GPU resets.
const char* kWedgedAdviceAmd =
    "check `dmesg` for amdgpu errors (ring timeouts, GPU resets), a reset or reboot is needed";

const char* wedged_advice(std::string_view library) {
    return library == "AMD SMI" || library == "ROCm SMI" || library == "HIP" || library == "RCCL" ||
                   library == "hipBLASLt"
               ? kWedgedAdviceAmd
               : kWedgedAdvice;
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, s == static_cast<double>(static_cast<long long>(s)) ? "%.0f" : "%.1f", s);
    return buf;
}

// The management libraries: they only answer queries, and their device index is gpuvet's GPU index.
bool is_management(const DriverLib& lib) {
    std::string_view n = lib.name();
    return n == "NVML" || n == "AMD SMI" || n == "ROCm SMI";
}

std::string gpu_label(const DriverLib& lib, int gpu) {
    if (gpu < 0) return "";
    return (is_management(lib) ? "GPU " : std::string(lib.name()) + " device ") + std::to_string(gpu) + ": ";
}

// Calls that wait for work on the GPU (kernels, copies, synchronisation, module loads, collective
// set-up) rather than answer from the driver's state: they get kDriverWorkFactor times the budget.
bool is_query(const DriverLib& lib, std::string_view call) {
    if (is_management(lib)) return true;
    if (call.starts_with("cuDevice")) return !call.starts_with("cuDevicePrimaryCtxRelease");
    static constexpr std::string_view kQueries[] = {
        "cuInit",
        "cuDriverGetVersion",
        "cuGetErrorName",
        "cuGetErrorString",
        "cuCtxSetCurrent",
        "cuMemGetInfo_v2",
        "cublasLtGetVersion",
        "cublasLtGetCudartVersion",
        "ncclGetVersion",
        "hipblasLtGetVersion",
        "ncclGetErrorString",
        "ncclGetLastError",
        "ncclGetUniqueId",
        "hipInit",
        "hipGetDeviceCount",
        "hipSetDevice",
        "hipDriverGetVersion",
        "hipRuntimeGetVersion",
        "hipDeviceGet",
        "hipDeviceGetName",
        "hipDeviceGetPCIBusId",
        "hipDeviceTotalMem",
        "hipDeviceGetAttribute",
        "hipMemGetInfo",
        "hipGetErrorName",
        "hipGetErrorString",
    };
    for (auto q : kQueries)
        if (call == q) return true;
    return false;
}

double parse_timeout(const char* text, bool& ok) {
    ok = false;
    if (!text || !*text) return 0;
    char* end = nullptr;
    double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(v > 0) || v > 86400) return 0;
    ok = true;
    return v;
}

// The calling thread's worker: runs one call at a time. Shared with the worker thread, so an
// abandoned worker that comes back later finds its state still alive.
struct Worker {
    std::mutex mu;
    std::condition_variable cv;
    std::shared_ptr<DriverJob> job;
    bool done = false;
    bool quit = false;
};

void worker_loop(std::shared_ptr<Worker> w) {
    // Signals go to gpuvet's own threads; a driver call is never interrupted by one (EINTR).
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::unique_lock lk(w->mu);
    for (;;) {
        w->cv.wait(lk, [&] { return w->job || w->quit; });
        if (!w->job) return;
        auto job = w->job;
        lk.unlock();
        job->run();
        lk.lock();
        w->job.reset();
        w->done = true;
        w->cv.notify_all();
    }
}

struct WorkerSlot;
// Set when this thread's slot is destroyed (thread exit; for the main thread, before the static
// destructors, which still call the driver: nvmlShutdown, context releases).
thread_local bool t_slot_gone = false;

// One per calling thread. A healthy worker is joined when its thread ends; an abandoned one was
// detached and is never waited for.
struct WorkerSlot {
    std::shared_ptr<Worker> w;
    std::thread th;
    Worker& get() {
        if (!w) {
            w = std::make_shared<Worker>();
            th = std::thread(worker_loop, w);
        }
        return *w;
    }
    void abandon() {
        th.detach();
        w.reset();
    }
    ~WorkerSlot();
};
thread_local WorkerSlot t_worker;

WorkerSlot::~WorkerSlot() {
    if (this == &t_worker) t_slot_gone = true;
    if (!w) return;
    {
        std::lock_guard lk(w->mu);
        w->quit = true;
    }
    w->cv.notify_all();
    th.join();
}

// The reason a call is not made (its library or GPU stopped answering); empty: go ahead.
std::string refusal(const DriverLib& lib, int gpu, const char* call) {
    if (!g_any_wedged.load(std::memory_order_relaxed)) return {};
    std::lock_guard lk(g_mu);
    auto it = g_state.find(&lib);
    if (it == g_state.end()) return {};
    const LibState& s = it->second;
    std::string why = s.reason;
    if (why.empty() && gpu >= 0)
        if (auto g = s.gpus.find(gpu); g != s.gpus.end()) why = g->second;
    if (why.empty()) return {};
    return std::string(call) + " not called: the driver stopped answering (" + why + ")";
}

void mark_wedged(const DriverLib& lib, int gpu, const std::string& text) {
    std::lock_guard lk(g_mu);
    LibState& s = g_state[&lib];
    if (gpu >= 0) {
        s.gpus.emplace(gpu, text);
        // A second GPU stopping too: the driver as a whole is stuck (its lock is held).
        if (s.gpus.size() >= 2 && s.reason.empty()) s.reason = text;
    } else if (s.reason.empty()) {
        s.reason = text;
    }
    g_any_wedged.store(true);
}

}  // namespace

void set_driver_timeout_s(double s) { g_timeout_override_s.store(s); }

void cut_driver_waits(const char* when) { g_cut_when.store(when); }

double driver_timeout_s() {
    if (double o = g_timeout_override_s.load(); o > 0) return o;
    static const double from_env = [] {
        bool ok = false;
        double v = parse_timeout(std::getenv(kEnvDriverTimeout), ok);
        return ok ? v : kDefaultDriverTimeoutS;
    }();
    return from_env;
}

std::string driver_timeout_env_problem() {
    const char* v = std::getenv(kEnvDriverTimeout);
    if (!v) return {};
    bool ok = false;
    parse_timeout(v, ok);
    if (ok) return {};
    return std::string(kEnvDriverTimeout) + "='" + v + "' is not a number of seconds above 0 and at most 86400";
}

DriverLib& driver_lib(const char* name, GpuFrom from) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<DriverLib>> libs;
    std::lock_guard lk(mu);
    auto& p = libs[name];
    if (!p) p = std::make_unique<DriverLib>(name, from);
    return *p;
}

DriverLib& nvml_driver_lib() { return driver_lib("NVML", GpuFrom::Handle); }
DriverLib& cuda_driver_lib() { return driver_lib("CUDA", GpuFrom::CurrentCtx); }
DriverLib& cublaslt_driver_lib() { return driver_lib("cuBLASLt", GpuFrom::CurrentCtx); }
DriverLib& nccl_driver_lib() { return driver_lib("NCCL", GpuFrom::Handle); }

void record_gpu_handle(DriverLib& lib, const void* handle, int gpu) {
    if (!handle || gpu < 0) return;
    std::lock_guard lk(g_mu);
    g_state[&lib].handles[handle] = gpu;
}

int gpu_of_handle(const DriverLib& lib, const void* handle) {
    if (!handle) return -1;
    std::lock_guard lk(g_mu);
    auto it = g_state.find(&lib);
    if (it == g_state.end()) return -1;
    auto h = it->second.handles.find(handle);
    return h == it->second.handles.end() ? -1 : h->second;
}

void set_thread_gpu(int gpu) { t_gpu = gpu; }
int thread_gpu() { return t_gpu; }

bool any_driver_wedged() { return g_any_wedged.load(); }

std::string handle_no_answer(const DriverLib& lib, const void* handle) {
    if (!g_any_wedged.load(std::memory_order_relaxed)) return {};
    std::lock_guard lk(g_mu);
    auto it = g_state.find(&lib);
    if (it == g_state.end()) return {};
    const LibState& s = it->second;
    if (!s.reason.empty()) return s.reason;
    auto h = s.handles.find(handle);
    if (h == s.handles.end()) return {};
    auto g = s.gpus.find(h->second);
    return g == s.gpus.end() ? std::string() : g->second;
}

void request_exit_without_teardown() { g_exit_without_teardown.store(true); }
bool exit_without_teardown() { return g_exit_without_teardown.load() || g_any_wedged.load(); }

std::string driver_wedge_summary() {
    std::lock_guard lk(g_mu);
    std::string out;
    std::set<std::string> seen;
    auto add = [&](const std::string& line) {
        if (seen.insert(line).second) out += (out.empty() ? "" : "\n") + line;
    };
    for (const auto& [lib, s] : g_state) {
        if (!s.reason.empty()) add(s.reason);
        for (const auto& [gpu, why] : s.gpus) add(why);
    }
    return out;
}

std::string last_driver_no_answer() { return t_last_no_answer; }

const char* driver_no_answer_advice(std::string_view library) { return wedged_advice(library); }

bool run_driver_call(DriverLib& lib, const char* call, int gpu, const std::shared_ptr<DriverJob>& job) {
    if (std::string why = refusal(lib, gpu, call); !why.empty()) {
        t_last_no_answer = std::move(why);
        return false;
    }
    const double budget_s = driver_timeout_s() * (is_query(lib, call) ? 1 : kDriverWorkFactor);
    const auto start = Clock::now();
    // After this thread's slot is gone, a call gets a worker of its own for just that call.
    WorkerSlot once;
    WorkerSlot& slot = t_slot_gone ? once : t_worker;
    Worker& w = slot.get();
    std::unique_lock lk(w.mu);
    w.job = job;
    w.done = false;
    w.cv.notify_all();
    std::optional<Clock::time_point> stop_seen;
    bool stopped = false;
    while (!w.done) {
        w.cv.wait_for(lk, kStopPoll, [&] { return w.done; });
        if (w.done) break;
        auto now = Clock::now();
        if (!stop_seen && (stop_flag().load() || g_cut_when.load())) stop_seen = now;
        if (std::chrono::duration<double>(now - start).count() >= budget_s) break;
        if (stop_seen && std::chrono::duration<double>(now - *stop_seen).count() >= kStopGraceS) {
            stopped = true;
            break;
        }
    }
    if (w.done) return true;
    lk.unlock();
    slot.abandon();
    std::string text = gpu_label(lib, gpu) + call;
    if (stopped) {
        double waited = std::chrono::duration<double>(Clock::now() - start).count();
        const char* cut = g_cut_when.load();
        text += " had not returned after " + seconds_text(waited) + " s when " +
                (stop_flag().load() || !cut ? "gpuvet was stopped" : cut) + ": the driver may be wedged; " +
                wedged_advice(lib.name());
    } else {
        text +=
            " did not return in " + seconds_text(budget_s) + " s: the driver is wedged; " + wedged_advice(lib.name());
    }
    mark_wedged(lib, gpu, text);
    t_last_no_answer = std::move(text);
    return false;
}

}  // namespace gpuvet
