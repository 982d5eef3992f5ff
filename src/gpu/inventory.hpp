// Everything the drivers know about the GPUs of this box, read through NVML and the CUDA driver
// API, and AMD SMI (or ROCm SMI) for AMD GPUs, all loaded at run time. Each field is a Fact: a value or the reason it
// is absent. Collected by gpu/inventory.cpp; consumed by `gpuvet inventory`, the gpu.* checks and order.*.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/fact.hpp"
#include "core/result.hpp"
#include "gpu/device/backend.hpp"
#include "gpu/device/nvml_decode.hpp"  // the decoders, for the inventory's users

namespace gpuvet {

// One GPU as the inventory saw it: the backend's fixed facts (describe()) and one sample of its
// live state taken at inventory time (sample()), with what only CUDA knows. A reader that wants
// only one half takes it as `const DeviceFacts&` or `const DeviceSample&`.
struct GpuInfo : DeviceFacts, DeviceSample {
    int index = 0;           // the run's GPU index (NVML's; AMD's GPUs follow NVIDIA's)
    Fact<int> cuda_ordinal;  // CUDA device ordinal matched by PCI bus id
    Fact<int> sm_count;      // read through CUDA only

    bool lost = false;                // fell off the bus while being read
    std::vector<std::string> errors;  // per-GPU problems met while reading
};

// GPU-to-GPU relation like `nvidia-smi topo -m`: "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "X".
struct Topology {
    std::vector<std::vector<std::string>> matrix;  // [i][j], "X" on the diagonal
    std::string absent_reason;
};

struct Inventory {
    Fact<std::string> driver_version;  // "570.86.15"
    Fact<int> cuda_driver_version;     // 12080
    Fact<std::string> nvml_version;
    std::vector<GpuInfo> gpus;
    Topology topology;
    std::vector<std::string> errors;  // box-level problems (NVML missing, ...)

    // How the libraries loaded. cuda_present: libcuda loaded and cuInit succeeded.
    bool cuda_present = false;
    std::string cuda_absent_reason;  // "libcuda.so.1 could not be loaded: ..."
    bool nvml_present = false;       // libnvidia-ml loaded and nvmlInit succeeded
    std::string nvml_absent_reason;
    int nvml_init_status = 0;  // nvmlInit's return code when it failed
    int cuda_init_status = 0;  // cuInit's return code when it failed
    // Why the driver cannot be used as a whole (kernel module not loaded, MIG hiding every GPU
    // from CUDA, CUDA and NVML disagreeing), with the fix; empty when nothing is wrong.
    std::vector<DriverProblem> problems;
    std::string libcuda_path, libnvml_path;

    // AMD's GPUs (gpu/device/backend_choice.hpp): listed after NVIDIA's, each with vendor "AMD".
    bool amd_present = false;       // AMD SMI (or ROCm SMI) lists AMD GPUs
    std::string amd_absent_reason;  // why not, in the libraries' words
    std::string amd_library;        // "AMD SMI", "ROCm SMI"; empty when none lists a GPU
    std::string libamd_path;
    Fact<std::string> amd_driver_version, amd_library_version;
};

struct InventoryOptions {
    std::filesystem::path root = "/";  // for /proc/<pid>/comm (GPUVET_ROOT)
};

// Reads everything the driver knows. Never throws for driver problems: a failing call makes its
// fact absent with the reason, a failing GPU never stops the others, a GPU that falls off the bus
// is marked `lost`. Libraries come from GPUVET_LIBCUDA / GPUVET_LIBNVML when set.
Inventory collect_inventory(const InventoryOptions& opt = {});

// The report's view of the inventory: MachineInfo::driver and Report::gpus.
DriverInfo driver_info_of(const Inventory& inv);
std::vector<GpuSummary> gpu_summaries_of(const Inventory& inv);
}  // namespace gpuvet
