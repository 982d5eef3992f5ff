// The NVML implementation of the device backend (backend.hpp). NVML's own types stay inside
// src/gpu/device/ and src/gpu/bindings/: callers see only DeviceFacts and DeviceSample.
#pragma once
#include <memory>
#include <string>

#include "gpu/device/backend.hpp"
#include "gpu/device/nvml_gpm.hpp"
#include "gpu/device/nvml_interval.hpp"
#include "gpu/device/nvml_reader.hpp"
#include "gpu/device/nvml_session.hpp"

namespace gpuvet {

class NvmlDevice final : public GpuDevice {
public:
    // Looks the handle up; a failed lookup leaves the device unopened (see describe()).
    NvmlDevice(const NvmlApi& api, int index);
    int index() const override { return index_; }
    const std::string& unopened_reason() const override { return unopened_; }
    // Unopened: the name says why, every other fact stays "not read".
    DeviceFacts describe() override;
    DeviceSample sample(unsigned readings = kReadEverything) override;
    bool lost() const override { return r_.lost; }
    std::string no_answer() const override;
    const std::vector<std::string>& errors() const override { return r_.errors; }
    nvml::nvmlDevice_t handle() const { return r_.dev; }

private:
    struct MemoryInfo {
        Fact<std::uint64_t> total, reserved, used, free;
    };
    MemoryInfo read_memory();
    void read_identity(DeviceFacts& f);
    void read_memory_totals(DeviceFacts& f);
    void read_limits(DeviceFacts& f);
    void read_modes(DeviceFacts& f);
    void read_nvlinks(DeviceFacts& f);
    void sample_power_clocks(DeviceSample& s);
    void sample_thermal(DeviceSample& s);
    void sample_pcie(DeviceSample& s, unsigned readings);
    void sample_nvlink_throughput(DeviceSample& s);
    void sample_ecc(DeviceSample& s);
    void sample_retirement(DeviceSample& s);
    void sample_process_list(DeviceSample& s, const char* symbol, nvml::nvmlDeviceGetRunningProcesses_fn fn,
                             const char* v1_symbol, nvml::nvmlDeviceGetRunningProcesses_v1_fn fn_v1, const char* type,
                             std::string& why_out);
    void sample_processes(DeviceSample& s);

    int index_;
    nvml_backend::Reader r_;
    nvml_backend::GpmReader gpm_{r_};            // keeps the previous GPM sample between reads
    nvml_backend::IntervalReader interval_{r_};  // keeps what the previous sample saw of the buffers and counters
    std::string open_error_;  // why the handle lookup failed (the name's absent reason); empty when opened
    std::string unopened_;    // the same, naming the call
};

class NvmlBackend final : public DeviceBackend {
public:
    // Over an initialised NVML (a session's, or a test's table); `absent_reason` non-empty when
    // NVML is unusable.
    explicit NvmlBackend(const NvmlApi& api, std::string absent_reason = {});
    explicit NvmlBackend(const NvmlSession& s) : NvmlBackend(s.api(), s.absent_reason()) {}
    // The run's backend over NvmlSession::shared().
    static const NvmlBackend& shared();

    const std::string& absent_reason() const override { return reason_; }
    SystemFacts system() const override;
    Fact<int> device_count() const override;
    std::unique_ptr<GpuDevice> open(int index) const override;
    Fact<std::string> pcie_path(const GpuDevice& a, const GpuDevice& b) const override;
    std::string pcie_paths_absent_reason() const override;
    std::unique_ptr<EventWatch> watch_critical_errors(const std::vector<const GpuDevice*>& gpus) const override;

private:
    const NvmlApi& api_;
    std::string reason_;
};

}  // namespace gpuvet
