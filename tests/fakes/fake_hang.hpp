// A driver call that never returns, as a wedged kernel driver stuck in an ioctl: every double
// (NVML, CUDA, cuBLASLt, NCCL, AMD SMI) checks GPUVET_FAKE_HANG at the entry of each exported
// function.
//
//   GPUVET_FAKE_HANG="nvmlInit"                        every nvmlInit* call blocks
//   GPUVET_FAKE_HANG="nvmlDeviceGetPowerUsage@3"       only the calls that name GPU 3
//   GPUVET_FAKE_HANG="cuStreamSynchronize@1+2.5"       ... once 2.5 s have passed since the first call
//   GPUVET_FAKE_HANG="*@2"                             every call naming GPU 2
//   GPUVET_FAKE_HANG="cuLaunchKernel@0=2.5"            ... returns after 2.5 s, then does its work: a
//                                                      slow driver, which outlives a caller that
//                                                      abandoned the call at its deadline
//
// Entries are separated by commas. A name matches the function and its versioned forms
// (nvmlInit matches nvmlInit_v2). The GPU is the NVML index for NVML, the CUDA ordinal of the
// device argument or current context for CUDA, the stream's device for cuBLASLt and NCCL, the
// processor handle's place in the list for AMD SMI. A matching call blocks forever (until the
// process dies) and holds no lock of the double, so the other GPUs' calls go on, as they do when
// one GPU's channel is stuck.
#pragma once
#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fake {

struct HangRule {
    std::string fn;  // "*" for any
    int gpu = -1;    // -1: any GPU (and calls that name none)
    double after_s = 0;
    double returns_after_s = -1;  // < 0: never returns
};

inline std::vector<HangRule> parse_hang_rules(std::string_view spec) {
    std::vector<HangRule> rules;
    while (!spec.empty()) {
        auto comma = spec.find(',');
        std::string item(spec.substr(0, comma));
        spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
        if (item.empty()) continue;
        HangRule r;
        if (auto eq = item.find('='); eq != std::string::npos) {
            r.returns_after_s = std::atof(item.c_str() + eq + 1);
            item.resize(eq);
        }
        if (auto plus = item.find('+'); plus != std::string::npos) {
            r.after_s = std::atof(item.c_str() + plus + 1);
            item.resize(plus);
        }
        if (auto at = item.find('@'); at != std::string::npos) {
            r.gpu = std::atoi(item.c_str() + at + 1);
            item.resize(at);
        }
        r.fn = item;
        rules.push_back(r);
    }
    return rules;
}

// nvmlInit matches nvmlInit and nvmlInit_v2; cuMemcpyHtoD matches cuMemcpyHtoD_v2.
inline bool hang_name_matches(std::string_view rule, std::string_view fn) {
    if (rule == "*" || rule == fn) return true;
    if (!fn.starts_with(rule)) return false;
    std::string_view rest = fn.substr(rule.size());
    if (rest.size() < 3 || !rest.starts_with("_v")) return false;
    for (char c : rest.substr(2))
        if (c < '0' || c > '9') return false;
    return true;
}

inline void hang_point(const char* fn, int gpu) {
    static const auto start = std::chrono::steady_clock::now();
    static const std::vector<HangRule> rules = [] {
        const char* s = std::getenv("GPUVET_FAKE_HANG");
        return s ? parse_hang_rules(s) : std::vector<HangRule>{};
    }();
    for (const auto& r : rules) {
        if (!hang_name_matches(r.fn, fn) || (r.gpu >= 0 && r.gpu != gpu)) continue;
        if (r.after_s > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < r.after_s)
            continue;
        if (r.returns_after_s >= 0) {
            std::this_thread::sleep_for(std::chrono::duration<double>(r.returns_after_s));
            return;
        }
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
}

}  // namespace fake
