// The ROCm SMI implementation of the device backend, for AMD stacks without AMD SMI (ROCm 5 and
// older). It reads what ROCm SMI offers; what only AMD SMI offers (the gfx target, compute units,
// xGMI link state, throttle status) is absent with the reason. docs/amd.md lists the calls.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/device/backend.hpp"
#include "gpu/device/rocm_smi_session.hpp"

namespace gpuvet {

namespace rocm_smi_backend {

// Runs ROCm SMI calls for one GPU (its index is every call's first argument), turns statuses into
// absent reasons and notes failures (not "unsupported") once each.
struct Reader {
    const RocmSmiApi& api;
    std::uint32_t dev = 0;
    std::vector<std::string> errors;

    template <class Fn, class... Args>
    std::string call(const char* symbol, Fn fn, Args... args) {
        if (!fn) return driver_lacks(symbol);
        return status(symbol, fn(dev, args...));
    }
    std::string status(const char* symbol, unsigned rc);
};

}  // namespace rocm_smi_backend

class RocmSmiDevice final : public GpuDevice {
public:
    RocmSmiDevice(const RocmSmiSession& s, int index, int count);
    int index() const override { return index_; }
    const std::string& unopened_reason() const override { return unopened_; }
    DeviceFacts describe() override;
    DeviceSample sample(unsigned readings = kReadEverything) override;
    bool lost() const override { return false; }
    const std::vector<std::string>& errors() const override { return r_.errors; }

private:
    void read_identity(DeviceFacts& f);
    void read_limits(DeviceFacts& f);
    void read_links(DeviceFacts& f);
    // The current and largest of a clock's levels, in MHz; the struct's layout follows the library.
    std::string clock_levels(rsmi::rsmi_clk_type_t t, int& current_mhz, int& max_mhz);
    std::string pcie_levels(int& gen_current, int& width_current, int& gen_max, int& width_max);
    void sample_ecc(DeviceSample& s);
    void sample_bad_pages(DeviceSample& s);
    void sample_processes(DeviceSample& s);

    const RocmSmiSession& session_;
    int index_, count_;
    rocm_smi_backend::Reader r_;
    std::string unopened_;
};

class RocmSmiBackend final : public DeviceBackend {
public:
    explicit RocmSmiBackend(const RocmSmiSession& s) : session_(s) {}
    static const RocmSmiBackend& shared();

    const std::string& absent_reason() const override { return session_.absent_reason(); }
    SystemFacts system() const override;
    Fact<int> device_count() const override;
    std::unique_ptr<GpuDevice> open(int index) const override;
    // "XGMI" for a direct xGMI link, else the PCIe hop count (rsmi_topo_get_link_type).
    Fact<std::string> pcie_path(const GpuDevice& a, const GpuDevice& b) const override;
    std::string pcie_paths_absent_reason() const override;
    std::unique_ptr<EventWatch> watch_critical_errors(const std::vector<const GpuDevice*>& gpus) const override;

private:
    const RocmSmiSession& session_;
};

}  // namespace gpuvet
