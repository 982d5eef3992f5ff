#include "gpu/device/nvml_gpm.hpp"

#include <cstring>
#include <utility>

namespace gpuvet::nvml_backend {

using namespace nvml;

namespace {

// The metrics gpuvet reads, in the order of the DeviceSample fields they fill.
constexpr unsigned kMetrics[] = {kGpmMetricSmUtil, kGpmMetricSmOccupancy, kGpmMetricAnyTensorUtil,
                                 kGpmMetricDramBwUtil};

Fact<double>* field(DeviceSample& s, unsigned i) {
    Fact<double>* f[] = {&s.gpm_sm_activity_percent, &s.gpm_sm_occupancy_percent, &s.gpm_tensor_activity_percent,
                         &s.gpm_dram_bandwidth_percent};
    return f[i];
}

}  // namespace

GpmReader::~GpmReader() {
    if (r_.api.nvmlGpmSampleFree) {
        if (prev_) r_.api.nvmlGpmSampleFree(prev_);
        if (cur_) r_.api.nvmlGpmSampleFree(cur_);
    }
}

void GpmReader::set_all(DeviceSample& s, const std::string& why) const {
    for (unsigned i = 0; i < std::size(kMetrics); ++i) *field(s, i) = Fact<double>::absent(why);
}

std::string GpmReader::probe() {
    const NvmlApi& a = r_.api;
    // The symbol that is missing, named: a library can lack it whatever its version says (a stub or
    // shim), so the words do not claim the driver is old.
    const std::pair<const void*, const char*> needed[] = {
        {reinterpret_cast<const void*>(a.nvmlGpmQueryDeviceSupport), "nvmlGpmQueryDeviceSupport"},
        {reinterpret_cast<const void*>(a.nvmlGpmSampleAlloc), "nvmlGpmSampleAlloc"},
        {reinterpret_cast<const void*>(a.nvmlGpmSampleGet), "nvmlGpmSampleGet"},
        {reinterpret_cast<const void*>(a.nvmlGpmMetricsGet), "nvmlGpmMetricsGet"},
        {reinterpret_cast<const void*>(a.nvmlGpmSampleFree), "nvmlGpmSampleFree"}};
    for (const auto& [fn, name] : needed)
        if (!fn) return driver_lacks(name) + " (NVML has had GPM since 11.8: this library does not export it)";
    // With MIG on, GPM is read per GPU instance (nvmlGpmMigSampleGet); gpuvet reads whole GPUs.
    unsigned mig = 0, mig_pending = 0;
    if (r_.call("nvmlDeviceGetMigMode", a.nvmlDeviceGetMigMode, &mig, &mig_pending).empty() && mig == kDeviceMigEnable)
        return "MIG mode is on: GPM is per GPU instance there, which gpuvet does not read";
    nvmlGpmSupport_t support{};
    support.version = kGpmSupportVersion;
    if (std::string why = r_.call("nvmlGpmQueryDeviceSupport", a.nvmlGpmQueryDeviceSupport, &support); !why.empty())
        return "GPM support query failed: " + why;
    if (!support.isSupportedDevice) return "no GPM on this GPU (GPM needs Hopper or newer)";
    if (int rc = a.nvmlGpmSampleAlloc(&prev_); rc != NVML_SUCCESS) return r_.status("nvmlGpmSampleAlloc", rc);
    if (int rc = a.nvmlGpmSampleAlloc(&cur_); rc != NVML_SUCCESS) return r_.status("nvmlGpmSampleAlloc", rc);
    request_ = std::make_unique<nvmlGpmMetricsGet_t>();
    return {};
}

void GpmReader::read(DeviceSample& s) {
    if (r_.lost) return set_all(s, "GPU is lost");
    if (!probed_) {
        unsupported_ = probe();
        probed_ = true;
        if (r_.lost) return set_all(s, "GPU is lost");
    }
    if (!unsupported_.empty()) return set_all(s, unsupported_);
    const NvmlApi& a = r_.api;
    if (std::string why = r_.call("nvmlGpmSampleGet", a.nvmlGpmSampleGet, cur_); !why.empty()) {
        have_prev_ = false;  // the next good sample starts a new interval
        return set_all(s, why);
    }
    if (!have_prev_) {
        std::swap(prev_, cur_);
        have_prev_ = true;
        return set_all(s, "needs two samples: shown from the next reading on");
    }
    // Zeroed every time: the library may look at entries past numMetrics (see nvml_api.hpp).
    std::memset(request_.get(), 0, sizeof *request_);
    request_->version = kGpmMetricsGetVersion;
    request_->numMetrics = static_cast<unsigned>(std::size(kMetrics));
    request_->sample1 = prev_;
    request_->sample2 = cur_;
    for (unsigned i = 0; i < std::size(kMetrics); ++i) request_->metrics[i].metricId = kMetrics[i];
    int rc = r_.lost ? NVML_ERROR_GPU_IS_LOST : a.nvmlGpmMetricsGet(request_.get());
    std::swap(prev_, cur_);  // this sample starts the next interval
    if (rc != NVML_SUCCESS) return set_all(s, r_.status("nvmlGpmMetricsGet", rc));
    for (unsigned i = 0; i < std::size(kMetrics); ++i) {
        const nvmlGpmMetric_t& m = request_->metrics[i];
        *field(s, i) = m.nvmlReturn == NVML_SUCCESS ? Fact<double>(m.value)
                                                    : Fact<double>::absent(nvml_absent_reason(m.nvmlReturn));
    }
}

}  // namespace gpuvet::nvml_backend
