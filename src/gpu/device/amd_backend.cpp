// AmdSmiBackend: the whole-library readings (versions, device count, topology) and the reader.
#include "gpu/device/amd_backend.hpp"

#include <algorithm>

#include "gpu/device/amd_decode.hpp"

namespace gpuvet {

using namespace amdsmi;

namespace amd_backend {

std::string Reader::status(const char* symbol, unsigned rc) {
    if (rc == AMDSMI_STATUS_SUCCESS) return {};
    std::string why = amdsmi_absent_reason(rc);
    if (rc != AMDSMI_STATUS_NOT_SUPPORTED && rc != AMDSMI_STATUS_NOT_YET_IMPLEMENTED) {
        std::string e = std::string(symbol) + " failed: " + api.error_name(rc) + ": " + why;
        if (std::find(errors.begin(), errors.end(), e) == errors.end()) errors.push_back(e);
    }
    return why;
}

}  // namespace amd_backend

namespace {

class NoEventWatch final : public EventWatch {
public:
    const std::string& absent_reason() const override { return reason_; }
    std::optional<DeviceEvent> next(std::chrono::milliseconds) override { return std::nullopt; }

private:
    std::string reason_ = "AMD GPUs: hardware errors are read from the RAS counters of each sample, not as events";
};

}  // namespace

AmdSmiDevice::AmdSmiDevice(const AmdSmiApi& api, amdsmi_processor_handle h, int index) : index_(index), r_{api, h, {}} {
    if (!h) unopened_ = "AMD SMI lists no GPU " + std::to_string(index);
}

const AmdSmiBackend& AmdSmiBackend::shared() {
    static AmdSmiBackend backend(AmdSmiSession::shared());
    return backend;
}

SystemFacts AmdSmiBackend::system() const {
    SystemFacts s;
    s.cuda_driver_version = Fact<int>::absent("CUDA is NVIDIA's: AMD GPUs run HIP (see gpu.software)");
    if (!usable()) {
        s.driver_version = s.library_version = Fact<std::string>::absent(absent_reason());
        return s;
    }
    const AmdSmiApi& a = session_.api();
    if (!a.amdsmi_get_lib_version) {
        s.library_version = Fact<std::string>::absent(driver_lacks("amdsmi_get_lib_version"));
    } else if (amdsmi_version_t v{}; unsigned rc = a.amdsmi_get_lib_version(&v)) {
        s.library_version = Fact<std::string>::absent(amdsmi_absent_reason(rc));
    } else {
        s.library_version = std::to_string(v.year) + "." + std::to_string(v.major) + "." + std::to_string(v.minor) +
                            "." + std::to_string(v.release);
    }
    // The amdgpu kernel driver's version, as the first GPU reports it (one driver for all).
    if (session_.gpus().empty()) {
        s.driver_version = Fact<std::string>::absent("AMD SMI lists no GPU");
    } else if (!a.amdsmi_get_gpu_driver_info) {
        s.driver_version = Fact<std::string>::absent(driver_lacks("amdsmi_get_gpu_driver_info"));
    } else if (amdsmi_driver_info_t d{}; unsigned rc = a.amdsmi_get_gpu_driver_info(session_.gpus()[0], &d)) {
        s.driver_version = Fact<std::string>::absent(amdsmi_absent_reason(rc));
    } else {
        s.driver_version = amd_decode::text_of(d.driver_version, sizeof d.driver_version);
    }
    return s;
}

Fact<int> AmdSmiBackend::device_count() const {
    if (!usable()) return Fact<int>::absent(absent_reason());
    return static_cast<int>(session_.gpus().size());
}

std::unique_ptr<GpuDevice> AmdSmiBackend::open(int index) const {
    const auto& gpus = session_.gpus();
    amdsmi_processor_handle h = index >= 0 && static_cast<size_t>(index) < gpus.size() ? gpus[index] : nullptr;
    return std::make_unique<AmdSmiDevice>(session_.api(), h, index);
}

Fact<std::string> AmdSmiBackend::pcie_path(const GpuDevice& a, const GpuDevice& b) const {
    auto* da = dynamic_cast<const AmdSmiDevice*>(&a);
    auto* db = dynamic_cast<const AmdSmiDevice*>(&b);
    if (!da || !db || !da->handle() || !db->handle()) return Fact<std::string>::absent("not an AMD SMI GPU");
    const AmdSmiApi& api = session_.api();
    if (!api.amdsmi_topo_get_link_type) return Fact<std::string>::absent(driver_lacks("amdsmi_topo_get_link_type"));
    uint64_t hops = 0;
    amdsmi_io_link_type_t type{};
    if (unsigned rc = api.amdsmi_topo_get_link_type(da->handle(), db->handle(), &hops, &type))
        return Fact<std::string>::absent(amdsmi_absent_reason(rc));
    if (type == AMDSMI_IOLINK_TYPE_XGMI) return std::string("XGMI");
    if (type == AMDSMI_IOLINK_TYPE_PCIEXPRESS) return "PCIE " + std::to_string(hops) + " hops";
    return Fact<std::string>::absent("the driver does not say how these GPUs are joined");
}

std::string AmdSmiBackend::pcie_paths_absent_reason() const {
    if (!usable()) return absent_reason();
    return session_.api().amdsmi_topo_get_link_type ? "" : driver_lacks("amdsmi_topo_get_link_type");
}

std::unique_ptr<EventWatch> AmdSmiBackend::watch_critical_errors(const std::vector<const GpuDevice*>&) const {
    return std::make_unique<NoEventWatch>();
}

}  // namespace gpuvet
