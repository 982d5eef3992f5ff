// Running the checks drawn from the GPU inventory as the runner does, and reading what they said.
#pragma once
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks/gpu_health.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_nvlink.hpp"
#include "checks/gpu_pcie_link.hpp"
#include "checks/gpu_tenancy.hpp"
#include "core/runner.hpp"

namespace gpuvet::testing {

// Runs one check as the runner does (requirement first) and returns what it appended.
inline std::vector<CheckResult> run_one(std::unique_ptr<Check> c, CheckContext& ctx) {
    CheckList list;
    list.push_back(std::move(c));
    std::size_t before = ctx.report->checks.size();
    run_checks(list, ctx);
    return {ctx.report->checks.begin() + long(before), ctx.report->checks.end()};
}

inline CheckResult for_gpu(const std::vector<CheckResult>& rs, int gpu) {  // a copy: callers pass temporaries
    for (auto& r : rs)
        if (r.gpu == gpu) return r;
    throw std::runtime_error("no result for GPU " + std::to_string(gpu));
}

inline bool details_mention(const CheckResult& r, const std::string& word) {
    for (auto& f : r.findings)
        if (f.text.find(word) != std::string::npos) return true;
    for (auto& d : r.details)
        if (d.find(word) != std::string::npos) return true;
    return r.summary.find(word) != std::string::npos;
}

// gpu.tenancy with a given utilization window per GPU instead of NVML; GPUs not named read 0%
// ten times, as an idle GPU does.
inline std::unique_ptr<GpuTenancyCheck> tenancy(std::map<int, IdleUtilization> window = {}, bool mig_ordered = false) {
    return std::make_unique<GpuTenancyCheck>(
        4242,
        [window](CheckContext&, const std::vector<int>& gpus) {
            std::map<int, IdleUtilization> m;
            for (int i : gpus) {
                auto it = window.find(i);
                m[i] = it != window.end() ? it->second : IdleUtilization{std::vector<double>(10, 0.0), ""};
            }
            return m;
        },
        mig_ordered);
}

inline std::vector<std::unique_ptr<Check>> inventory_checks() {
    std::vector<std::unique_ptr<Check>> v;
    v.push_back(std::make_unique<GpuIdentityCheck>());
    v.push_back(tenancy());
    v.push_back(std::make_unique<GpuHealthCheck>());
    v.push_back(std::make_unique<GpuPcieLinkCheck>());
    v.push_back(std::make_unique<GpuNvlinkCheck>());
    return v;
}

}  // namespace gpuvet::testing
