#include "host/core_speed.hpp"
#include "core/stats.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace gpuvet {

namespace {

// One "op" = one integer multiply-add step and one dependent FP multiply-add. Dependent chains
// measure core speed (clock x IPC), not memory.
double spin(double seconds) {
    using clk = std::chrono::steady_clock;
    auto t0 = clk::now();
    std::uint64_t x = 88172645463325252ull, ops = 0;
    double f = 1.0;
    double elapsed = 0;
    do {
        for (int i = 0; i < 4096; ++i) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            f = f * 0.999999 + 1e-9 * double(x >> 40);
        }
        ops += 4096;
        elapsed = std::chrono::duration<double>(clk::now() - t0).count();
    } while (elapsed < seconds);
    // Keep the result alive so the compiler cannot drop the loop.
    volatile double sink = f + double(x & 1);
    (void)sink;
    return double(ops) / elapsed;
}

}  // namespace

std::vector<CoreSpeed> measure_core_speeds(const std::vector<int>& cpus, double slice_s,
                                           const std::atomic<bool>* stop) {
    std::vector<CoreSpeed> out;
    // A fresh thread per CPU: pinning it leaves the caller's affinity untouched.
    for (int cpu : cpus) {
        if (stop && stop->load()) break;
        std::optional<double> r;
        std::thread t([&] {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return;
            spin(std::min(0.02, slice_s / 5));  // let the core leave idle frequency first
            r = spin(slice_s);
        });
        t.join();
        if (r) out.push_back({cpu, *r});
    }
    return out;
}

std::optional<SpeedSpread> spread_of(const std::vector<CoreSpeed>& v, double straggler_below) {
    if (v.empty()) return std::nullopt;
    std::vector<double> s;
    for (auto& c : v) s.push_back(c.ops_per_s);
    SpeedSpread r;
    r.min = *std::min_element(s.begin(), s.end());
    r.max = *std::max_element(s.begin(), s.end());
    r.median = median(s).value();
    for (auto& c : v)
        if (c.ops_per_s < r.median * (1 - straggler_below)) r.stragglers.push_back(c);
    return r;
}

}  // namespace gpuvet
