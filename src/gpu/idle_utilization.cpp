#include "gpu/idle_utilization.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

namespace gpuvet {

namespace {

std::string pct(double v) { return std::to_string(int(std::lround(v))) + "%"; }

}  // namespace

IdleUtilizationJudgement judge_idle_utilization(const std::vector<double>& samples_percent, int visible_processes) {
    IdleUtilizationJudgement j;
    if (samples_percent.empty()) return j;
    j.mean_percent =
        std::accumulate(samples_percent.begin(), samples_percent.end(), 0.0) / double(samples_percent.size());
    j.max_percent = *std::max_element(samples_percent.begin(), samples_percent.end());
    if (visible_processes > 0) return j;
    // Strictly above, as the report's references print them ("warn > 10 · fail > 50").
    if (*j.mean_percent > kIdleBusyMeanFailPercent) j.verdict = Verdict::Fail;
    else if (*j.mean_percent > kIdleBusyMeanWarnPercent || *j.max_percent > kIdleBusyMaxWarnPercent)
        j.verdict = Verdict::Warn;
    else return j;
    j.finding = "the GPU is busy (mean " + pct(*j.mean_percent) + ", max " + pct(*j.max_percent) +
                ") but shows no process: another tenant, a process in another container, or a stuck job";
    return j;
}

std::map<int, IdleUtilization> sample_idle_utilization(const DeviceBackend* backend, const std::vector<int>& gpus,
                                                       int count, std::chrono::milliseconds period,
                                                       const std::atomic<bool>* stop) {
    using Clock = std::chrono::steady_clock;
    std::map<int, IdleUtilization> out;
    std::map<int, std::unique_ptr<GpuDevice>> devs;
    for (int i : gpus) {
        IdleUtilization& u = out[i];
        if (!backend || !backend->usable()) u.absent_reason = "NVML is not usable";
        else if (auto d = backend->open(i); !d->unopened_reason().empty()) u.absent_reason = d->unopened_reason();
        else devs[i] = std::move(d);
    }
    if (devs.empty()) return out;
    auto stopped = [&] { return stop && stop->load(); };
    auto next = Clock::now();
    for (int k = 0; k < count && !stopped(); ++k) {
        if (k > 0) {
            next += period;
            while (!stopped() && Clock::now() < next)  // short slices: Ctrl-C is prompt
                std::this_thread::sleep_for(
                    std::min<Clock::duration>(std::chrono::milliseconds(20), next - Clock::now()));
            if (stopped()) break;
        }
        for (auto& [i, d] : devs) {
            if (!d) continue;
            Fact<int> busy = d->sample(kReadUtilization).utilization_gpu_percent;
            IdleUtilization& u = out[i];
            if (busy) {
                u.samples_percent.push_back(double(*busy));
                continue;
            }
            u.absent_reason = "utilization: " + busy.absent_reason;
            // Unsupported, missing or lost does not change within a second: stop asking this GPU.
            d.reset();
        }
    }
    for (auto& [i, u] : out)
        if (!u.samples_percent.empty()) u.absent_reason.clear();
        else if (u.absent_reason.empty()) u.absent_reason = "interrupted before the first sample";
    return out;
}

}  // namespace gpuvet
