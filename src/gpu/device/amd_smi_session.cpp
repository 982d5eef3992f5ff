#include "gpu/device/amd_smi_session.hpp"

namespace gpuvet {

using namespace amdsmi;

AmdSmiSession::AmdSmiSession(AmdSmiApi api) : api_(std::move(api)) {
    if (!api_.ok()) {
        reason_ = api_.error;
        return;
    }
    if (unsigned rc = api_.amdsmi_init(kInitAmdGpus); rc != AMDSMI_STATUS_SUCCESS) {
        reason_ = "amdsmi_init failed: " + amdsmi_absent_reason(rc);
        return;
    }
    initialised_ = true;
    reason_ = list_gpus();
}

AmdSmiSession::~AmdSmiSession() {
    if (initialised_) api_.amdsmi_shut_down();
}

std::string AmdSmiSession::list_gpus() {
    uint32_t n_sockets = 0;
    if (unsigned rc = api_.amdsmi_get_socket_handles(&n_sockets, nullptr); rc != AMDSMI_STATUS_SUCCESS)
        return "amdsmi_get_socket_handles failed: " + amdsmi_absent_reason(rc);
    std::vector<amdsmi_socket_handle> sockets(n_sockets);
    if (unsigned rc = api_.amdsmi_get_socket_handles(&n_sockets, sockets.data()); rc != AMDSMI_STATUS_SUCCESS)
        return "amdsmi_get_socket_handles failed: " + amdsmi_absent_reason(rc);
    sockets.resize(n_sockets);
    for (amdsmi_socket_handle s : sockets) {
        uint32_t n = 0;
        if (unsigned rc = api_.amdsmi_get_processor_handles(s, &n, nullptr); rc != AMDSMI_STATUS_SUCCESS)
            return "amdsmi_get_processor_handles failed: " + amdsmi_absent_reason(rc);
        std::vector<amdsmi_processor_handle> handles(n);
        if (unsigned rc = api_.amdsmi_get_processor_handles(s, &n, handles.data()); rc != AMDSMI_STATUS_SUCCESS)
            return "amdsmi_get_processor_handles failed: " + amdsmi_absent_reason(rc);
        handles.resize(n);
        for (amdsmi_processor_handle h : handles) {
            // Initialised for AMD GPUs only, but a library that lists CPUs too says which is which.
            processor_type_t t = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
            if (api_.amdsmi_get_processor_type) api_.amdsmi_get_processor_type(h, &t);
            if (t != AMDSMI_PROCESSOR_TYPE_AMD_GPU) continue;
            gpus_.push_back(h);
            // A call that names this handle names this GPU (driver_deadline.hpp).
            if (api_.deadline) record_gpu_handle(*api_.deadline, h, static_cast<int>(gpus_.size() - 1));
        }
    }
    return {};
}

AmdSmiSession& AmdSmiSession::shared() {
    static AmdSmiSession session(AmdSmiApi::load());
    return session;
}

}  // namespace gpuvet
