#include "gpu/idle_utilization.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

namespace {

std::string pct(double v) { return std::to_string(int(std::lround(v))) + "%"; }

}  // namespace

IdleUtilizationJudgement judge_idle_utilization(const std::vector<double>& samples_pct, int visible_processes) {
    IdleUtilizationJudgement j;
    if (samples_pct.empty()) return j;
    j.mean_pct = std::accumulate(samples_pct.begin(), samples_pct.end(), 0.0) / double(samples_pct.size());
    j.max_pct = *std::max_element(samples_pct.begin(), samples_pct.end());
    if (visible_processes > 0) return j;
    // Strictly above, as the report's references print them ("warn > 10 · fail > 50").
    if (*j.mean_pct > kIdleBusyMeanFailPct) j.verdict = Verdict::Fail;
    else if (*j.mean_pct > kIdleBusyMeanWarnPct || *j.max_pct > kIdleBusyMaxWarnPct) j.verdict = Verdict::Warn;
    else return j;
    j.finding = "the GPU is busy (mean " + pct(*j.mean_pct) + ", max " + pct(*j.max_pct) +
                ") but shows no process: another tenant, a process in another container, or a stuck job";
    return j;
}

std::map<int, IdleUtilization> sample_idle_utilization(const NvmlApi* api, const std::vector<int>& gpus, int count,
                                                       std::chrono::milliseconds period,
                                                       const std::atomic<bool>* stop) {
    using Clock = std::chrono::steady_clock;
    std::map<int, IdleUtilization> out;
    std::map<int, nvml::nvmlDevice_t> devs;
    for (int i : gpus) {
        IdleUtilization& u = out[i];
        if (!api) u.absent_reason = "NVML is not usable";
        else if (!api->nvmlDeviceGetUtilizationRates) u.absent_reason = "the driver's NVML lacks nvmlDeviceGetUtilizationRates";
        else if (nvml::nvmlDevice_t d = nullptr; int rc = api->nvmlDeviceGetHandleByIndex(unsigned(i), &d))
            u.absent_reason = "nvmlDeviceGetHandleByIndex failed: " + nvml_absent_reason(rc);
        else devs[i] = d;
    }
    if (devs.empty()) return out;
    auto stopped = [&] { return stop && stop->load(); };
    auto next = Clock::now();
    for (int k = 0; k < count && !stopped(); ++k) {
        if (k > 0) {
            next += period;
            while (!stopped() && Clock::now() < next)  // short slices: Ctrl-C is prompt
                std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(20), next - Clock::now()));
            if (stopped()) break;
        }
        for (auto& [i, d] : devs) {
            if (!d) continue;
            nvml::nvmlUtilization_t ut{};
            int rc = api->nvmlDeviceGetUtilizationRates(d, &ut);
            IdleUtilization& u = out[i];
            if (rc == nvml::NVML_SUCCESS) {
                u.samples_pct.push_back(double(ut.gpu));
                continue;
            }
            u.absent_reason = "nvmlDeviceGetUtilizationRates: " + nvml_absent_reason(rc);
            // Unsupported or lost does not change within a second: stop asking this GPU.
            if (rc == nvml::NVML_ERROR_NOT_SUPPORTED || rc == nvml::NVML_ERROR_GPU_IS_LOST) d = nullptr;
        }
    }
    for (auto& [i, u] : out)
        if (!u.samples_pct.empty()) u.absent_reason.clear();
        else if (u.absent_reason.empty()) u.absent_reason = "interrupted before the first sample";
    return out;
}

}  // namespace gpuvet
