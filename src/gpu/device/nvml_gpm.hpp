// Inside the NVML backend: one GPU's GPM (GPU performance metrics, Hopper and newer). GPM metrics
// are differences of two samples, so the reader keeps the previous sample and each read reports
// the interval since the last one. Support is asked once; a GPU without it (pre-Hopper, the driver
// says no, MIG mode, an NVML without the calls) answers every read with the same reason.
#pragma once
#include <memory>
#include <string>

#include "gpu/device/backend.hpp"
#include "gpu/device/nvml_reader.hpp"

namespace gpuvet::nvml_backend {

class GpmReader {
public:
    explicit GpmReader(Reader& r) : r_(r) {}
    ~GpmReader();
    GpmReader(const GpmReader&) = delete;
    GpmReader& operator=(const GpmReader&) = delete;

    // Fills the gpm_* facts of `s`: measured over the time since the previous read, or absent.
    void read(DeviceSample& s);

private:
    std::string probe();  // "" when GPM can be read; else why not
    void set_all(DeviceSample& s, const std::string& why) const;

    Reader& r_;
    bool probed_ = false;
    std::string unsupported_;  // non-empty: why this GPU has no GPM (asked once)
    nvml::nvmlGpmSample_t prev_ = nullptr, cur_ = nullptr;
    bool have_prev_ = false;
    std::unique_ptr<nvml::nvmlGpmMetricsGet_t> request_;  // ~41 KB, allocated once
};

}  // namespace gpuvet::nvml_backend
