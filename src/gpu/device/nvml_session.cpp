#include "gpu/device/nvml_session.hpp"

namespace gpuvet {

NvmlSession::NvmlSession(NvmlApi api) : api_(std::move(api)) {
    if (!api_.ok()) {
        reason_ = api_.error;
        return;
    }
    if (int rc = api_.nvmlInit(); rc != nvml::NVML_SUCCESS) {
        init_status_ = rc;
        reason_ = rc == kNvmlNoAnswer
                      ? last_driver_no_answer()
                      : "nvmlInit_v2 failed: " + api_.error_name(rc) + " (" + nvml_status_name(rc) + ")";
        return;
    }
    initialised_ = true;
}

NvmlSession::~NvmlSession() {
    if (initialised_) api_.nvmlShutdown();
}

NvmlSession& NvmlSession::shared() {
    // A function-local static: opened once, thread-safe, shut down at exit after every user
    // (samplers are stopped by their owners before main returns).
    static NvmlSession session(NvmlApi::load());
    return session;
}

}  // namespace gpuvet
