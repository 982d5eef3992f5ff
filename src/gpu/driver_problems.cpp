#include "gpu/driver_problems.hpp"

#include "gpu/inventory.hpp"
#include "gpu/bindings/cuda_api.hpp"
#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

namespace {

std::string join_indexes(const std::vector<int>& v) {
    std::string s;
    for (int i : v) s += (s.empty() ? "" : ", ") + std::to_string(i);
    return s;
}

std::string gpus_word(const std::vector<int>& v) { return v.size() == 1 ? "GPU " : "GPUs "; }

bool visible_to_cuda(const GpuInfo& g) { return g.cuda_ordinal.has_value(); }

}  // namespace

std::string cuda_invisible_reason(const GpuInfo& g, const char* cuda_visible_devices) {
    if (g.mig_enabled.value_or(false))
        return "MIG mode is on: CUDA sees only this GPU's MIG instances, not the whole GPU";
    if (cuda_visible_devices) return std::string("hidden from CUDA by CUDA_VISIBLE_DEVICES=") + cuda_visible_devices;
    return "NVML lists this GPU but CUDA does not see it";
}

std::vector<DriverProblem> diagnose_driver(const Inventory& inv, const char* cuda_visible_devices) {
    std::vector<DriverProblem> out;
    // nvidia.ko missing: the user-space libraries load, but NVML says the driver is not loaded
    // and cuInit finds no device.
    if (inv.nvml_init_status == nvml::NVML_ERROR_DRIVER_NOT_LOADED) {
        out.push_back(
            {"the NVIDIA kernel module is not loaded",
             "the NVIDIA kernel module is not loaded: the driver's libraries are installed, but no GPU can be reached",
             "load it with 'sudo modprobe nvidia' (and 'sudo modprobe nvidia_uvm' for CUDA), or reboot; if it "
             "will not load, 'sudo dmesg | grep -i nvidia' says why: often a kernel update without the module "
             "rebuilt ('dkms status') or Secure Boot refusing an unsigned module"});
        return out;
    }
    if (!inv.nvml_present || inv.gpus.empty()) return out;

    // NVIDIA's GPUs only: CUDA never sees AMD's.
    std::size_t nvidia = 0;
    for (const GpuInfo& g : inv.gpus) nvidia += g.vendor.value_or("") == "AMD" ? 0 : 1;
    std::vector<int> mig, hidden, unseen;
    for (const GpuInfo& g : inv.gpus) {
        if (g.vendor.value_or("") == "AMD") continue;
        if (g.lost || visible_to_cuda(g)) continue;
        if (g.mig_enabled.value_or(false)) mig.push_back(g.index);
        else if (inv.cuda_present && cuda_visible_devices) hidden.push_back(g.index);
        else if (inv.cuda_present) unseen.push_back(g.index);
    }
    if (!mig.empty()) {
        std::string which = gpus_word(mig) + join_indexes(mig);
        std::string first = std::to_string(mig.front());
        out.push_back(
            {"MIG mode is on for " + which + ": CUDA sees no whole GPU there",
             "MIG mode is on for " + which + ": " + (mig.size() == 1 ? "it is" : "each is") +
                 " partitioned into GPU instances, and CUDA sees no whole GPU there" +
                 (inv.cuda_present ? "" : " (cuInit finds no device at all)") + "; the NVML checks judge " +
                 (mig.size() == 1 ? "it" : "them") + " (gpu.tenancy, order), the measurements cannot run",
             "if whole GPUs were rented, have MIG turned off ('sudo nvidia-smi -i " + first +
                 " -mig 0', then reset the GPU with 'sudo nvidia-smi -i " + first +
                 " -r' or reboot); if MIG slices are what you rented, say so in the order (--expect \"..., mig\")"});
    }
    if (!inv.cuda_present && mig.size() < nvidia) {
        // CUDA failed for a reason of its own while NVML works: name both sides.
        std::string n = std::to_string(nvidia) + " GPU" + (nvidia == 1 ? "" : "s");
        out.push_back({"CUDA cannot start although NVML sees " + n,
                       "CUDA cannot start although NVML sees " + n + ": " + inv.cuda_absent_reason +
                           "; the NVML checks judge the GPUs, the measurements cannot run",
                       inv.cuda_init_status ? cuda_advice(inv.cuda_init_status)
                                            : "install the driver's CUDA library (libcuda.so.1; in a container the "
                                              "NVIDIA container toolkit mounts it) or set GPUVET_LIBCUDA to its path"});
    }
    if (!hidden.empty()) {
        std::string head = gpus_word(hidden) + join_indexes(hidden) +
                           " hidden from CUDA by CUDA_VISIBLE_DEVICES=" + cuda_visible_devices;
        out.push_back({head,
                       head + ": the NVML checks judge " + (hidden.size() == 1 ? "it" : "them") +
                           ", the measurements cannot run there",
                       "unset CUDA_VISIBLE_DEVICES to measure every GPU; choose GPUs with --gpus instead"});
    }
    if (!unseen.empty()) {
        std::string head = "NVML lists " + gpus_word(unseen) + join_indexes(unseen) + " but CUDA does not see " +
                           (unseen.size() == 1 ? "it" : "them");
        out.push_back({head, head + ": the driver's two views disagree, and the measurements cannot run there",
                       "check 'nvidia-smi -q -i " + std::to_string(unseen.front()) +
                           "' and 'sudo dmesg' for Xid errors; a GPU reset or a reboot usually brings it back"});
    }
    return out;
}

}  // namespace gpuvet
