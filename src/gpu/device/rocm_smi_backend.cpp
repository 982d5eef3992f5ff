// RocmSmiBackend and RocmSmiDevice: the AMD backend over ROCm SMI (docs/amd.md, "Older stacks").
#include "gpu/device/rocm_smi_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "gpu/device/amd_decode.hpp"

namespace gpuvet {

using namespace rsmi;

namespace rocm_smi_backend {

std::string Reader::status(const char* symbol, unsigned rc) {
    if (rc == RSMI_STATUS_SUCCESS) return {};
    std::string why = rsmi_absent_reason(rc);
    if (rc != RSMI_STATUS_NOT_SUPPORTED && rc != RSMI_STATUS_NOT_YET_IMPLEMENTED) {
        std::string e = std::string(symbol) + " failed: " + api.error_name(rc) + ": " + why;
        if (std::find(errors.begin(), errors.end(), e) == errors.end()) errors.push_back(e);
    }
    return why;
}

}  // namespace rocm_smi_backend

namespace {

template <class T>
Fact<T> fact_of(const std::string& why, T value) {
    return why.empty() ? Fact<T>(std::move(value)) : Fact<T>::absent(why);
}

Fact<std::string> text_fact(const std::string& why, const char* buf, std::size_t size) {
    if (!why.empty()) return Fact<std::string>::absent(why);
    std::string s = amd_decode::text_of(buf, size);
    if (s.empty() || s == "N/A") return Fact<std::string>::absent("the driver reports none");
    return s;
}

const char* const kAmdSmiOnly = "ROCm SMI does not report it (AMD SMI, ROCm 6 and later, does)";

struct BlockName {
    rsmi_gpu_block_t block;
    const char* name;
};
const BlockName kBlocks[] = {
    {RSMI_GPU_BLOCK_UMC, "UMC"},     {RSMI_GPU_BLOCK_SDMA, "SDMA"},
    {RSMI_GPU_BLOCK_GFX, "GFX"},     {RSMI_GPU_BLOCK_MMHUB, "MMHUB"},
    {RSMI_GPU_BLOCK_ATHUB, "ATHUB"}, {RSMI_GPU_BLOCK_PCIE_BIF, "PCIE_BIF"},
    {RSMI_GPU_BLOCK_HDP, "HDP"},     {RSMI_GPU_BLOCK_XGMI_WAFL, "XGMI_WAFL"},
    {RSMI_GPU_BLOCK_DF, "DF"},       {RSMI_GPU_BLOCK_SMN, "SMN"},
    {RSMI_GPU_BLOCK_SEM, "SEM"},     {RSMI_GPU_BLOCK_MP0, "MP0"},
    {RSMI_GPU_BLOCK_MP1, "MP1"},     {RSMI_GPU_BLOCK_FUSE, "FUSE"},
};

constexpr std::uint32_t kMaxPages = 4096;
constexpr std::uint32_t kMaxProcesses = 1024;

// The frequency levels of either layout, copied out: the number of levels, the current one, Hz.
struct Levels {
    std::uint32_t n = 0, current = 0;
    std::uint64_t hz[kMaxNumFrequencies] = {};
    std::uint32_t lanes[kMaxNumFrequencies] = {};
};

template <class F>
Levels levels_of(const F& f) {
    Levels l;
    l.n = std::min(f.num_supported, kMaxNumFrequencies);
    l.current = f.current;
    std::copy(std::begin(f.frequency), std::end(f.frequency), l.hz);
    return l;
}

std::uint64_t max_of(const Levels& l) { return l.n ? *std::max_element(l.hz, l.hz + l.n) : 0; }

}  // namespace

RocmSmiDevice::RocmSmiDevice(const RocmSmiSession& s, int index, int count)
    : session_(s), index_(index), count_(count), r_{s.api(), static_cast<std::uint32_t>(index), {}} {
    if (index < 0 || index >= count) unopened_ = "ROCm SMI lists no GPU " + std::to_string(index);
}

DeviceFacts RocmSmiDevice::describe() {
    DeviceFacts f;
    f.vendor = std::string("AMD");
    if (!unopened_.empty()) {
        f.name = Fact<std::string>::absent(unopened_);
        return f;
    }
    read_identity(f);
    read_limits(f);
    read_links(f);
    return f;
}

void RocmSmiDevice::read_identity(DeviceFacts& f) {
    const RocmSmiApi& a = r_.api;
    char name[256] = {0};
    f.name = text_fact(r_.call("rsmi_dev_name_get", a.rsmi_dev_name_get, name, sizeof name - 1), name, sizeof name);
    std::uint16_t id = 0, vendor = 0, sub = 0, sub_vendor = 0;
    std::string why = r_.call("rsmi_dev_id_get", a.rsmi_dev_id_get, &id);
    f.pci_device_id = fact_of(why, static_cast<std::uint32_t>(id));
    // Each call before the value it fills is read: a function's arguments are evaluated in no set order.
    why = r_.call("rsmi_dev_vendor_id_get", a.rsmi_dev_vendor_id_get, &vendor);
    f.pci_vendor_id = fact_of(why, static_cast<std::uint32_t>(vendor));
    why = r_.call("rsmi_dev_subsystem_id_get", a.rsmi_dev_subsystem_id_get, &sub);
    if (why.empty()) why = r_.call("rsmi_dev_subsystem_vendor_id_get", a.rsmi_dev_subsystem_vendor_id_get, &sub_vendor);
    f.pci_subsystem_id = fact_of(why, static_cast<std::uint32_t>(sub) << 16 | sub_vendor);
    char serial[64] = {0};
    why = r_.call("rsmi_dev_serial_number_get", a.rsmi_dev_serial_number_get, serial,
                  static_cast<std::uint32_t>(sizeof serial - 1));
    f.serial = text_fact(why, serial, sizeof serial);
    std::uint64_t unique = 0;
    std::string why_unique = r_.call("rsmi_dev_unique_id_get", a.rsmi_dev_unique_id_get, &unique);
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(unique));
    if (!f.serial && why_unique.empty()) f.serial = std::string(hex);  // the ASIC's serial where the board has none
    f.uuid = fact_of(why_unique, std::string(hex));
    char vbios[64] = {0};
    why = r_.call("rsmi_dev_vbios_version_get", a.rsmi_dev_vbios_version_get, vbios,
                  static_cast<std::uint32_t>(sizeof vbios - 1));
    f.vbios_version = text_fact(why, vbios, sizeof vbios);
    std::uint64_t bdf = 0;
    why = r_.call("rsmi_dev_pci_id_get", a.rsmi_dev_pci_id_get, &bdf);
    f.pci_bus_id = fact_of(why, amd_decode::pci_bus_id_of(bdf));
    std::uint32_t numa = 0;
    why = r_.call("rsmi_topo_get_numa_node_number", a.rsmi_topo_get_numa_node_number, &numa);
    f.numa_node = fact_of(why, static_cast<int>(numa));
    f.gfx_target = f.architecture = Fact<std::string>::absent(kAmdSmiOnly);
    f.compute_units = Fact<int>::absent(kAmdSmiOnly);
    f.board_part_number = f.form_factor = Fact<std::string>::absent(kAmdSmiOnly);
    f.compute_capability = Fact<std::string>::absent("a CUDA notion: AMD GPUs have a gfx target instead");
    f.inforom_image_version = Fact<std::string>::absent("an NVIDIA board's firmware: AMD boards carry a VBIOS");
    f.cpu_affinity = Fact<std::string>::absent("ROCm SMI reports the NUMA node only");
}

void RocmSmiDevice::read_limits(DeviceFacts& f) {
    const RocmSmiApi& a = r_.api;
    std::uint64_t total = 0;
    std::string why_total =
        r_.call("rsmi_dev_memory_total_get", a.rsmi_dev_memory_total_get, RSMI_MEM_TYPE_VRAM, &total);
    f.memory_total_bytes = fact_of(why_total, total);
    f.memory_reserved_bytes = Fact<std::uint64_t>::absent("ROCm SMI reports no reserved VRAM");
    int gen = 0, width = 0, gen_max = 0, width_max = 0;
    std::string why = pcie_levels(gen, width, gen_max, width_max);
    f.pcie_gen_max_gpu =
        why.empty() && gen_max ? Fact<int>(gen_max) : Fact<int>::absent(why.empty() ? "unknown PCIe speed" : why);
    f.pcie_width_max = fact_of(why, width_max);
    f.pcie_gen_max_host = Fact<int>::absent("ROCm SMI reports the GPU's link levels only");
    std::uint64_t def = 0, max = 0, min = 0;
    why = r_.call("rsmi_dev_power_cap_default_get", a.rsmi_dev_power_cap_default_get, &def);
    f.power_default_limit_w = fact_of(why, double(def) * 1e-6);
    why = r_.call("rsmi_dev_power_cap_range_get", a.rsmi_dev_power_cap_range_get, 0u, &max, &min);
    f.power_max_limit_w = fact_of(why, double(max) * 1e-6);
    f.power_min_limit_w = fact_of(why, double(min) * 1e-6);
    int cur = 0, top = 0;
    why = clock_levels(RSMI_CLK_TYPE_SYS, cur, top);
    f.clock_sm_max_mhz = fact_of(why, top);
    why = clock_levels(RSMI_CLK_TYPE_MEM, cur, top);
    f.clock_mem_max_mhz = fact_of(why, top);
    auto threshold = [&](rsmi_temperature_type_t t, rsmi_temperature_metric_t m) {
        std::int64_t milli = 0;
        std::string w =
            r_.call("rsmi_dev_temp_metric_get", a.rsmi_dev_temp_metric_get, static_cast<std::uint32_t>(t), m, &milli);
        return fact_of(w, static_cast<int>(milli / 1000));
    };
    f.temperature_slowdown_c = threshold(RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CRITICAL);
    f.temperature_shutdown_c = threshold(RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_EMERGENCY);
    f.temperature_memory_max_c = threshold(RSMI_TEMP_TYPE_MEMORY, RSMI_TEMP_CRITICAL);
    std::uint64_t mask = 0;
    why = r_.call("rsmi_dev_ecc_enabled_get", a.rsmi_dev_ecc_enabled_get, &mask);
    f.ecc_enabled = fact_of(why, (mask & RSMI_GPU_BLOCK_UMC) != 0);
    f.ecc_pending = Fact<bool>::absent("ROCm SMI reports no pending ECC mode");
    char part[64] = {0};
    why = r_.call("rsmi_dev_compute_partition_get", a.rsmi_dev_compute_partition_get, part,
                  static_cast<std::uint32_t>(sizeof part - 1));
    f.compute_partition = text_fact(why, part, sizeof part);
    char mpart[64] = {0};
    why = r_.call("rsmi_dev_memory_partition_get", a.rsmi_dev_memory_partition_get, mpart,
                  static_cast<std::uint32_t>(sizeof mpart - 1));
    f.memory_partition = text_fact(why, mpart, sizeof mpart);
    f.mig_enabled = Fact<bool>::absent("an NVIDIA mode: AMD GPUs have compute and memory partitions instead");
    f.persistence_mode = Fact<bool>::absent("an NVIDIA mode: the amdgpu driver stays loaded");
    f.compute_mode = Fact<std::string>::absent("an NVIDIA mode");
    f.virtualization_mode = Fact<std::string>::absent("ROCm SMI does not report it");
}

// ROCm SMI names the link type between two GPUs, not the state of each xGMI link: a link whose
// type is xGMI is listed, its training unread.
void RocmSmiDevice::read_links(DeviceFacts& f) {
    f.nvlink_absent_reason = "AMD GPUs have xGMI links instead (see xgmi_links)";
    const RocmSmiApi& a = r_.api;
    if (!a.rsmi_topo_get_link_type) {
        f.xgmi_absent_reason = driver_lacks("rsmi_topo_get_link_type");
        return;
    }
    for (int j = 0; j < count_; ++j) {
        if (j == index_) continue;
        std::uint64_t hops = 0;
        RSMI_IO_LINK_TYPE type{};
        if (!r_.call("rsmi_topo_get_link_type", a.rsmi_topo_get_link_type, static_cast<std::uint32_t>(j), &hops, &type)
                 .empty() ||
            type != RSMI_IOLINK_TYPE_XGMI)
            continue;
        XgmiLinkInfo l;
        l.link = static_cast<int>(f.xgmi_links.size());
        // The far end's bus id: the call names that GPU, not this one.
        std::uint64_t bdf = 0;
        std::string why = driver_lacks("rsmi_dev_pci_id_get");
        if (a.rsmi_dev_pci_id_get) {
            unsigned rc = a.rsmi_dev_pci_id_get(static_cast<std::uint32_t>(j), &bdf);
            why = rc == RSMI_STATUS_SUCCESS ? "" : rsmi_absent_reason(rc);
        }
        l.remote_pci_bus_id = fact_of(why, amd_decode::pci_bus_id_of(bdf));
        const char* unread = "ROCm SMI reports the link's type, not whether it trained (AMD SMI's link metrics do)";
        l.active = Fact<bool>::absent(unread);
        l.bit_rate_gbps = l.max_bandwidth_gbps = Fact<double>::absent(unread);
        f.xgmi_links.push_back(std::move(l));
    }
}

std::string RocmSmiDevice::clock_levels(rsmi_clk_type_t t, int& current_mhz, int& max_mhz) {
    const char* symbol = "rsmi_dev_gpu_clk_freq_get";
    if (!r_.api.rsmi_dev_gpu_clk_freq_get) return driver_lacks(symbol);
    // On the heap and left to a call that gets no answer: its size follows the library's version.
    auto v7 = std::make_unique<rsmi_frequencies_v7_t>();
    auto* arg = reinterpret_cast<rsmi_frequencies_t*>(v7.get());  // the larger of the two layouts
    unsigned rc = r_.api.rsmi_dev_gpu_clk_freq_get(r_.dev, t, arg);
    if (rc == kRocmSmiNoAnswer) v7.release();
    if (std::string why = r_.status(symbol, rc); !why.empty()) return why;
    Levels l = session_.layout() == RsmiFrequenciesLayout::V7 ? levels_of(*v7) : levels_of(*arg);
    if (l.n == 0 || l.current >= l.n) return "the driver lists no clock levels";
    current_mhz = static_cast<int>(l.hz[l.current] / 1000000);
    max_mhz = static_cast<int>(max_of(l) / 1000000);
    return {};
}

std::string RocmSmiDevice::pcie_levels(int& gen_current, int& width_current, int& gen_max, int& width_max) {
    const char* symbol = "rsmi_dev_pci_bandwidth_get";
    if (!r_.api.rsmi_dev_pci_bandwidth_get) return driver_lacks(symbol);
    auto v7 = std::make_unique<rsmi_pcie_bandwidth_v7_t>();
    auto* arg = reinterpret_cast<rsmi_pcie_bandwidth_t*>(v7.get());
    unsigned rc = r_.api.rsmi_dev_pci_bandwidth_get(r_.dev, arg);
    if (rc == kRocmSmiNoAnswer) v7.release();
    if (std::string why = r_.status(symbol, rc); !why.empty()) return why;
    bool v7_layout = session_.layout() == RsmiFrequenciesLayout::V7;
    Levels l = v7_layout ? levels_of(v7->transfer_rate) : levels_of(arg->transfer_rate);
    const std::uint32_t* lanes = v7_layout ? v7->lanes : arg->lanes;
    if (l.n == 0 || l.current >= l.n) return "the driver lists no PCIe levels";
    auto gen = [](std::uint64_t transfers) { return amd_decode::pcie_gen_of_mts(std::uint32_t(transfers / 1000000)); };
    gen_current = gen(l.hz[l.current]).value_or(0);
    width_current = static_cast<int>(lanes[l.current]);
    gen_max = gen(max_of(l)).value_or(0);
    width_max = static_cast<int>(*std::max_element(lanes, lanes + l.n));
    return {};
}

DeviceSample RocmSmiDevice::sample(unsigned readings) {
    DeviceSample s;
    s.taken_at = std::chrono::steady_clock::now();
    if (!unopened_.empty()) return s;
    const RocmSmiApi& a = r_.api;
    if (readings & kReadUtilization) {
        std::uint32_t busy = 0, mem = 0;
        std::string why = r_.call("rsmi_dev_busy_percent_get", a.rsmi_dev_busy_percent_get, &busy);
        s.utilization_gpu_percent = fact_of(why, static_cast<int>(busy));
        why = r_.call("rsmi_dev_memory_busy_percent_get", a.rsmi_dev_memory_busy_percent_get, &mem);
        s.utilization_memory_percent = fact_of(why, static_cast<int>(mem));
    }
    if (readings & kReadMemory) {
        std::uint64_t total = 0, used = 0;
        std::string why = r_.call("rsmi_dev_memory_usage_get", a.rsmi_dev_memory_usage_get, RSMI_MEM_TYPE_VRAM, &used);
        s.memory_used_bytes = fact_of(why, used);
        std::string why_total =
            r_.call("rsmi_dev_memory_total_get", a.rsmi_dev_memory_total_get, RSMI_MEM_TYPE_VRAM, &total);
        if (why.empty()) why = why_total;
        s.memory_free_bytes = fact_of(why, total > used ? total - used : 0);
    }
    if (readings & kReadPower) {
        std::uint64_t uw = 0, cap = 0;
        std::string why = r_.call("rsmi_dev_power_ave_get", a.rsmi_dev_power_ave_get, 0u, &uw);
        s.power_draw_w = fact_of(why, double(uw) * 1e-6);
        why = r_.call("rsmi_dev_power_cap_get", a.rsmi_dev_power_cap_get, 0u, &cap);
        s.power_limit_w = s.power_enforced_limit_w = fact_of(why, double(cap) * 1e-6);
    }
    if (readings & kReadClocks) {
        int cur = 0, top = 0;
        std::string why = clock_levels(RSMI_CLK_TYPE_SYS, cur, top);
        s.clock_sm_mhz = s.clock_graphics_mhz = fact_of(why, cur);
        why = clock_levels(RSMI_CLK_TYPE_MEM, cur, top);
        s.clock_mem_mhz = fact_of(why, cur);
        const char* why_throttle = "ROCm SMI's readings carry no throttle status (AMD SMI's GPU metrics table does)";
        s.clock_event_reasons = s.amd_throttle_status = Fact<std::uint64_t>::absent(why_throttle);
        s.throttled_power_percent = s.throttled_thermal_percent = Fact<double>::absent(why_throttle);
        s.throttle_origin.note = why_throttle;
    }
    if (readings & kReadThermal) {
        auto temp = [&](rsmi_temperature_type_t t) {
            std::int64_t milli = 0;
            std::string w = r_.call("rsmi_dev_temp_metric_get", a.rsmi_dev_temp_metric_get,
                                    static_cast<std::uint32_t>(t), RSMI_TEMP_CURRENT, &milli);
            return fact_of(w, static_cast<int>(milli / 1000));
        };
        s.temperature_c = temp(RSMI_TEMP_TYPE_JUNCTION);
        s.temperature_edge_c = temp(RSMI_TEMP_TYPE_EDGE);
        s.temperature_memory_c = temp(RSMI_TEMP_TYPE_MEMORY);
        std::int64_t speed = 0;
        std::string why = r_.call("rsmi_dev_fan_speed_get", a.rsmi_dev_fan_speed_get, 0u, &speed);
        s.fan_percent = fact_of(why, static_cast<int>(speed * 100 / 255));  // RSMI_MAX_FAN_SPEED is 255
    }
    if (readings & kReadPcieLink) {
        int gen = 0, width = 0, gen_max = 0, width_max = 0;
        std::string why = pcie_levels(gen, width, gen_max, width_max);
        s.pcie_gen_current =
            why.empty() && gen ? Fact<int>(gen) : Fact<int>::absent(why.empty() ? "unknown PCIe speed" : why);
        s.pcie_width_current = fact_of(why, width);
        std::uint64_t replays = 0;
        why = r_.call("rsmi_dev_pci_replay_counter_get", a.rsmi_dev_pci_replay_counter_get, &replays);
        s.pcie_replay_count = fact_of(why, static_cast<std::uint32_t>(replays));
    }
    if (readings & kReadPcieThroughput)
        s.pcie_rx_bytes_per_s = s.pcie_tx_bytes_per_s =
            Fact<double>::absent("ROCm SMI's PCIe throughput takes a second per call: not sampled");
    if (readings & kReadNvLinkThroughput) {
        s.xgmi_read_bytes_total = s.xgmi_write_bytes_total = Fact<std::uint64_t>::absent(kAmdSmiOnly);
        s.nvlink_rx_bytes_total = s.nvlink_tx_bytes_total =
            Fact<std::uint64_t>::absent("AMD GPUs have xGMI links instead (see xgmi_read/write_bytes_total)");
    }
    if (readings & kReadEcc) sample_ecc(s);
    if (readings & kReadRetirement) sample_bad_pages(s);
    if (readings & kReadProcesses) sample_processes(s);
    if (readings & kReadGpm)
        s.gpm_sm_activity_percent = s.gpm_sm_occupancy_percent = s.gpm_tensor_activity_percent =
            s.gpm_dram_bandwidth_percent = Fact<double>::absent("GPM is NVIDIA's (Hopper and later)");
    return s;
}

void RocmSmiDevice::sample_ecc(DeviceSample& s) {
    const RocmSmiApi& a = r_.api;
    std::uint64_t mask = 0;
    std::string why = r_.call("rsmi_dev_ecc_enabled_get", a.rsmi_dev_ecc_enabled_get, &mask);
    std::uint64_t corrected = 0, uncorrected = 0;
    for (const auto& b : kBlocks) {
        if (!why.empty() || !(mask & b.block)) continue;
        rsmi_error_count_t c{};
        std::string w = r_.call("rsmi_dev_ecc_count_get", a.rsmi_dev_ecc_count_get, b.block, &c);
        if (!w.empty()) why = w;
        corrected += c.correctable_err;
        uncorrected += c.uncorrectable_err;
        s.ras_blocks.push_back({b.name, fact_of(w, c.correctable_err), fact_of(w, c.uncorrectable_err),
                                Fact<std::uint64_t>::absent("ROCm SMI counts no deferred errors")});
    }
    s.ecc.volatile_corrected = fact_of(why, corrected);
    s.ecc.volatile_uncorrected = fact_of(why, uncorrected);
    s.ecc.aggregate_corrected = s.ecc.aggregate_uncorrected =
        Fact<std::uint64_t>::absent("ROCm SMI counts errors since the driver loaded only (the bad pages persist)");
}

void RocmSmiDevice::sample_bad_pages(DeviceSample& s) {
    const char* nvidia_only = "NVIDIA's row remapping: AMD GPUs retire bad pages instead";
    s.remapped_rows_correctable = s.remapped_rows_uncorrectable = Fact<std::uint32_t>::absent(nvidia_only);
    s.remap_pending = s.remap_failure = Fact<bool>::absent(nvidia_only);
    s.retired_pages_single_bit = s.retired_pages_double_bit = Fact<std::uint32_t>::absent(nvidia_only);
    std::vector<rsmi_retired_page_record_t> pages(kMaxPages);
    std::uint32_t n = kMaxPages;
    std::string why =
        r_.call("rsmi_dev_memory_reserved_pages_get", r_.api.rsmi_dev_memory_reserved_pages_get, &n, pages.data());
    std::uint32_t retired = 0, pending = 0, unreservable = 0;
    for (std::uint32_t i = 0; why.empty() && i < std::min(n, kMaxPages); ++i) {
        if (pages[i].status == RSMI_MEM_PAGE_STATUS_RESERVED) ++retired;
        else if (pages[i].status == RSMI_MEM_PAGE_STATUS_PENDING) ++pending;
        else ++unreservable;
    }
    s.bad_pages_retired = fact_of(why, retired);
    s.bad_pages_pending = fact_of(why, pending);
    s.bad_pages_unreservable = fact_of(why, unreservable);
    s.retired_pages_pending = fact_of(why, pending > 0);
}

// KFD's processes on every GPU, then which GPUs each one uses.
void RocmSmiDevice::sample_processes(DeviceSample& s) {
    const RocmSmiApi& a = r_.api;
    if (!a.rsmi_compute_process_info_get || !a.rsmi_compute_process_gpus_get) {
        s.processes_absent_reason = driver_lacks("rsmi_compute_process_info_get");
        return;
    }
    std::vector<rsmi_process_info_t> procs(kMaxProcesses);
    std::uint32_t n = kMaxProcesses;
    if (std::string why = r_.status("rsmi_compute_process_info_get", a.rsmi_compute_process_info_get(procs.data(), &n));
        !why.empty()) {
        s.processes_absent_reason = why;
        return;
    }
    for (std::uint32_t i = 0; i < std::min(n, kMaxProcesses); ++i) {
        std::vector<std::uint32_t> gpus(static_cast<std::size_t>(std::max(count_, 1)));
        std::uint32_t k = static_cast<std::uint32_t>(gpus.size());
        if (!r_.status("rsmi_compute_process_gpus_get",
                       a.rsmi_compute_process_gpus_get(procs[i].process_id, gpus.data(), &k))
                 .empty())
            continue;
        gpus.resize(std::min<std::size_t>(k, gpus.size()));
        if (std::find(gpus.begin(), gpus.end(), static_cast<std::uint32_t>(index_)) == gpus.end()) continue;
        GpuProcess p;
        p.pid = procs[i].process_id;
        p.used_memory_bytes = procs[i].vram_usage;
        p.type = "compute";
        s.processes.push_back(std::move(p));
    }
}

const RocmSmiBackend& RocmSmiBackend::shared() {
    static RocmSmiBackend backend(RocmSmiSession::shared());
    return backend;
}

SystemFacts RocmSmiBackend::system() const {
    SystemFacts s;
    s.cuda_driver_version = Fact<int>::absent("CUDA is NVIDIA's: AMD GPUs run HIP (see gpu.software)");
    if (!usable()) {
        s.driver_version = s.library_version = Fact<std::string>::absent(absent_reason());
        return s;
    }
    const RocmSmiApi& a = session_.api();
    s.library_version = session_.version().empty() ? Fact<std::string>::absent(driver_lacks("rsmi_version_get"))
                                                   : Fact<std::string>(session_.version());
    char buf[64] = {0};
    if (!a.rsmi_version_str_get) {
        s.driver_version = Fact<std::string>::absent(driver_lacks("rsmi_version_str_get"));
    } else if (unsigned rc = a.rsmi_version_str_get(RSMI_SW_COMP_DRIVER, buf, sizeof buf - 1);
               rc != RSMI_STATUS_SUCCESS) {
        s.driver_version = Fact<std::string>::absent(rsmi_absent_reason(rc));
    } else {
        s.driver_version = amd_decode::text_of(buf, sizeof buf);
    }
    return s;
}

Fact<int> RocmSmiBackend::device_count() const {
    if (!usable()) return Fact<int>::absent(absent_reason());
    return session_.gpu_count();
}

std::unique_ptr<GpuDevice> RocmSmiBackend::open(int index) const {
    return std::make_unique<RocmSmiDevice>(session_, index, session_.gpu_count());
}

Fact<std::string> RocmSmiBackend::pcie_path(const GpuDevice& a, const GpuDevice& b) const {
    const RocmSmiApi& api = session_.api();
    if (!dynamic_cast<const RocmSmiDevice*>(&a) || !dynamic_cast<const RocmSmiDevice*>(&b))
        return Fact<std::string>::absent("not a ROCm SMI GPU");
    if (!api.rsmi_topo_get_link_type) return Fact<std::string>::absent(driver_lacks("rsmi_topo_get_link_type"));
    std::uint64_t hops = 0;
    RSMI_IO_LINK_TYPE type{};
    if (unsigned rc = api.rsmi_topo_get_link_type(a.index(), b.index(), &hops, &type))
        return Fact<std::string>::absent(rsmi_absent_reason(rc));
    if (type == RSMI_IOLINK_TYPE_XGMI) return std::string("XGMI");
    if (type == RSMI_IOLINK_TYPE_PCIEXPRESS) return "PCIE " + std::to_string(hops) + " hops";
    return Fact<std::string>::absent("the driver does not say how these GPUs are joined");
}

std::string RocmSmiBackend::pcie_paths_absent_reason() const {
    if (!usable()) return absent_reason();
    return session_.api().rsmi_topo_get_link_type ? "" : driver_lacks("rsmi_topo_get_link_type");
}

namespace {
class NoWatch final : public EventWatch {
public:
    const std::string& absent_reason() const override { return reason_; }
    std::optional<DeviceEvent> next(std::chrono::milliseconds) override { return std::nullopt; }

private:
    std::string reason_ = "AMD GPUs: hardware errors are read from the RAS counters of each sample, not as events";
};
}  // namespace

std::unique_ptr<EventWatch> RocmSmiBackend::watch_critical_errors(const std::vector<const GpuDevice*>&) const {
    return std::make_unique<NoWatch>();
}

}  // namespace gpuvet
