#include "host/stream.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
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

}  // namespace

// Elements between two looks at the stop flag (8 MiB of doubles): cheap against the pass, short
// enough to stop within a second.
constexpr std::size_t kStopBlock = std::size_t(1) << 20;

StreamResult run_stream(const StreamPlan& plan, const std::atomic<bool>* stop) {
    StreamResult res;
    const std::size_t n = plan.elements;
    const int T = std::max<int>(1, (int)plan.thread_cpus.size());
    res.threads = T;
    res.array_bytes = n * sizeof(double);
    const std::size_t alloc = (n * sizeof(double) + 4095) / 4096 * 4096;
    // Allocated, not touched: each thread's first write places its pages on its node.
    std::unique_ptr<double, FreeDeleter> A((double*)std::aligned_alloc(4096, alloc)),
        B((double*)std::aligned_alloc(4096, alloc)), C((double*)std::aligned_alloc(4096, alloc));
    if (!A || !B || !C) {
        res.verify_error = "could not allocate the arrays";
        return res;
    }
    double *a = A.get(), *b = B.get(), *c = C.get();
    const double s = 3.0;
    std::barrier sync(T + 1);
    std::atomic<int> phase{0};  // kernel 0-3, 4 = verify, -1 = quit
    std::atomic<bool> bad{false};
    auto stopped = [stop] { return stop && stop->load(std::memory_order_relaxed); };
    // Expected values, from the scalar recurrence (STREAM's checkSTREAMresults).
    double ea = 1, eb = 2, ec = 0;

    auto worker = [&](int t) {
        if (!plan.thread_cpus.empty()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(plan.thread_cpus[t], &set);
            pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        }
        const std::size_t lo = n * t / T, hi = n * (t + 1) / T;
        // The arrays are walked in blocks with a look at the stop between them: a pass over large
        // arrays takes seconds on a busy machine. A pass a stop cut short is never reported.
        auto blocks = [&](auto&& body) {
            for (std::size_t x = lo; x < hi; x += kStopBlock) {
                if (stopped()) return;
                body(x, std::min(hi, x + kStopBlock));
            }
        };
        blocks([&](std::size_t x, std::size_t y) {
            for (std::size_t i = x; i < y; ++i) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.0; }
        });
        for (;;) {
            sync.arrive_and_wait();  // start
            const int k = phase.load();
            if (k < 0) break;
            switch (k) {
                case 0: blocks([&](std::size_t x, std::size_t y) { for (std::size_t i = x; i < y; ++i) c[i] = a[i]; }); break;
                case 1: blocks([&](std::size_t x, std::size_t y) { for (std::size_t i = x; i < y; ++i) b[i] = s * c[i]; }); break;
                case 2: blocks([&](std::size_t x, std::size_t y) { for (std::size_t i = x; i < y; ++i) c[i] = a[i] + b[i]; }); break;
                case 3: blocks([&](std::size_t x, std::size_t y) { for (std::size_t i = x; i < y; ++i) a[i] = b[i] + s * c[i]; }); break;
                default:
                    for (std::size_t i = lo; i < hi; ++i)
                        if (std::fabs(a[i] - ea) > 1e-13 * ea || std::fabs(b[i] - eb) > 1e-13 * eb ||
                            std::fabs(c[i] - ec) > 1e-13 * ec) {
                            bad = true;
                            break;
                        }
            }
            sync.arrive_and_wait();  // done
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < T; ++t) threads.emplace_back(worker, t);

    // Bytes each kernel moves per element: copy/scale read one array and write one, add/triad 2+1.
    const double bytes[4] = {16.0 * n, 16.0 * n, 24.0 * n, 24.0 * n};
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    using clk = std::chrono::steady_clock;
    int done = 0;
    for (int rep = 0; rep < plan.repeats; ++rep) {
        if (stop && stop->load()) break;
        for (int k = 0; k < 4; ++k) {
            phase = k;
            auto t0 = clk::now();
            sync.arrive_and_wait();
            sync.arrive_and_wait();
            double dt = std::chrono::duration<double>(clk::now() - t0).count();
            // STREAM discards the first iteration (page faults, frequency ramp).
            if (rep > 0 || plan.repeats == 1) best[k] = std::min(best[k], dt);
        }
        ++done;
        ec = ea; eb = s * ec; ec = ea + eb; ea = eb + s * ec;
    }
    if (!stopped()) {  // verify: one more pass, not worth waiting for once stopped
        phase = 4;
        sync.arrive_and_wait();
        sync.arrive_and_wait();
    }
    phase = -1;
    sync.arrive_and_wait();
    for (auto& th : threads) th.join();
    if (stopped()) {
        res.verify_error = "interrupted";
        return res;
    }

    if (done < 2 && plan.repeats > 1) {
        res.verify_error = "interrupted before a timed run";
        return res;
    }
    res.copy_gbps = bytes[0] / best[0] / 1e9;
    res.scale_gbps = bytes[1] / best[1] / 1e9;
    res.add_gbps = bytes[2] / best[2] / 1e9;
    res.triad_gbps = bytes[3] / best[3] / 1e9;
    res.verified = !bad;
    if (bad) res.verify_error = "array contents differ from the expected values after the runs";
    return res;
}

}  // namespace gpuvet
