// Inside the NVML backend: runs NVML calls for one GPU, turns statuses into absent reasons, notes
// failures once, and notices a GPU that fell off the bus (no call is made on it after that).
#pragma once
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/fact.hpp"
#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet::nvml_backend {

// The type an NVML getter writes through its last (pointer) parameter.
template <class F>
struct out_param;
template <class... A>
struct out_param<nvml::nvmlReturn_t (*)(A...)> {
    using type = std::remove_pointer_t<std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>>;
};
template <class F>
using out_t = typename out_param<F>::type;

template <class T>
Fact<T> fact_of(const std::string& why, T value) {
    return why.empty() ? Fact<T>(std::move(value)) : Fact<T>::absent(why);
}

struct Reader {
    const NvmlApi& api;
    nvml::nvmlDevice_t dev = nullptr;
    bool lost = false;
    std::vector<std::string> errors;

    // Returns "" on success, else why the fact is absent.
    template <class Fn, class... Args>
    std::string call(const char* symbol, Fn fn, Args... args) {
        if (lost) return "GPU is lost";
        if (!fn) return driver_lacks(symbol);
        return status(symbol, fn(dev, args...));
    }
    std::string status(const char* symbol, int rc);
    void note(const std::string& e);

    // One getter whose last parameter is its output: the fact is conv(output), or absent.
    template <class Conv, class Fn, class... Args>
    auto fact(const char* symbol, Fn fn, Conv conv, Args... args) {
        out_t<Fn> v{};
        std::string why = call(symbol, fn, args..., &v);  // finishes before v is read
        return fact_of(why, conv(v));
    }
    Fact<std::string> text(const char* symbol, nvml::nvmlDeviceGetString_fn fn);
};

// Conversions shared by the readers. NVML reports power in milliwatts.
inline int as_int(unsigned v) { return static_cast<int>(v); }
inline std::uint32_t as_u32(unsigned v) { return v; }
inline std::uint64_t as_u64(unsigned long long v) { return v; }
inline double milliwatts_to_w(unsigned mw) { return mw * 1e-3; }
inline bool is_enabled(nvml::nvmlEnableState_t s) { return s == nvml::NVML_FEATURE_ENABLED; }

}  // namespace gpuvet::nvml_backend
