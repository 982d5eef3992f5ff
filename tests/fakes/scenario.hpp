// Scenario model shared by the fake libcuda and fake NVML: what one machine's driver would report.
// Defaults describe a healthy H100 SXM5 80GB on driver 570; a scenario file states only what differs.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace fake {

struct Process {
    unsigned pid = 0;
    uint64_t used_bytes = 0;
    std::string name;
    bool graphics = false;  // listed by the graphics-process calls instead of the compute ones
    // The pid is the calling process's first child at the time of the call (a job that `gpuvet
    // run` started holding a context here); not listed while the caller has no child.
    bool child_of_caller = false;
};

struct XidEvent {
    uint64_t after_calls = 0;       // delivered once this GPU has seen this many NVML calls
    std::optional<double> after_s;  // or: once this many scenario seconds have passed
    unsigned long long xid = 0;
};

// A change to this GPU's state that takes effect after `after_calls` NVML calls on it
// (ECC errors appearing, throttling starting mid-burn).
struct Change {
    uint64_t after_calls = 0;
    std::optional<double> after_s;  // instead of after_calls: scenario seconds (see Scenario::seconds)
    std::shared_ptr<toml::table> keys;
};

// A stuck/flipping memory cell: the 64-bit word at this physical byte offset reads back with `flip`
// XOR'ed into what a kernel stores there (the interpreted kernels and later copies read it).
struct BadCell {
    uint64_t offset_bytes = 0;
    uint64_t flip = 1;
};

// A PCIe switch whose uplink several GPUs share: host copies of the GPUs in `gpus` that hold pinned
// host memory at the same time share `gbps`.
struct PcieSwitch {
    std::vector<unsigned> gpus;
    double gbps = 0;
};

struct Gpu {
    // identity
    std::string name = "NVIDIA H100 80GB HBM3";
    std::string uuid, serial, pci_bus_id;  // derived from the index when not given
    unsigned pci_device_id = 0x2330, pci_vendor_id = 0x10DE, pci_subsystem_id = 0x16C110DE;
    std::string vbios = "96.00.99.00.01", board_part_number = "692-2G520-0200-000";
    std::string inforom_image = "G520.0200.00.05";
    unsigned minor_number = 0;
    bool multi_gpu_board = false;
    // memory (bytes)
    uint64_t memory_total_bytes = 81559ull << 20, memory_reserved_bytes = 564ull << 20;
    uint64_t memory_used_bytes = 0;  // used by processes not listed in `processes`
    // ECC
    bool ecc_enabled = true, ecc_pending_enabled = true;
    // false: the board has no ECC (GeForce RTX 30): ECC mode, counters, row remapping and page
    // retirement all return NOT_SUPPORTED
    bool ecc_supported = true;
    bool remapped_rows_supported = true;  // false: NOT_SUPPORTED, as before Ampere (Volta, Turing)
    uint64_t ecc_volatile_corrected = 0, ecc_volatile_uncorrected = 0;
    uint64_t ecc_aggregate_corrected = 0, ecc_aggregate_uncorrected = 0;
    unsigned remapped_rows_correctable = 0, remapped_rows_uncorrectable = 0;
    bool remap_pending = false, remap_failure = false;
    unsigned retired_pages_sbe = 0, retired_pages_dbe = 0;
    bool retired_pages_pending = false;
    // PCIe
    unsigned pcie_gen_current = 5, pcie_width_current = 16;
    unsigned pcie_gen_gpu_max = 5, pcie_width_gpu_max = 16;
    unsigned host_pcie_gen_max = 5, host_pcie_width_max = 16;
    unsigned pcie_replay_counter = 0;
    unsigned pcie_rx_kb_per_s = 0, pcie_tx_kb_per_s = 0;  // nvmlDeviceGetPcieThroughput
    // NVLink
    unsigned nvlink_count = 18, nvlink_version = 4;
    uint64_t nvlink_rx_kib = 0, nvlink_tx_kib = 0;  // cumulative data counters, all links
    std::vector<unsigned> nvlink_down;
    std::string nvlink_remote_type = "switch";       // "switch" or "gpu"
    std::vector<std::string> nvlink_remote_bus_ids;  // per link; empty: a fake NVSwitch bus id
    // modes
    bool persistence_mode = true;
    std::string compute_mode = "default";  // default | exclusive_process | prohibited
    bool mig_mode = false, mig_pending = false;
    std::string virtualization_mode = "none";  // none | passthrough | vgpu | host_vgpu | host_vsga
    // power (watts)
    double power_draw_w = 72.5, power_limit_w = 700, power_default_limit_w = 700;
    double power_min_limit_w = 200, power_max_limit_w = 700, power_enforced_limit_w = 700;
    // clocks (MHz)
    unsigned sm_clock_mhz = 1980, mem_clock_mhz = 2619, video_clock_mhz = 1755;
    unsigned max_sm_clock_mhz = 1980, max_mem_clock_mhz = 2619, max_video_clock_mhz = 1755;
    unsigned long long clock_event_reasons = 0;
    // thermal
    unsigned temperature_c = 34, temp_shutdown_c = 92, temp_slowdown_c = 89, temp_gpu_max_c = 87, temp_mem_max_c = 95;
    // memory (HBM) temperature, served as the NVML_FI_DEV_MEMORY_TEMP field value; false: the
    // entry returns NOT_SUPPORTED, as on GDDR boards
    unsigned memory_temperature_c = 38;
    bool memory_temperature_supported = true;
    std::optional<unsigned> fan_speed_percent;  // SXM boards have no fan: NOT_SUPPORTED
    unsigned utilization_gpu_percent = 0, utilization_memory_percent = 0;
    // The driver's sample buffer (nvmlDeviceGetSamples): one entry per sample period, each the
    // share of that period the GPU was busy (the clock samples: the period's mean SM clock), the
    // newest `sample_buffer_entries` kept. The period and size are the fake's choice within what
    // nvml.h says ("between 1 second and 1/6 second"); false: NOT_SUPPORTED, as on MIG.
    double sample_period_s = 1.0 / 6;
    unsigned sample_buffer_entries = 120;
    bool samples_supported = true;
    // The driver stops filling the utilization buffer while the GPU is idle: a period with no work
    // leaves no entry, so a poll of an idle GPU finds nothing new (NVML_ERROR_NOT_FOUND).
    bool samples_skip_idle = false;
    // A square-wave load: busy (utilization_*_percent, power_draw_w) for duty x period seconds of
    // every period, then idle (0 %, load_idle_power_w); the wave starts at load_phase_s scenario
    // seconds. Period 0: no wave, the steady values above.
    double load_period_s = 0, load_duty = 1, load_phase_s = 0, load_idle_power_w = 60;
    // Total energy (nvmlDeviceGetTotalEnergyConsumption, mJ): the integral of the power drawn since
    // the scenario loaded, plus this; false: NOT_SUPPORTED (before Volta).
    double energy_start_mj = 0;
    bool energy_supported = true;
    // Violation-time counters (nvmlDeviceGetViolationStatus, ns): the time the clock-event reasons
    // named the power cap (POWER) or a thermal slowdown (THERMAL); false: NOT_SUPPORTED.
    bool violation_supported = true;
    // GPM (Hopper and newer): supported unless set false; unset means cc_major >= 9. The metrics
    // over an interval are the values in force at its later sample (percent, 0-100).
    std::optional<bool> gpm_supported;
    double gpm_sm_activity_percent = 0, gpm_sm_occupancy_percent = 0, gpm_tensor_activity_percent = 0,
           gpm_dram_bandwidth_percent = 0;
    std::vector<Process> processes;
    // host placement
    int numa_node = -1;        // -1: derived (first half of the GPUs on node 0, rest on node 1)
    std::string cpu_affinity;  // CPU list like "0-47,96-143"; empty: derived from numa_node
    // compute
    unsigned sm_count = 132, cc_major = 9, cc_minor = 0, gpu_cores = 16896;
    unsigned l2_cache_bytes = 50u << 20, memory_bus_width_bits = 5120;
    // simulated transfer rates, GB/s = 1e9 bytes/s
    double hbm_bandwidth_gbps = 3000, h2d_bandwidth_gbps = 55, d2h_bandwidth_gbps = 55, p2p_bandwidth_gbps = 370;
    // simulated tensor GEMM rates (fake cuBLASLt), TFLOPS (TOPS for INT8); about 80% of the
    // H100 SXM dense datasheet figures
    double gemm_tf32_tflops = 395, gemm_fp16_tflops = 790, gemm_bf16_tflops = 790, gemm_fp8_tflops = 1480,
           gemm_int8_tops = 1480;
    bool gemm_wrong_results = false;  // the fake cuBLASLt returns wrong products
    double nccl_busbw_gbps = 480;     // fake NCCL all-reduce bus bandwidth (the slowest rank's counts)
    bool nccl_wrong_sums = false;     // every all-reduce result on this GPU's rank comes back one too high
    // simulated FMA throughput of the CUDA cores (TFLOPS), what the fma_* kernels are charged at
    double fp64_tflops = 31, fp32_tflops = 61, fp16_tflops = 122, bf16_tflops = 122;
    bool fma_wrong_results = false;  // every result an fma_* kernel stores is corrupted by one unit
    std::vector<BadCell> bad_memory_cells;
    bool p2p_disabled = false;  // cuDeviceCanAccessPeer says no for every pair with this GPU
    // failure script
    std::optional<uint64_t> lost_after_calls;
    unsigned call_delay_ms = 0;  // every NVML call naming this GPU takes this long (a driver stuck on its lock)
    std::vector<XidEvent> xid_events;
    std::vector<Change> changes;
};

// The node's network as the multi-process NCCL double and the libibverbs double see it. The NICs
// themselves (names, ports, rates, link layers) come from the sysfs fixture tree under GPUVET_ROOT,
// the same tree host.fabric reads; these figures say how fast they go and what is broken.
struct Fabric {
    // NCCL's inter-node bus bandwidth per NIC, as a share of the port's line rate in bytes; the
    // published 46-48 GB/s per 400G NIC is 0.92-0.96 (NVIDIA/nccl-tests#290).
    double efficiency = 0.93;
    double node_factor = 1;              // every NIC of this node at this share (a slow node)
    std::vector<std::string> slow_nics;  // these NICs (by name) at slow_nic_factor (a bad cable)
    double slow_nic_factor = 0.5;
    // "ok"; "no_device": the verbs devices are not usable (a container without /dev/infiniband,
    // libibverbs missing): NCCL's IB plugin finds no device, falls back to sockets, or fails to
    // initialise when NCCL_NET=IB asks for it.
    std::string ib = "ok";
    std::optional<bool> gdr;         // unset: from the fixture (nvidia-peermem, or the open module)
    double gdr_off_factor = 0.36;    // without GPUDirect RDMA: 33 of 93 GB/s (NVIDIA/nccl#1412)
    double socket_busbw_gbps = 2.5;  // NCCL over TCP sockets, the whole node
    // ib_write_bw: the share of the port's line rate an RDMA write stream reaches (perftest on
    // NDR: ~392 of 400 Gbit/s; Azure's floor is 380).
    double write_efficiency = 0.98;
    // The libibverbs double: these NICs' queue pairs fail to reach RTR (a NIC that cannot connect).
    std::vector<std::string> fail_connect;
    // GPU memory through DMA-BUF. The fake libcuda: "ok" (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 1
    // and cuMemGetHandleForAddressRange exports), "unsupported" (the attribute is 0), "refused" (the
    // attribute is 1 but the export answers CUDA_ERROR_NOT_SUPPORTED, as a kernel without dma-buf).
    std::string dmabuf = "ok";
    bool dmabuf_mr = true;  // the libibverbs double: false, ibv_reg_dmabuf_mr refuses (a NIC driver without dma-buf)
};

struct Scenario {
    std::string path;
    Fabric fabric;
    bool kernel_driver_loaded = true;
    std::string driver_version = "570.124.06", nvml_version = "12.570.124.06";
    int cuda_driver_version = 12080;
    int cublaslt_cuda_version = 0;  // the CUDA version the fake cuBLASLt says it was built for; 0: the driver's
    // Wall time the last release of a primary context takes: a real driver drains the work in
    // flight and tears the context down in tens to hundreds of milliseconds, which is when a
    // stopping gpuvet can be interrupted a second time.
    unsigned context_release_ms = 0;
    std::vector<Gpu> gpus;
    // explicit topology overrides, key (min index, max index) -> NVML_TOPOLOGY_* value
    std::map<std::pair<unsigned, unsigned>, int> topology;
    // Scenario time runs time_scale times faster than the wall clock since the scenario was
    // loaded, so a "30 s" event of a 10-minute burn happens in a short test run.
    double time_scale = 1;
    std::chrono::steady_clock::time_point loaded_at = std::chrono::steady_clock::now();
    double seconds() const {
        return time_scale * std::chrono::duration<double>(std::chrono::steady_clock::now() - loaded_at).count();
    }
    std::vector<PcieSwitch> pcie_switches;
};

// Reads GPUVET_FAKE_SCENARIO. On any problem returns nullopt and writes the reason (naming the
// file and key) to `error`.
std::optional<Scenario> load_scenario_from_env(std::string& error);
std::optional<Scenario> load_scenario(const std::string& path, std::string& error);

// Applies a change's keys on top of a GPU (throws std::runtime_error on bad keys; load checks them).
void apply_gpu_keys(Gpu& gpu, const toml::table& t, const std::string& where);

// Helpers shared by both libraries.
bool parse_bus_id(const std::string& s, unsigned& domain, unsigned& bus, unsigned& device);
std::vector<unsigned> parse_cpu_list(const std::string& s);     // throws on bad syntax
int topology_level(const Scenario& s, unsigned a, unsigned b);  // NVML_TOPOLOGY_* value

}  // namespace fake
