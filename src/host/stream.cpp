#include "host/stream.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>

namespace gpuvet {

std::optional<std::size_t> stream_array_bytes(std::optional<std::size_t> llc_bytes,
                                              std::optional<std::size_t> available_bytes, std::string& why) {
    constexpr std::size_t kMin = std::size_t(256) << 20;
    std::size_t want = std::max(kMin, llc_bytes ? 4 * *llc_bytes : kMin);
    if (available_bytes) {
        std::size_t cap = *available_bytes / 6;  // three arrays in half of what is available
        if (cap < kMin) {
            why = "too little free memory for three 256 MiB arrays (" + std::to_string(*available_bytes >> 20) +
                  " MiB available)";
            return std::nullopt;
        }
        want = std::min(want, cap);
    }
    return want;
}

std::vector<int> spread_over_nodes(const std::vector<std::vector<int>>& node_cpus, const std::vector<int>& allowed,
                                   int max_threads) {
    std::vector<std::vector<int>> per;
    for (auto& n : node_cpus) {
        std::vector<int> ok;
        for (int c : n)
            if (std::find(allowed.begin(), allowed.end(), c) != allowed.end()) ok.push_back(c);
        if (!ok.empty()) per.push_back(ok);
    }
    if (per.empty()) per.push_back(allowed);  // no NUMA information: one node
    std::vector<int> out;
    for (std::size_t i = 0; (int)out.size() < max_threads; ++i) {
        bool any = false;
        for (auto& n : per)
            if (i < n.size() && (int)out.size() < max_threads) {
                out.push_back(n[i]);
                any = true;
            }
        if (!any) break;
    }
    return out;
}

namespace {

struct FreeDeleter {
    void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double, FreeDeleter>;

// Elements between two looks at the stop flag (8 MiB of doubles): cheap against the pass, short
// enough to stop within a second.
constexpr std::size_t kStopBlock = std::size_t(1) << 20;

// What the timing thread and the workers share. The barrier's two waits per phase (start, done)
// order every access: the expected values are written only while the workers wait.
struct StreamShared {
    StreamShared(const StreamPlan& p, const std::atomic<bool>* st, std::size_t elements, int threads, double* a_,
                 double* b_, double* c_)
        : plan(p), stop(st), n(elements), T(threads), a(a_), b(b_), c(c_), sync(threads + 1) {}
    const StreamPlan& plan;
    const std::atomic<bool>* stop;
    const std::size_t n;
    const int T;
    double *const a, *const b, *const c;
    const double s = 3.0;
    std::barrier<> sync;
    std::atomic<int> phase{0};  // kernel 0-3, 4 = verify, -1 = quit
    std::atomic<bool> bad{false};
    // Expected values, from the scalar recurrence (STREAM's checkSTREAMresults).
    double ea = 1, eb = 2, ec = 0;
    bool stopped() const { return stop && stop->load(std::memory_order_relaxed); }
};

void pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// The arrays are walked in blocks with a look at the stop between them: a pass over large
// arrays takes seconds on a busy machine. A pass a stop cut short is never reported.
template <class Body>
void in_blocks(const StreamShared& sh, std::size_t lo, std::size_t hi, Body&& body) {
    for (std::size_t x = lo; x < hi; x += kStopBlock) {
        if (sh.stopped()) return;
        body(x, std::min(hi, x + kStopBlock));
    }
}

// One kernel (0 copy, 1 scale, 2 add, 3 triad) over elements [lo, hi).
void run_kernel(StreamShared& sh, int k, std::size_t lo, std::size_t hi) {
    double *a = sh.a, *b = sh.b, *c = sh.c;
    const double s = sh.s;
    switch (k) {
        case 0:
            in_blocks(sh, lo, hi, [&](std::size_t x, std::size_t y) {
                for (std::size_t i = x; i < y; ++i) c[i] = a[i];
            });
            break;
        case 1:
            in_blocks(sh, lo, hi, [&](std::size_t x, std::size_t y) {
                for (std::size_t i = x; i < y; ++i) b[i] = s * c[i];
            });
            break;
        case 2:
            in_blocks(sh, lo, hi, [&](std::size_t x, std::size_t y) {
                for (std::size_t i = x; i < y; ++i) c[i] = a[i] + b[i];
            });
            break;
        case 3:
            in_blocks(sh, lo, hi, [&](std::size_t x, std::size_t y) {
                for (std::size_t i = x; i < y; ++i) a[i] = b[i] + s * c[i];
            });
            break;
    }
}

// Flags `bad` when an element of [lo, hi) is off the expected values beyond rounding.
void verify_slice(StreamShared& sh, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i)
        if (std::fabs(sh.a[i] - sh.ea) > 1e-13 * sh.ea || std::fabs(sh.b[i] - sh.eb) > 1e-13 * sh.eb ||
            std::fabs(sh.c[i] - sh.ec) > 1e-13 * sh.ec) {
            sh.bad = true;
            break;
        }
}

// Thread t: pinned, first-touches its slice (placing those pages on its node), then runs each
// phase the timing thread announces until told to quit.
void stream_worker(StreamShared& sh, int t) {
    if (!sh.plan.thread_cpus.empty()) pin_to_cpu(sh.plan.thread_cpus[t]);
    const std::size_t lo = sh.n * t / sh.T, hi = sh.n * (t + 1) / sh.T;
    double *a = sh.a, *b = sh.b, *c = sh.c;
    in_blocks(sh, lo, hi, [&](std::size_t x, std::size_t y) {
        for (std::size_t i = x; i < y; ++i) {
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.0;
        }
    });
    for (;;) {
        sh.sync.arrive_and_wait();  // start
        const int k = sh.phase.load();
        if (k < 0) break;
        if (k < 4) run_kernel(sh, k, lo, hi);
        else verify_slice(sh, lo, hi);
        sh.sync.arrive_and_wait();  // done
    }
}

// Best time of each kernel over the repeats, and how many repeats completed.
struct KernelTimes {
    double best_s[4] = {1e30, 1e30, 1e30, 1e30};
    int done = 0;
};

// Runs the phases from the timing side: each kernel between the two waits, then the
// verification pass, then the quit that releases the workers.
KernelTimes time_kernels(StreamShared& sh) {
    KernelTimes kt;
    using clk = std::chrono::steady_clock;
    const int repeats = sh.plan.repeats;
    for (int rep = 0; rep < repeats; ++rep) {
        if (sh.stop && sh.stop->load()) break;
        for (int k = 0; k < 4; ++k) {
            sh.phase = k;
            auto t0 = clk::now();
            sh.sync.arrive_and_wait();
            sh.sync.arrive_and_wait();
            double dt = std::chrono::duration<double>(clk::now() - t0).count();
            // STREAM discards the first iteration (page faults, frequency ramp).
            if (rep > 0 || repeats == 1) kt.best_s[k] = std::min(kt.best_s[k], dt);
        }
        ++kt.done;
        sh.ec = sh.ea;
        sh.eb = sh.s * sh.ec;
        sh.ec = sh.ea + sh.eb;
        sh.ea = sh.eb + sh.s * sh.ec;
    }
    if (!sh.stopped()) {  // verify: one more pass, not worth waiting for once stopped
        sh.phase = 4;
        sh.sync.arrive_and_wait();
        sh.sync.arrive_and_wait();
    }
    sh.phase = -1;
    sh.sync.arrive_and_wait();
    return kt;
}

// Rates from the best times; bytes each kernel moves per element: copy/scale read one array and
// write one, add/triad 2+1.
void fill_rates(StreamResult& res, const KernelTimes& kt, std::size_t n) {
    const double bytes[4] = {16.0 * n, 16.0 * n, 24.0 * n, 24.0 * n};
    res.copy_gbps = bytes[0] / kt.best_s[0] / 1e9;
    res.scale_gbps = bytes[1] / kt.best_s[1] / 1e9;
    res.add_gbps = bytes[2] / kt.best_s[2] / 1e9;
    res.triad_gbps = bytes[3] / kt.best_s[3] / 1e9;
}

}  // namespace

StreamResult run_stream(const StreamPlan& plan, const std::atomic<bool>* stop) {
    StreamResult res;
    const std::size_t n = plan.elements;
    const int T = std::max<int>(1, (int)plan.thread_cpus.size());
    res.threads = T;
    res.array_bytes = n * sizeof(double);
    const std::size_t alloc = (n * sizeof(double) + 4095) / 4096 * 4096;
    // Allocated, not touched: each thread's first write places its pages on its node.
    Array A((double*)std::aligned_alloc(4096, alloc)), B((double*)std::aligned_alloc(4096, alloc)),
        C((double*)std::aligned_alloc(4096, alloc));
    if (!A || !B || !C) {
        res.verify_error = "could not allocate the arrays";
        return res;
    }
    StreamShared sh(plan, stop, n, T, A.get(), B.get(), C.get());
    std::vector<std::thread> threads;
    for (int t = 0; t < T; ++t) threads.emplace_back(stream_worker, std::ref(sh), t);
    const KernelTimes kt = time_kernels(sh);
    for (auto& th : threads) th.join();
    if (sh.stopped()) {
        res.verify_error = "interrupted";
        return res;
    }
    if (kt.done < 2 && plan.repeats > 1) {
        res.verify_error = "interrupted before a timed run";
        return res;
    }
    fill_rates(res, kt, n);
    res.verified = !sh.bad;
    if (sh.bad) res.verify_error = "array contents differ from the expected values after the runs";
    return res;
}

}  // namespace gpuvet
