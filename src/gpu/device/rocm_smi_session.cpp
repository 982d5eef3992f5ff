#include "gpu/device/rocm_smi_session.hpp"

namespace gpuvet {

using namespace rsmi;

RocmSmiSession::RocmSmiSession(RocmSmiApi api) : api_(std::move(api)) {
    if (!api_.ok()) {
        reason_ = api_.error;
        return;
    }
    if (unsigned rc = api_.rsmi_init(0); rc != RSMI_STATUS_SUCCESS) {
        reason_ = "rsmi_init failed: " + rsmi_absent_reason(rc);
        return;
    }
    initialised_ = true;
    if (api_.rsmi_version_get) {
        rsmi_version_t v{};
        if (api_.rsmi_version_get(&v) == RSMI_STATUS_SUCCESS) {
            layout_ = frequencies_layout_of(v);
            version_ = std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
        }
    }
    uint32_t n = 0;
    if (unsigned rc = api_.rsmi_num_monitor_devices(&n); rc != RSMI_STATUS_SUCCESS) {
        reason_ = "rsmi_num_monitor_devices failed: " + rsmi_absent_reason(rc);
        return;
    }
    count_ = static_cast<int>(n);
}

RocmSmiSession::~RocmSmiSession() {
    if (initialised_) api_.rsmi_shut_down();
}

RocmSmiSession& RocmSmiSession::shared() {
    static RocmSmiSession session(RocmSmiApi::load());
    return session;
}

}  // namespace gpuvet
