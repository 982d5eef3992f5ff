// AmdSmiDevice::sample(): the live facts of one AMD GPU.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "core/amd_throttle.hpp"

#include "gpu/device/amd_backend.hpp"
#include "gpu/device/amd_decode.hpp"

namespace gpuvet {

using namespace amdsmi;
using namespace amd_backend;

namespace {

struct BlockName {
    amdsmi_gpu_block_t block;
    const char* name;
};
// The RAS blocks amd-smi reports, in its order.
const BlockName kBlocks[] = {
    {AMDSMI_GPU_BLOCK_UMC, "UMC"},     {AMDSMI_GPU_BLOCK_SDMA, "SDMA"},
    {AMDSMI_GPU_BLOCK_GFX, "GFX"},     {AMDSMI_GPU_BLOCK_MMHUB, "MMHUB"},
    {AMDSMI_GPU_BLOCK_ATHUB, "ATHUB"}, {AMDSMI_GPU_BLOCK_PCIE_BIF, "PCIE_BIF"},
    {AMDSMI_GPU_BLOCK_HDP, "HDP"},     {AMDSMI_GPU_BLOCK_XGMI_WAFL, "XGMI_WAFL"},
    {AMDSMI_GPU_BLOCK_DF, "DF"},       {AMDSMI_GPU_BLOCK_SMN, "SMN"},
    {AMDSMI_GPU_BLOCK_SEM, "SEM"},     {AMDSMI_GPU_BLOCK_MP0, "MP0"},
    {AMDSMI_GPU_BLOCK_MP1, "MP1"},     {AMDSMI_GPU_BLOCK_FUSE, "FUSE"},
    {AMDSMI_GPU_BLOCK_MCA, "MCA"},     {AMDSMI_GPU_BLOCK_VCN, "VCN"},
    {AMDSMI_GPU_BLOCK_JPEG, "JPEG"},   {AMDSMI_GPU_BLOCK_IH, "IH"},
    {AMDSMI_GPU_BLOCK_MPIO, "MPIO"},
};

constexpr std::uint32_t kMaxProcesses = 1024;
constexpr std::uint32_t kMaxBadPages = 4096;

}  // namespace

DeviceSample AmdSmiDevice::sample(unsigned readings) {
    DeviceSample s;
    s.taken_at = std::chrono::steady_clock::now();
    if (!unopened_.empty()) return s;
    sample_load(s, readings);
    sample_power_clocks(s, readings);
    if (readings & kReadThermal) sample_thermal(s);
    if (readings & kReadPcieLink) sample_pcie(s);
    if (readings & kReadPcieThroughput) {
        s.pcie_rx_bytes_per_s = s.pcie_tx_bytes_per_s =
            Fact<double>::absent("AMD SMI's PCIe throughput takes a second per call: not sampled");
    }
    if (readings & kReadNvLinkThroughput) sample_xgmi(s);
    if (readings & kReadEcc) sample_ecc(s);
    if (readings & kReadRetirement) sample_bad_pages(s);
    if (readings & kReadProcesses) sample_processes(s);
    if (readings & kReadGpm) {
        s.gpm_sm_activity_percent = s.gpm_sm_occupancy_percent = s.gpm_tensor_activity_percent =
            s.gpm_dram_bandwidth_percent = Fact<double>::absent("GPM is NVIDIA's (Hopper and later)");
    }
    return s;
}

void AmdSmiDevice::sample_load(DeviceSample& s, unsigned readings) {
    const AmdSmiApi& a = r_.api;
    if (readings & kReadUtilization) {
        amdsmi_engine_usage_t u{};
        std::string why = r_.call("amdsmi_get_gpu_activity", a.amdsmi_get_gpu_activity, &u);
        s.utilization_gpu_percent = fact_of(why, static_cast<int>(u.gfx_activity));
        s.utilization_memory_percent = fact_of(why, static_cast<int>(u.umc_activity));
    }
    if (readings & kReadMemory) {
        std::uint64_t total = 0, used = 0;
        std::string why =
            r_.call("amdsmi_get_gpu_memory_usage", a.amdsmi_get_gpu_memory_usage, AMDSMI_MEM_TYPE_VRAM, &used);
        s.memory_used_bytes = fact_of(why, used);
        std::string why_total =
            r_.call("amdsmi_get_gpu_memory_total", a.amdsmi_get_gpu_memory_total, AMDSMI_MEM_TYPE_VRAM, &total);
        if (why.empty()) why = why_total;
        s.memory_free_bytes = fact_of(why, total > used ? total - used : 0);
    }
}

void AmdSmiDevice::sample_power_clocks(DeviceSample& s, unsigned readings) {
    const AmdSmiApi& a = r_.api;
    if (readings & kReadPower) {
        amdsmi_power_info_t p{};
        std::string why = r_.call("amdsmi_get_power_info", a.amdsmi_get_power_info, &p);
        // MI300-class GPUs report the current socket power; older ones only the average
        // (0xFFFF or 0 in the other field, as amd-smi shows N/A).
        std::uint32_t w = p.current_socket_power && p.current_socket_power != 0xFFFF ? p.current_socket_power
                                                                                     : p.average_socket_power;
        s.power_draw_w = why.empty() && w != 0xFFFF
                             ? Fact<double>(w)
                             : Fact<double>::absent(why.empty() ? "the driver reports none" : why);
        amdsmi_power_cap_info_t cap{};
        why = r_.call("amdsmi_get_power_cap_info", a.amdsmi_get_power_cap_info, 0u, &cap);
        s.power_limit_w = s.power_enforced_limit_w = fact_of(why, cap.power_cap * 1e-6);
    }
    if (readings & kReadClocks) {
        amdsmi_clk_info_t gfx{}, mem{};
        std::string why = r_.call("amdsmi_get_clock_info", a.amdsmi_get_clock_info, AMDSMI_CLK_TYPE_SYS, &gfx);
        s.clock_sm_mhz = s.clock_graphics_mhz = fact_of(why, static_cast<int>(gfx.clk));
        why = r_.call("amdsmi_get_clock_info", a.amdsmi_get_clock_info, AMDSMI_CLK_TYPE_MEM, &mem);
        s.clock_mem_mhz = fact_of(why, static_cast<int>(mem.clk));
        sample_throttle(s);
    }
}

namespace {

template <class T>
bool na(T v) {
    return v == std::numeric_limits<T>::max();  // AMD SMI's "not available" in the metrics table
}

// A share of the interval in percent from two reads of a residency counter and the accumulation
// counter (amdsmi.h: PVIOL/TVIOL % = residency difference * 100 / accumulation difference).
std::optional<double> residency_percent(std::uint64_t before, std::uint64_t after, std::uint64_t acc_before,
                                        std::uint64_t acc_after) {
    if (acc_after <= acc_before || after < before) return std::nullopt;
    return std::min(100.0, double(after - before) * 100.0 / double(acc_after - acc_before));
}

}  // namespace

// The throttle status and residencies of the driver's GPU metrics table: MI200-class GPUs fill the
// ASIC-independent throttle bits, MI300-class ones (metrics table 1.6 and later) the residency
// counters instead; what a GPU leaves out reads as N/A.
void AmdSmiDevice::sample_throttle(DeviceSample& s) {
    const char* symbol = "amdsmi_get_gpu_metrics_info";
    auto absent_all = [&](const std::string& why) {
        s.amd_throttle_status = Fact<std::uint64_t>::absent(why);
        s.clock_event_reasons = Fact<std::uint64_t>::absent(why);
        s.throttled_power_percent = s.throttled_thermal_percent = Fact<double>::absent(why);
        s.throttle_origin.note = why;
    };
    if (!r_.api.amdsmi_get_gpu_metrics_info) return absent_all(driver_lacks(symbol));
    // On the heap with room for a newer library's longer table, and left to a call that gets no
    // answer (it may still write into it).
    auto buf = std::make_unique<unsigned char[]>(kGpuMetricsBufferBytes);
    std::memset(buf.get(), 0xFF, kGpuMetricsBufferBytes);
    auto* m = reinterpret_cast<amdsmi_gpu_metrics_t*>(buf.get());
    unsigned rc = r_.api.amdsmi_get_gpu_metrics_info(r_.dev, m);
    if (rc == kAmdSmiNoAnswer) buf.release();
    if (std::string why = r_.status(symbol, rc); !why.empty()) return absent_all(why);

    if (!na(m->indep_throttle_status)) {
        s.amd_throttle_status = m->indep_throttle_status;
        s.clock_event_reasons = amd_throttle::as_clock_reasons(m->indep_throttle_status);
    } else {
        const char* why =
            "the GPU's metrics table has no throttle status (MI300-class GPUs report throttle residencies instead)";
        s.amd_throttle_status = s.clock_event_reasons = Fact<std::uint64_t>::absent(why);
    }
    const auto now = std::chrono::steady_clock::now();
    if (na(m->accumulation_counter) || na(m->ppt_residency_acc) || na(m->socket_thm_residency_acc)) {
        const char* why = "the GPU's metrics table has no throttle residency counters (metrics table 1.6 and later)";
        s.throttled_power_percent = s.throttled_thermal_percent = Fact<double>::absent(why);
        s.throttle_origin.note = why;
        return;
    }
    // Thermal: the largest of the socket, voltage-regulator, HBM and processor-hot shares.
    std::uint64_t thermal = m->socket_thm_residency_acc;
    for (std::uint64_t v : {m->vr_thm_residency_acc, m->hbm_thm_residency_acc, m->prochot_residency_acc})
        if (!na(v)) thermal = std::max(thermal, v);
    Residency now_r{m->accumulation_counter, m->ppt_residency_acc, thermal, now};
    if (!residency_) {
        const char* why = "first reading of the throttle residency counters";
        s.throttled_power_percent = s.throttled_thermal_percent = Fact<double>::absent(why);
        s.throttle_origin.note = why;
    } else {
        auto p = residency_percent(residency_->power, now_r.power, residency_->accumulated, now_r.accumulated);
        auto t = residency_percent(residency_->thermal, now_r.thermal, residency_->accumulated, now_r.accumulated);
        const char* why = "the throttle residency counters did not advance";
        s.throttled_power_percent = p ? Fact<double>(*p) : Fact<double>::absent(why);
        s.throttled_thermal_percent = t ? Fact<double>(*t) : Fact<double>::absent(why);
        if (p || t)
            s.throttle_origin = {FigureSource::kCounterDifference,
                                 0,
                                 std::chrono::duration<double>(now - residency_->at).count(),
                                 0,
                                 {}};
        else s.throttle_origin.note = why;
    }
    residency_ = now_r;
}

void AmdSmiDevice::sample_thermal(DeviceSample& s) {
    const AmdSmiApi& a = r_.api;
    auto temp = [&](amdsmi_temperature_type_t t) {
        std::int64_t c = 0;
        std::string why = r_.call("amdsmi_get_temp_metric", a.amdsmi_get_temp_metric, t, AMDSMI_TEMP_CURRENT, &c);
        return fact_of(why, static_cast<int>(c));
    };
    s.temperature_c = temp(AMDSMI_TEMPERATURE_TYPE_HOTSPOT);
    s.temperature_edge_c = temp(AMDSMI_TEMPERATURE_TYPE_EDGE);
    s.temperature_memory_c = temp(AMDSMI_TEMPERATURE_TYPE_VRAM);
    std::int64_t speed = 0;
    std::string why = r_.call("amdsmi_get_gpu_fan_speed", a.amdsmi_get_gpu_fan_speed, 0u, &speed);
    s.fan_percent = fact_of(why, static_cast<int>(speed * 100 / 255));  // AMD's fan speed is 0..255
}

void AmdSmiDevice::sample_pcie(DeviceSample& s) {
    amdsmi_pcie_info_t p{};
    std::string why = r_.call("amdsmi_get_pcie_info", r_.api.amdsmi_get_pcie_info, &p);
    auto gen = amd_decode::pcie_gen_of_mts(p.pcie_metric.pcie_speed);
    s.pcie_gen_current =
        why.empty() && gen ? Fact<int>(*gen) : Fact<int>::absent(why.empty() ? "unknown PCIe speed" : why);
    s.pcie_width_current = fact_of(why, static_cast<int>(p.pcie_metric.pcie_width));
    s.pcie_replay_count = fact_of(why, static_cast<std::uint32_t>(p.pcie_metric.pcie_replay_count));
}

void AmdSmiDevice::sample_xgmi(DeviceSample& s) {
    amdsmi_link_metrics_t m{};
    std::string why = r_.call("amdsmi_get_link_metrics", r_.api.amdsmi_get_link_metrics, &m);
    std::uint64_t read_kb = 0, write_kb = 0;
    for (uint32_t i = 0; i < std::min<uint32_t>(m.num_links, kMaxNumXgmiPhysicalLink); ++i) {
        if (m.links[i].link_type != AMDSMI_LINK_TYPE_XGMI) continue;
        read_kb += m.links[i].read;
        write_kb += m.links[i].write;
    }
    s.xgmi_read_bytes_total = fact_of(why, read_kb * 1024);
    s.xgmi_write_bytes_total = fact_of(why, write_kb * 1024);
    s.nvlink_rx_bytes_total = s.nvlink_tx_bytes_total =
        Fact<std::uint64_t>::absent("AMD GPUs have xGMI links instead (see xgmi_read/write_bytes_total)");
}

void AmdSmiDevice::sample_ecc(DeviceSample& s) {
    const AmdSmiApi& a = r_.api;
    amdsmi_error_count_t total{};
    std::string why = r_.call("amdsmi_get_gpu_total_ecc_count", a.amdsmi_get_gpu_total_ecc_count, &total);
    // AMD SMI counts since the driver loaded; the lifetime record is the bad-page list.
    s.ecc.volatile_corrected = fact_of(why, total.correctable_count);
    s.ecc.volatile_uncorrected = fact_of(why, total.uncorrectable_count);
    s.ecc.aggregate_corrected = s.ecc.aggregate_uncorrected =
        Fact<std::uint64_t>::absent("AMD SMI counts errors since the driver loaded only (the bad pages persist)");
    std::uint64_t mask = 0;
    if (!r_.call("amdsmi_get_gpu_ecc_enabled", a.amdsmi_get_gpu_ecc_enabled, &mask).empty()) return;
    for (const auto& b : kBlocks) {
        if (!(mask & b.block)) continue;
        amdsmi_error_count_t c{};
        std::string w = r_.call("amdsmi_get_gpu_ecc_count", a.amdsmi_get_gpu_ecc_count, b.block, &c);
        s.ras_blocks.push_back(
            {b.name, fact_of(w, c.correctable_count), fact_of(w, c.uncorrectable_count), fact_of(w, c.deferred_count)});
    }
}

void AmdSmiDevice::sample_bad_pages(DeviceSample& s) {
    const char* nvidia_only = "NVIDIA's row remapping: AMD GPUs retire bad pages instead";
    s.remapped_rows_correctable = s.remapped_rows_uncorrectable = Fact<std::uint32_t>::absent(nvidia_only);
    s.remap_pending = s.remap_failure = Fact<bool>::absent(nvidia_only);
    s.retired_pages_single_bit = s.retired_pages_double_bit = Fact<std::uint32_t>::absent(nvidia_only);
    std::vector<amdsmi_retired_page_record_t> pages(kMaxBadPages);
    std::uint32_t n = kMaxBadPages;
    std::string why = r_.call("amdsmi_get_gpu_bad_page_info", r_.api.amdsmi_get_gpu_bad_page_info, &n, pages.data());
    std::uint32_t retired = 0, pending = 0, unreservable = 0;
    for (std::uint32_t i = 0; why.empty() && i < std::min(n, kMaxBadPages); ++i) {
        if (pages[i].status == AMDSMI_MEM_PAGE_STATUS_RESERVED) ++retired;
        else if (pages[i].status == AMDSMI_MEM_PAGE_STATUS_PENDING) ++pending;
        else ++unreservable;
    }
    s.bad_pages_retired = fact_of(why, retired);
    s.bad_pages_pending = fact_of(why, pending);
    s.bad_pages_unreservable = fact_of(why, unreservable);
    s.retired_pages_pending = fact_of(why, pending > 0);
}

void AmdSmiDevice::sample_processes(DeviceSample& s) {
    std::vector<amdsmi_proc_info_t> procs(kMaxProcesses);
    std::uint32_t n = kMaxProcesses;
    std::string why = r_.call("amdsmi_get_gpu_process_list", r_.api.amdsmi_get_gpu_process_list, &n, procs.data());
    if (!why.empty()) {
        s.processes_absent_reason = why;
        return;
    }
    for (std::uint32_t i = 0; i < std::min(n, kMaxProcesses); ++i) {
        GpuProcess p;
        p.pid = procs[i].pid;
        p.used_memory_bytes = procs[i].memory_usage.vram_mem;
        p.type = "compute";  // KFD lists processes with compute queues
        s.processes.push_back(std::move(p));
    }
}

}  // namespace gpuvet
