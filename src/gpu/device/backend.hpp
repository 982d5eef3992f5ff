// The GPU device backend: what any vendor's management library (NVML; AMD SMI beside it) must
// tell about a GPU, split like nvtop's static/dynamic info into
//  - describe(): fixed facts, read once (identity, limits, capabilities, configuration);
//  - sample():   live facts with a timestamp (load, memory, power, clocks, temperatures, links,
//                error counters, processes), read as often as a caller polls.
// Every value is a Fact: measured, or absent with the reason. Nothing here names a vendor API.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fact.hpp"

namespace gpuvet {

struct GpuProcess {
    std::uint32_t pid = 0;
    std::string name;  // from /proc/<pid>/comm when visible (filled by the caller)
    Fact<std::uint64_t> used_memory_bytes;
    std::string type;  // "compute", "graphics"
};

struct NvLinkInfo {
    int link = 0;
    Fact<bool> active;
    Fact<std::string> remote_pci_bus_id;
    Fact<std::string> remote_type;  // "gpu", "switch" (NVSwitch), "ibmnpu", "unknown"
    Fact<int> version;
};

// An AMD xGMI link (the AMD counterpart of an NVLink), as the driver's link metrics list it.
struct XgmiLinkInfo {
    int link = 0;
    Fact<std::string> remote_pci_bus_id;  // the GPU at the far end
    Fact<bool> active;                    // trained: a nonzero bit rate
    Fact<double> bit_rate_gbps, max_bandwidth_gbps;
};

// One RAS block's error counts (AMD: UMC is the HBM, XGMI_WAFL the links, GFX the compute units).
struct RasBlockCount {
    std::string block;  // "UMC", "SDMA", "GFX", "MMHUB", "PCIE_BIF", "XGMI_WAFL", ...
    Fact<std::uint64_t> correctable, uncorrectable, deferred;
};

struct EccCounts {
    Fact<std::uint64_t> volatile_corrected, volatile_uncorrected;
    Fact<std::uint64_t> aggregate_corrected, aggregate_uncorrected;
};

// Fixed facts: they do not change while gpuvet runs (a reboot or an admin command changes them).
struct DeviceFacts {
    Fact<std::string> name, uuid, serial, pci_bus_id, vbios_version;
    Fact<std::string> board_part_number;      // "692-2G520-0200-000"
    Fact<std::string> inforom_image_version;  // the board's InfoROM firmware, "G520.0200.00.05"
    Fact<std::uint32_t> pci_device_id;        // 16-bit device id (vendor 0x10de)
    Fact<std::uint32_t> pci_subsystem_id;     // 32-bit subsystem id
    Fact<std::string> architecture;           // "Hopper"
    Fact<std::string> compute_capability;     // "9.0"

    Fact<std::uint64_t> memory_total_bytes, memory_reserved_bytes;
    Fact<bool> ecc_enabled, ecc_pending;

    Fact<int> pcie_gen_max_gpu, pcie_gen_max_host, pcie_width_max;
    std::vector<NvLinkInfo> nvlinks;   // every link the driver knows, active or not
    std::string nvlink_absent_reason;  // when the links could not be read at all
    // The driver said this GPU has no NVLink (a PCIe card without a bridge), as opposed to links
    // that could not be read: a fact, so a diagnosis never hangs on the wording of the reason.
    bool nvlink_none = false;

    Fact<bool> persistence_mode;
    Fact<std::string> compute_mode;  // "Default", "Exclusive_Process", "Prohibited"
    Fact<bool> mig_enabled;
    Fact<std::string> virtualization_mode;  // "None", "Pass-Through", "vGPU", "Host vGPU"...

    Fact<double> power_default_limit_w, power_min_limit_w, power_max_limit_w;
    Fact<int> clock_sm_max_mhz, clock_mem_max_mhz;
    Fact<int> temperature_slowdown_c, temperature_shutdown_c;
    Fact<int> temperature_memory_max_c;  // the memory's maximum threshold

    Fact<int> numa_node;
    Fact<std::string> cpu_affinity;  // CPU list like "0-31,64-95"

    // AMD (absent on NVIDIA, where MIG, NVLinks and the compute capability say the same things).
    Fact<std::string> vendor;              // "AMD" from the AMD backend (the NVML one does not set it)
    Fact<std::uint32_t> pci_vendor_id;     // 0x1002 for AMD
    Fact<std::string> gfx_target;          // "gfx942": what code objects must be built for
    Fact<std::string> compute_partition;   // "SPX", "DPX", "QPX", "CPX": AMD's counterpart of MIG
    Fact<std::string> memory_partition;    // "NPS1", "NPS4"
    Fact<std::string> form_factor;         // "OAM", "PCIe", "CEM"
    Fact<int> compute_units;               // CUs the driver reports (NVIDIA's count is sm_count, through CUDA)
    std::vector<XgmiLinkInfo> xgmi_links;  // every xGMI link the driver lists
    std::string xgmi_absent_reason;        // when the links could not be read at all
};

// An AMD GPU (its backend says so); NVML's GPUs leave the vendor unread.
inline bool is_amd_gpu(const DeviceFacts& f) { return f.vendor.value_or("") == "AMD"; }

// What a sample reads. Callers polling fast ask only for what they use: some readings are slow
// (PCIe throughput counts over 20 ms per direction) or long (process lists).
enum Reading : unsigned {
    kReadUtilization = 1u << 0,
    kReadMemory = 1u << 1,
    kReadPower = 1u << 2,
    kReadClocks = 1u << 3,    // SM, memory, graphics clocks and the clock-event reasons
    kReadThermal = 1u << 4,   // GPU and memory temperature, fan
    kReadPcieLink = 1u << 5,  // current generation and width, replay counter
    kReadPcieThroughput = 1u << 6,
    kReadNvLinkThroughput = 1u << 7,
    kReadEcc = 1u << 8,         // ECC error counters
    kReadRetirement = 1u << 9,  // remapped rows, retired pages
    kReadProcesses = 1u << 10,
    kReadGpm = 1u << 11,  // GPU performance metrics (Hopper+): over the time since this device's previous GPM read
    kReadEverything = (1u << 12) - 1,
};

// How one figure of a sample was obtained: the driver's samples over the interval since the
// previous sample, the difference of a cumulative counter, or one point read at the instant.
enum class FigureSource { kPointRead, kIntervalMean, kCounterDifference };

struct FigureOrigin {
    FigureSource source = FigureSource::kPointRead;
    int samples = 0;        // driver samples averaged (kIntervalMean; 0: none new, see note)
    double interval_s = 0;  // time the figure covers (0: an instant)
    double idle_s = 0;      // of interval_s, time the driver wrote no sample in (an idle GPU), counted as 0
    std::string note;       // why a point read stands in ("driver lacks nvmlDeviceGetSamples")
};

// How the outputs name a source.
inline const char* figure_source_name(FigureSource s) {
    switch (s) {
        case FigureSource::kIntervalMean: return "interval mean";
        case FigureSource::kCounterDifference: return "counter difference";
        case FigureSource::kPointRead: break;
    }
    return "point read";
}

// One figure over the interval since the previous sample: the time-weighted mean with the least
// and greatest driver sample (a counter difference or a point read has no spread: min == max ==
// mean), and how it was obtained.
struct IntervalFigure {
    Fact<double> mean, min, max;
    FigureOrigin origin;
};

// Live facts at one instant.
struct DeviceSample {
    std::chrono::steady_clock::time_point taken_at{};

    Fact<int> utilization_gpu_percent, utilization_memory_percent;
    Fact<std::uint64_t> memory_used_bytes, memory_free_bytes;

    Fact<double> power_draw_w, power_limit_w, power_enforced_limit_w;
    Fact<int> clock_sm_mhz, clock_mem_mhz, clock_graphics_mhz;
    Fact<std::uint64_t> clock_event_reasons;  // bitmask, decode with decode_clock_reasons()
    Fact<int> temperature_c, temperature_memory_c;
    Fact<int> fan_percent;

    Fact<int> pcie_gen_current, pcie_width_current;
    Fact<std::uint32_t> pcie_replay_count;
    Fact<double> pcie_rx_bytes_per_s, pcie_tx_bytes_per_s;
    // Cumulative NVLink data counters over all links (a rate is the difference of two samples).
    Fact<std::uint64_t> nvlink_rx_bytes_total, nvlink_tx_bytes_total;

    EccCounts ecc;
    Fact<std::uint32_t> remapped_rows_correctable, remapped_rows_uncorrectable;
    Fact<bool> remap_pending, remap_failure;
    Fact<std::uint32_t> retired_pages_single_bit, retired_pages_double_bit;
    Fact<bool> retired_pages_pending;

    std::vector<GpuProcess> processes;
    std::string processes_absent_reason;  // empty when the list was read

    // AMD: temperature_c is the junction (hotspot), the one the GPU throttles on; the edge sensor
    // beside it (absent on MI300-class parts); temperature_memory_c the hottest HBM stack.
    Fact<int> temperature_edge_c;
    std::vector<RasBlockCount> ras_blocks;  // every RAS block with ECC enabled
    Fact<std::uint32_t> bad_pages_retired, bad_pages_pending, bad_pages_unreservable;
    Fact<std::uint64_t> xgmi_read_bytes_total, xgmi_write_bytes_total;  // cumulative, all links
    // The GPU metrics table's ASIC-independent throttle bits (core/amd_throttle.hpp); the same
    // classes go into clock_event_reasons for the rules both vendors share.
    Fact<std::uint64_t> amd_throttle_status;

    // GPU performance metrics (kReadGpm), each a percentage over the interval since the previous
    // GPM read of this device: SM activity and occupancy, tensor-pipe activity, DRAM bandwidth used.
    Fact<double> gpm_sm_activity_percent, gpm_sm_occupancy_percent, gpm_tensor_activity_percent,
        gpm_dram_bandwidth_percent;

    // The interval figures behind the point fields above (which hold their rounded means):
    // utilization from the driver's sample buffer, power from the energy counter, the SM clock from
    // its samples; each says how it was obtained.
    IntervalFigure utilization_gpu, utilization_memory, power_w, clock_sm;
    // Share of the interval the clocks were held down by the power cap or by a thermal slowdown
    // (violation-time counters), so a dip between two samples shows; absent on the first sample.
    Fact<double> throttled_power_percent, throttled_thermal_percent;
    FigureOrigin throttle_origin;
};

// One GPU. Not thread-safe: one caller at a time (the sampler serialises its own use).
class GpuDevice {
public:
    virtual ~GpuDevice() = default;
    virtual int index() const = 0;  // the backend's index
    // Why the library could not open this GPU; empty when it did.
    virtual const std::string& unopened_reason() const = 0;
    virtual DeviceFacts describe() = 0;
    virtual DeviceSample sample(unsigned readings = kReadEverything) = 0;
    // Fell off the bus: every later reading is absent with "GPU is lost".
    virtual bool lost() const = 0;
    // A call for this GPU was abandoned at its deadline (a wedged driver): why; empty while it
    // answers. Later readings of it are absent, refused without calling the driver.
    virtual std::string no_answer() const { return {}; }
    // Problems met while reading (failed calls, not "unsupported"), once each.
    virtual const std::vector<std::string>& errors() const = 0;
};

// A hardware error the driver reported (NVML: an Xid).
struct DeviceEvent {
    int gpu = 0;
    std::uint64_t code = 0;
};

// Waits for critical hardware errors on a set of GPUs.
class EventWatch {
public:
    virtual ~EventWatch() = default;
    // Why nothing is watched; empty while watching.
    virtual const std::string& absent_reason() const = 0;
    // The next event, waiting at most `timeout` (zero: only what already arrived).
    virtual std::optional<DeviceEvent> next(std::chrono::milliseconds timeout) = 0;
};

struct SystemFacts {
    Fact<std::string> driver_version;   // "570.86.15"
    Fact<std::string> library_version;  // the management library's own version
    Fact<int> cuda_driver_version;      // 12080
};

// A vendor's management library for the whole run.
class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;
    // Why the library cannot be used; empty when it can.
    virtual const std::string& absent_reason() const = 0;
    bool usable() const { return absent_reason().empty(); }
    virtual SystemFacts system() const = 0;
    // Fact: the count, or why the GPUs could not be counted.
    virtual Fact<int> device_count() const = 0;
    // Never null: a GPU the library cannot open has its name absent with the reason and errors()
    // saying what failed; its other facts stay "not read".
    virtual std::unique_ptr<GpuDevice> open(int index) const = 0;
    // How two GPUs are joined through PCIe, like `nvidia-smi topo -m` ("PIX", "PXB", "PHB",
    // "NODE", "SYS"); both devices must come from this backend.
    virtual Fact<std::string> pcie_path(const GpuDevice& a, const GpuDevice& b) const = 0;
    // Why no PCIe path can be read at all (the library lacks the call); empty when they can.
    virtual std::string pcie_paths_absent_reason() const = 0;
    virtual std::unique_ptr<EventWatch> watch_critical_errors(const std::vector<const GpuDevice*>& gpus) const = 0;
};

}  // namespace gpuvet
