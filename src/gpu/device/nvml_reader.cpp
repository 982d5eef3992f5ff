#include "gpu/device/nvml_reader.hpp"

#include <algorithm>

#include "core/text_safety.hpp"

namespace gpuvet::nvml_backend {

using namespace nvml;

void Reader::note(const std::string& e) {
    if (std::find(errors.begin(), errors.end(), e) == errors.end()) errors.push_back(e);
}

std::string Reader::status(const char* symbol, int rc) {
    if (rc == NVML_SUCCESS) return {};
    if (rc == NVML_ERROR_GPU_IS_LOST) {
        if (!lost) errors.push_back(std::string(symbol) + ": " + nvml_advice(rc));
        lost = true;
    } else if (rc != NVML_ERROR_NOT_SUPPORTED) {
        note(std::string(symbol) + " failed: " + api.error_name(rc) + " (" + nvml_status_name(rc) + ")");
    }
    return nvml_absent_reason(rc);
}

Fact<std::string> Reader::text(const char* symbol, nvmlDeviceGetString_fn fn) {
    char buf[128] = {0};
    std::string why = call(symbol, fn, buf, static_cast<unsigned>(sizeof buf - 1));
    return fact_of(why, visible_text(buf, false));  // the driver's text: shown, never obeyed by a terminal
}

}  // namespace gpuvet::nvml_backend
