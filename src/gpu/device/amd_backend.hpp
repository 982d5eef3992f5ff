// The AMD SMI implementation of the device backend (backend.hpp), beside the NVML one. AMD SMI's
// own types stay inside src/gpu/device/ and src/gpu/bindings/: callers see only DeviceFacts and
// DeviceSample. docs/amd.md says which AMD SMI call fills which fact.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "gpu/device/amd_reader.hpp"
#include "gpu/device/amd_smi_session.hpp"
#include "gpu/device/backend.hpp"

namespace gpuvet {

class AmdSmiDevice final : public GpuDevice {
public:
    AmdSmiDevice(const AmdSmiApi& api, amdsmi::amdsmi_processor_handle h, int index);
    int index() const override { return index_; }
    const std::string& unopened_reason() const override { return unopened_; }
    DeviceFacts describe() override;
    DeviceSample sample(unsigned readings = kReadEverything) override;
    // AMD SMI has no "fallen off the bus" status: a lost GPU shows as failed calls in errors().
    bool lost() const override { return false; }
    const std::vector<std::string>& errors() const override { return r_.errors; }
    amdsmi::amdsmi_processor_handle handle() const { return r_.dev; }

private:
    void read_identity(DeviceFacts& f);
    void read_limits(DeviceFacts& f);
    void read_modes(DeviceFacts& f);
    void read_xgmi(DeviceFacts& f);
    void sample_load(DeviceSample& s, unsigned readings);
    void sample_power_clocks(DeviceSample& s, unsigned readings);
    void sample_throttle(DeviceSample& s);
    void sample_thermal(DeviceSample& s);
    void sample_pcie(DeviceSample& s);
    void sample_xgmi(DeviceSample& s);
    void sample_ecc(DeviceSample& s);
    void sample_bad_pages(DeviceSample& s);
    void sample_processes(DeviceSample& s);

    // The throttle residency counters of the previous metrics read (MI300 and later): a share of
    // the interval is the difference of two reads, as NVML's violation counters.
    struct Residency {
        std::uint64_t accumulated = 0, power = 0, thermal = 0;
        std::chrono::steady_clock::time_point at{};
    };
    std::optional<Residency> residency_;
    int index_;
    amd_backend::Reader r_;
    std::string unopened_;
};

class AmdSmiBackend final : public DeviceBackend {
public:
    explicit AmdSmiBackend(const AmdSmiSession& s) : session_(s) {}
    // The run's backend over AmdSmiSession::shared().
    static const AmdSmiBackend& shared();

    const std::string& absent_reason() const override { return session_.absent_reason(); }
    SystemFacts system() const override;
    Fact<int> device_count() const override;
    std::unique_ptr<GpuDevice> open(int index) const override;
    // "XGMI" for a direct xGMI link (AMD's name in `amd-smi topology`), else the PCIe hop count.
    Fact<std::string> pcie_path(const GpuDevice& a, const GpuDevice& b) const override;
    std::string pcie_paths_absent_reason() const override;
    // AMD SMI's event notification is not used: the RAS counters are read by every sample.
    std::unique_ptr<EventWatch> watch_critical_errors(const std::vector<const GpuDevice*>& gpus) const override;

private:
    const AmdSmiSession& session_;
};

}  // namespace gpuvet
