// Inside the AMD SMI backend: runs AMD SMI calls for one GPU, turns statuses into absent reasons
// and notes failures (not "unsupported") once each.
#pragma once
#include <string>
#include <vector>

#include "core/fact.hpp"
#include "gpu/bindings/amd_smi_api.hpp"

namespace gpuvet::amd_backend {

template <class T>
Fact<T> fact_of(const std::string& why, T value) {
    return why.empty() ? Fact<T>(std::move(value)) : Fact<T>::absent(why);
}

struct Reader {
    const AmdSmiApi& api;
    amdsmi::amdsmi_processor_handle dev = nullptr;
    std::vector<std::string> errors;

    // Returns "" on success, else why the fact is absent.
    template <class Fn, class... Args>
    std::string call(const char* symbol, Fn fn, Args... args) {
        if (!fn) return driver_lacks(symbol);
        return status(symbol, fn(dev, args...));
    }
    std::string status(const char* symbol, unsigned rc);
};

}  // namespace gpuvet::amd_backend
