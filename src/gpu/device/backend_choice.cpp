#include "gpu/device/backend_choice.hpp"

#include "gpu/device/amd_backend.hpp"
#include "gpu/device/nvml_backend.hpp"
#include "gpu/device/rocm_smi_backend.hpp"

namespace gpuvet {

namespace {

// One GPU of a joined backend: the vendor's device under the joined index.
class JoinedDevice final : public GpuDevice {
public:
    JoinedDevice(std::unique_ptr<GpuDevice> inner, int index, const DeviceBackend* from)
        : inner_(std::move(inner)), index_(index), from_(from) {}
    int index() const override { return index_; }
    const std::string& unopened_reason() const override { return inner_->unopened_reason(); }
    DeviceFacts describe() override { return inner_->describe(); }
    DeviceSample sample(unsigned readings) override { return inner_->sample(readings); }
    bool lost() const override { return inner_->lost(); }
    std::string no_answer() const override { return inner_->no_answer(); }
    const std::vector<std::string>& errors() const override { return inner_->errors(); }
    const GpuDevice& inner() const { return *inner_; }
    const DeviceBackend* from() const { return from_; }

private:
    std::unique_ptr<GpuDevice> inner_;
    int index_;
    const DeviceBackend* from_;
};

// NVIDIA's GPUs first (indexes as NVML's), then AMD's.
class JoinedBackend final : public DeviceBackend {
public:
    JoinedBackend(const DeviceBackend& nvidia, int nvidia_gpus, const DeviceBackend& amd, int amd_gpus)
        : nvidia_(nvidia), amd_(amd), nvidia_gpus_(nvidia_gpus), amd_gpus_(amd_gpus) {}
    const std::string& absent_reason() const override { return none_; }
    // The NVIDIA driver's facts (the CUDA version is NVIDIA's); AMD's are in the inventory.
    SystemFacts system() const override { return nvidia_.system(); }
    Fact<int> device_count() const override { return nvidia_gpus_ + amd_gpus_; }
    std::unique_ptr<GpuDevice> open(int index) const override {
        if (index < nvidia_gpus_) return std::make_unique<JoinedDevice>(nvidia_.open(index), index, &nvidia_);
        return std::make_unique<JoinedDevice>(amd_.open(index - nvidia_gpus_), index, &amd_);
    }
    Fact<std::string> pcie_path(const GpuDevice& a, const GpuDevice& b) const override {
        auto* ja = dynamic_cast<const JoinedDevice*>(&a);
        auto* jb = dynamic_cast<const JoinedDevice*>(&b);
        if (!ja || !jb) return Fact<std::string>::absent("not a GPU of this backend");
        if (ja->from() != jb->from())
            return Fact<std::string>::absent("GPUs of two vendors: neither driver reports the path between them");
        return ja->from()->pcie_path(ja->inner(), jb->inner());
    }
    std::string pcie_paths_absent_reason() const override {
        std::string n = nvidia_.pcie_paths_absent_reason(), a = amd_.pcie_paths_absent_reason();
        return !n.empty() ? n : a;
    }
    // NVIDIA's Xid watch over the NVIDIA GPUs (their joined indexes are NVML's); AMD's RAS counters
    // are read by every sample.
    std::unique_ptr<EventWatch> watch_critical_errors(const std::vector<const GpuDevice*>& gpus) const override {
        std::vector<const GpuDevice*> nvidia;
        for (const GpuDevice* g : gpus)
            if (auto* j = dynamic_cast<const JoinedDevice*>(g); j && j->from() == &nvidia_)
                nvidia.push_back(&j->inner());
        return nvidia_.watch_critical_errors(nvidia);
    }

private:
    const DeviceBackend& nvidia_;
    const DeviceBackend& amd_;
    int nvidia_gpus_, amd_gpus_;
    std::string none_;
};

class NoWatch final : public EventWatch {
public:
    explicit NoWatch(std::string why) : why_(std::move(why)) {}
    const std::string& absent_reason() const override { return why_; }
    std::optional<DeviceEvent> next(std::chrono::milliseconds) override { return std::nullopt; }

private:
    std::string why_;
};

// A GPU no library can open.
class UnopenedDevice final : public GpuDevice {
public:
    UnopenedDevice(int index, std::string why) : index_(index), why_(std::move(why)) {}
    int index() const override { return index_; }
    const std::string& unopened_reason() const override { return why_; }
    DeviceFacts describe() override {
        DeviceFacts f;
        f.name = Fact<std::string>::absent(why_);
        return f;
    }
    DeviceSample sample(unsigned) override { return {}; }
    bool lost() const override { return false; }
    const std::vector<std::string>& errors() const override { return errors_; }

private:
    int index_;
    std::string why_;
    std::vector<std::string> errors_;
};

// Neither vendor's library can be used: every reading is absent with both reasons.
class NoBackend final : public DeviceBackend {
public:
    explicit NoBackend(std::string why) : why_(std::move(why)) {}
    const std::string& absent_reason() const override { return why_; }
    SystemFacts system() const override {
        SystemFacts s;
        s.driver_version = s.library_version = Fact<std::string>::absent(why_);
        s.cuda_driver_version = Fact<int>::absent(why_);
        return s;
    }
    Fact<int> device_count() const override { return Fact<int>::absent(why_); }
    std::unique_ptr<GpuDevice> open(int index) const override { return std::make_unique<UnopenedDevice>(index, why_); }
    Fact<std::string> pcie_path(const GpuDevice&, const GpuDevice&) const override {
        return Fact<std::string>::absent(why_);
    }
    std::string pcie_paths_absent_reason() const override { return why_; }
    std::unique_ptr<EventWatch> watch_critical_errors(const std::vector<const GpuDevice*>&) const override {
        return std::make_unique<NoWatch>(why_);
    }

private:
    std::string why_;
};

VendorBackend read_vendor(const char* vendor, const char* library, const DeviceBackend* b) {
    VendorBackend v{vendor, library, b, 0, {}};
    if (!b) {
        v.absent_reason = std::string(library) + " was not tried";
        return v;
    }
    if (!b->usable()) {
        v.absent_reason = b->absent_reason();
        return v;
    }
    Fact<int> n = b->device_count();
    v.gpus = n.value_or(0);
    if (!n) v.absent_reason = n.absent_reason;
    else if (v.gpus == 0) v.absent_reason = std::string(library) + " lists no GPU";
    return v;
}

}  // namespace

GpuBackends::GpuBackends(const DeviceBackend* nvml, const DeviceBackend* amd_smi,
                         std::function<const DeviceBackend*()> rocm_smi) {
    nvidia_ = read_vendor("NVIDIA", "NVML", nvml);
    amd_ = read_vendor("AMD", "AMD SMI", amd_smi);
    // ROCm SMI serves the stacks older than AMD SMI; a working AMD SMI that lists no GPU is the answer.
    if (rocm_smi && (!amd_smi || !amd_smi->usable())) {
        VendorBackend fallback = read_vendor("AMD", "ROCm SMI", rocm_smi());
        if (fallback.in_use()) amd_ = fallback;
        else amd_.absent_reason += "; " + fallback.absent_reason;
    }
    if (both()) {
        owned_ = std::make_unique<JoinedBackend>(*nvidia_.backend, nvidia_.gpus, *amd_.backend, amd_.gpus);
        devices_ = owned_.get();
    } else if (amd_.in_use()) {
        devices_ = amd_.backend;
    } else if (nvml && nvml->usable()) {
        devices_ = nvml;  // NVIDIA's path as before AMD was read, also with no GPU listed
    } else {
        owned_ = std::make_unique<NoBackend>(none_reason());
        devices_ = owned_.get();
    }
}

GpuBackends::~GpuBackends() = default;

const GpuBackends& GpuBackends::shared() {
    static GpuBackends b(&NvmlBackend::shared(), &AmdSmiBackend::shared(),
                         [] { return static_cast<const DeviceBackend*>(&RocmSmiBackend::shared()); });
    return b;
}

std::string GpuBackends::vendor_of(int index) const {
    if (both()) return index < nvidia_.gpus ? "NVIDIA" : "AMD";
    return amd_.in_use() ? "AMD" : "NVIDIA";
}

std::string GpuBackends::none_reason() const {
    return "no GPU driver found: NVIDIA (" + nvidia_.absent_reason + "), AMD (" + amd_.absent_reason + ")";
}

}  // namespace gpuvet
