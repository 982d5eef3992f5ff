// NvmlBackend: the whole-library readings (driver versions, device count, topology, events).
#include "gpu/device/nvml_backend.hpp"

#include <thread>

#include "core/text_safety.hpp"
#include "gpu/device/nvml_decode.hpp"

namespace gpuvet {

using namespace nvml;

namespace {

Fact<std::string> system_text(const char* symbol, nvmlSystemGetString_fn fn) {
    char buf[96] = {0};
    if (!fn) return Fact<std::string>::absent(driver_lacks(symbol));
    if (int rc = fn(buf, sizeof buf - 1); rc != NVML_SUCCESS) return Fact<std::string>::absent(nvml_absent_reason(rc));
    return visible_text(buf, false);
}

// Xid events through an NVML event set, polled with a bounded wait.
class NvmlEventWatch final : public EventWatch {
public:
    NvmlEventWatch(const NvmlApi& api, const std::vector<const GpuDevice*>& gpus) : api_(api) {
        if (!api_.nvmlEventSetCreate || !api_.nvmlDeviceRegisterEvents || !api_.nvmlEventSetWait) {
            reason_ = "the driver's NVML lacks the event-set calls";
            return;
        }
        if (int rc = api_.nvmlEventSetCreate(&set_); rc != NVML_SUCCESS) {
            reason_ = "nvmlEventSetCreate failed: " + api_.error_name(rc);
            set_ = nullptr;
            return;
        }
        std::string why;
        for (const GpuDevice* g : gpus) {
            auto* d = static_cast<const NvmlDevice*>(g);
            if (!d || !d->handle()) continue;
            int rc = api_.nvmlDeviceRegisterEvents(d->handle(), kEventTypeXidCriticalError, set_);
            if (rc == NVML_SUCCESS) watched_.emplace_back(d->handle(), d->index());
            else why = "nvmlDeviceRegisterEvents failed: " + nvml_absent_reason(rc);
        }
        if (watched_.empty()) reason_ = why.empty() ? "no GPU to watch" : why;
    }
    ~NvmlEventWatch() override {
        if (set_ && api_.nvmlEventSetFree) api_.nvmlEventSetFree(set_);
    }
    const std::string& absent_reason() const override { return reason_; }

    std::optional<DeviceEvent> next(std::chrono::milliseconds timeout) override {
        if (watched_.empty()) return std::nullopt;
        nvmlEventData_t ev{};
        int rc = api_.nvmlEventSetWait(set_, &ev, static_cast<unsigned>(timeout.count()));
        if (rc == NVML_ERROR_TIMEOUT) return std::nullopt;
        if (rc != NVML_SUCCESS) {
            // A lost GPU can make the wait fail; the caller retries later, so do not spin here.
            if (timeout.count() > 0) std::this_thread::sleep_for(timeout);
            return std::nullopt;
        }
        if (!(ev.eventType & kEventTypeXidCriticalError)) return std::nullopt;
        for (const auto& [h, index] : watched_)
            if (h == ev.device) return DeviceEvent{index, ev.eventData};
        return std::nullopt;
    }

private:
    const NvmlApi& api_;
    nvmlEventSet_t set_ = nullptr;
    std::vector<std::pair<nvmlDevice_t, int>> watched_;
    std::string reason_;
};

}  // namespace

NvmlBackend::NvmlBackend(const NvmlApi& api, std::string absent_reason)
    : api_(api), reason_(std::move(absent_reason)) {}

const NvmlBackend& NvmlBackend::shared() {
    // Constructed after the session it reads, so destroyed before it.
    static const NvmlBackend backend(NvmlSession::shared());
    return backend;
}

SystemFacts NvmlBackend::system() const {
    SystemFacts s;
    if (!usable()) {
        s.driver_version = s.library_version = Fact<std::string>::absent(reason_);
        s.cuda_driver_version = Fact<int>::absent(reason_);
        return s;
    }
    s.driver_version = system_text("nvmlSystemGetDriverVersion", api_.nvmlSystemGetDriverVersion);
    s.library_version = system_text("nvmlSystemGetNVMLVersion", api_.nvmlSystemGetNVMLVersion);
    int v = 0;
    if (!api_.nvmlSystemGetCudaDriverVersion)
        s.cuda_driver_version = Fact<int>::absent(driver_lacks("nvmlSystemGetCudaDriverVersion"));
    else if (int rc = api_.nvmlSystemGetCudaDriverVersion(&v); rc != NVML_SUCCESS)
        s.cuda_driver_version = Fact<int>::absent(nvml_absent_reason(rc));
    else s.cuda_driver_version = v;
    return s;
}

Fact<int> NvmlBackend::device_count() const {
    if (!usable()) return Fact<int>::absent(reason_);
    unsigned count = 0;
    if (int rc = api_.nvmlDeviceGetCount(&count); rc != NVML_SUCCESS)
        return Fact<int>::absent("nvmlDeviceGetCount failed: " + api_.error_name(rc) + ": " + nvml_advice(rc));
    return static_cast<int>(count);
}

std::unique_ptr<GpuDevice> NvmlBackend::open(int index) const { return std::make_unique<NvmlDevice>(api_, index); }

Fact<std::string> NvmlBackend::pcie_path(const GpuDevice& a, const GpuDevice& b) const {
    auto& da = static_cast<const NvmlDevice&>(a);
    auto& db = static_cast<const NvmlDevice&>(b);
    if (!api_.nvmlDeviceGetTopologyCommonAncestor)
        return Fact<std::string>::absent(driver_lacks("nvmlDeviceGetTopologyCommonAncestor"));
    if (da.lost() || db.lost() || !da.handle() || !db.handle()) return Fact<std::string>::absent("GPU is lost");
    nvmlGpuTopologyLevel_t level{};
    if (int rc = api_.nvmlDeviceGetTopologyCommonAncestor(da.handle(), db.handle(), &level); rc != NVML_SUCCESS)
        return Fact<std::string>::absent(nvml_absent_reason(rc));
    return topology_label(level);
}

std::string NvmlBackend::pcie_paths_absent_reason() const {
    return api_.nvmlDeviceGetTopologyCommonAncestor ? "" : driver_lacks("nvmlDeviceGetTopologyCommonAncestor");
}

std::unique_ptr<EventWatch> NvmlBackend::watch_critical_errors(const std::vector<const GpuDevice*>& gpus) const {
    return std::make_unique<NvmlEventWatch>(api_, gpus);
}

}  // namespace gpuvet
