// Inside the NVML backend: one GPU's interval figures. Each sample reports what happened since the
// previous one, from what the driver keeps between reads: the utilization and SM clock samples
// it buffers (nvmlDeviceGetSamples, one per 1/6 s to 1 s), the energy counter and the
// violation-time counters. Where the GPU or driver lacks one, the figure falls back to a point read
// and its origin says so.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/device/backend.hpp"
#include "gpu/device/interval_mean.hpp"
#include "gpu/device/nvml_reader.hpp"

namespace gpuvet::nvml_backend {

class IntervalReader {
public:
    explicit IntervalReader(Reader& r) : r_(r) {}

    void read_utilization(DeviceSample& s);  // utilization_gpu / _memory and their point fields
    void read_power(DeviceSample& s);        // power_w and power_draw_w
    void read_clocks(DeviceSample& s);       // clock_sm, clock_sm_mhz and the throttled shares

private:
    struct Buffered {
        BufferCursor cursor;      // what the previous reads used
        std::string unsupported;  // non-empty: the buffer cannot be read (asked once per reason)
    };
    struct Counter {
        bool have = false;
        std::uint64_t value = 0, ref_us = 0;
        std::chrono::steady_clock::time_point at{};  // the middle of the call that read it
        double uncertainty_s = 0;                    // half the call's duration
    };
    // The mean of the samples of `type` since the previous read, or why there is none. With
    // `holes_are_idle`, time the driver wrote no sample in is idle (utilization).
    std::string buffered_mean(nvml::nvmlSamplingType_t type, Buffered& b, double hi, bool holes_are_idle,
                              IntervalFigure& out);
    void read_violation(nvml::nvmlPerfPolicyType_t policy, Counter& c, Fact<double>& out, std::string& why);

    Reader& r_;
    Buffered gpu_, memory_, clock_;
    Counter energy_, violation_power_, violation_thermal_;
    std::vector<nvml::nvmlSample_t> buf_;
};

}  // namespace gpuvet::nvml_backend
