// The families of export's page, in the order they are written: their names, types and HELP
// texts in one place. The DCGM_* ones are dcgm-exporter's (etc/default-counters.csv and
// etc/dcp-metrics-included.csv), for NVIDIA GPUs; the gpu_*/pcie_* ones the AMD Device Metrics
// Exporter's, for AMD GPUs; the gpuvet_* ones are gpuvet's own, for both. Internal to export_metrics.cpp.
#pragma once
#include <algorithm>
#include <vector>

#include "monitor/prometheus_text.hpp"

namespace gpuvet::export_page {

using prom::Family;

struct Page {
    Family sm_clock{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", {}};
    Family mem_clock{"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", {}};
    Family mem_temp{"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", {}};
    Family gpu_temp{"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", {}};
    Family power{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", {}};
    Family replay{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", {}};
    Family util{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", {}};
    Family mem_util{"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", {}};
    Family xid{"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", {}};
    Family fb_free{"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", {}};
    Family fb_used{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", {}};
    Family fb_reserved{"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", {}};
    Family sbe_vol{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.", {}};
    Family dbe_vol{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.", {}};
    Family sbe_agg{"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter", "Total number of single-bit persistent ECC errors.", {}};
    Family dbe_agg{"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter", "Total number of double-bit persistent ECC errors.", {}};
    Family retired_sbe{
        "DCGM_FI_DEV_RETIRED_SBE", "counter", "Total number of retired pages due to single-bit errors.", {}};
    Family retired_dbe{
        "DCGM_FI_DEV_RETIRED_DBE", "counter", "Total number of retired pages due to double-bit errors.", {}};
    Family retired_pending{"DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement.", {}};
    Family nvlink{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                  "counter",
                  "Total number of NVLink bandwidth counters for all lanes.",
                  {}};
    Family rows_unc{
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors", {}};
    Family rows_cor{
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors", {}};
    Family remap_fail{"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", {}};
    Family sm_active{"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.", {}};
    Family sm_occupancy{"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.", {}};
    Family tensor{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", {}};
    Family dram{"DCGM_FI_PROF_DRAM_ACTIVE",
                "gauge",
                "Ratio of cycles the device memory interface is active sending or receiving data.",
                {}};
    Family pcie_tx{"DCGM_FI_PROF_PCIE_TX_BYTES",
                   "gauge",
                   "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
                   "payloads - in bytes per second.",
                   {}};
    Family pcie_rx{"DCGM_FI_PROF_PCIE_RX_BYTES",
                   "gauge",
                   "The rate of data received over the PCIe bus - including both protocol headers and data "
                   "payloads - in bytes per second.",
                   {}};
    // The AMD Device Metrics Exporter's names for AMD GPUs (ROCm/device-metrics-exporter at
    // afd0fe81, pkg/amdgpu/gpuagent/gpuagent_gpu_metrics.go), so its dashboards work unchanged.
    Family amd_gfx{"gpu_gfx_activity", "gauge", "Graphics engine usage percentage (0 - 100).", {}};
    Family amd_umc{"gpu_umc_activity", "gauge", "Memory engine usage percentage (0 - 100).", {}};
    Family amd_edge{"gpu_edge_temperature", "gauge", "Edge temperature value in Celsius.", {}};
    Family amd_junction{
        "gpu_junction_temperature", "gauge", "Hotspot (aka junction) temperature value in Celsius.", {}};
    Family amd_mem_temp{"gpu_memory_temperature", "gauge", "Memory temperature value in Celsius.", {}};
    Family amd_power{"gpu_power_usage", "gauge", "GPU Power usage in Watts.", {}};
    Family amd_clock{"gpu_clock", "gauge", "List of current GPU clock frequencies in MHz.", {}};
    Family amd_vram_total{"gpu_total_vram", "gauge", "Total VRAM memory of the GPU (in MB).", {}};
    Family amd_vram_used{"gpu_used_vram", "gauge", "Total VRAM memory used (in MB).", {}};
    Family amd_vram_free{"gpu_free_vram", "gauge", "Total VRAM memory free (in MB).", {}};
    Family amd_ecc_cor{"gpu_ecc_correct_total", "gauge", "Total Correctable ECC error count.", {}};
    Family amd_ecc_unc{"gpu_ecc_uncorrect_total", "gauge", "Total Uncorrectable ECC error count.", {}};
    // gpu_ecc_correct_<block>, gpu_ecc_uncorrect_<block>, gpu_ecc_deferred_<block>: one family per
    // RAS block the GPU has, made as the blocks are met (export_metrics.cpp).
    std::vector<Family> amd_ecc_blocks;
    Family amd_replay{"pcie_replay_count", "gauge", "Total number of PCIe replays (NAKs).", {}};
    Family amd_pcie_speed{"pcie_speed", "gauge", "Current PCIe speed capable in GT/s.", {}};
    Family amd_pcie_max_speed{"pcie_max_speed", "gauge", "Maximum capable PCIe speed in GT/s.", {}};
    Family amd_xgmi_rx{"gpu_xgmi_link_rx", "gauge", "Accumulated XGMI Link Data Read in KB.", {}};
    Family amd_xgmi_tx{"gpu_xgmi_link_tx", "gauge", "Accumulated XGMI Link Data Write in KB.", {}};
    Family amd_ppt{
        "gpu_violation_ppt_residency_percentage", "gauge", "Package Power Tracking Percentage Violation Counter.", {}};
    // gpuvet's own.
    Family lost{
        "gpuvet_gpu_lost", "gauge", "1 when the GPU fell off the bus (its other series are dropped), else 0.", {}};
    Family reason{"gpuvet_clock_event_reason_active",
                  "gauge",
                  "1 while NVML reports this clock-event (throttle) reason for the GPU, else 0.",
                  {}};
    Family mig{"gpuvet_mig_mode",
               "gauge",
               "1 when MIG is enabled on the GPU (per-instance metrics are not exported), else 0.",
               {}};
    Family power_limit{"gpuvet_power_limit_watts", "gauge", "Power management limit now set (in W).", {}};
    Family power_enforced{"gpuvet_power_enforced_limit_watts", "gauge", "Power limit the driver enforces (in W).", {}};
    Family power_default{"gpuvet_power_default_limit_watts", "gauge", "Default power limit of the board (in W).", {}};
    Family power_max{"gpuvet_power_max_limit_watts", "gauge", "Highest power limit the board accepts (in W).", {}};
    Family pcie_gen{"gpuvet_pcie_link_generation", "gauge", "Current PCIe link generation.", {}};
    Family pcie_gen_max{
        "gpuvet_pcie_link_generation_max",
        "gauge",
        "Highest PCIe generation: of the GPU (limit=\"gpu\"), of the GPU and its slot (limit=\"link\").",
        {}};
    Family pcie_width{"gpuvet_pcie_link_width", "gauge", "Current PCIe link width (lanes).", {}};
    Family pcie_width_max{
        "gpuvet_pcie_link_width_max", "gauge", "Widest PCIe link the GPU and its slot allow (lanes).", {}};
    Family nvlink_rx{
        "gpuvet_nvlink_rx_bytes_per_second", "gauge", "NVLink data received over all links (bytes/s).", {}};
    Family nvlink_tx{"gpuvet_nvlink_tx_bytes_per_second", "gauge", "NVLink data sent over all links (bytes/s).", {}};
    Family held{"gpuvet_clocks_held_down_percent",
                "gauge",
                "Share of the last sampling interval the power cap or a thermal slowdown held the clocks down "
                "(violation counters, in %).",
                {}};
    Family origin{"gpuvet_figure_origin_info",
                  "gauge",
                  "How a figure of the last sample was obtained: interval_mean (the driver's samples over the "
                  "interval), counter_difference (energy or violation counters) or point_read (at the instant); "
                  "always 1.",
                  {}};
    Family verdict{"gpuvet_check_verdict",
                   "gauge",
                   "Verdict of the last gpuvet check report per check and GPU: 1 for its verdict, 0 for the others.",
                   {}};
    Family run_verdict{"gpuvet_check_run_verdict",
                       "gauge",
                       "Verdict of the whole last gpuvet check report: 1 for its verdict, 0 for the others.",
                       {}};
    Family measurement{"gpuvet_check_measurement",
                       "gauge",
                       "A figure the last gpuvet check measured, in the unit its label names.",
                       {}};
    Family spec{"gpuvet_check_reference_spec", "gauge", "The spec-sheet value the figure is judged against.", {}};
    Family fail_below{"gpuvet_check_reference_fail_below", "gauge", "The floor below which the figure fails.", {}};
    Family report_ok{"gpuvet_check_report_readable",
                     "gauge",
                     "1 when the last read of --check-report succeeded, 0 when it failed (older figures shown).",
                     {}};
    Family age{"gpuvet_sample_age_seconds", "gauge", "Seconds since the last complete sample of the GPUs ended.", {}};
    Family duration{
        "gpuvet_sample_duration_seconds", "gauge", "How long the last sample of every GPU took (in s).", {}};
    Family stale{"gpuvet_sample_stale",
                 "gauge",
                 "1 when the last sample is older than the bound, so the GPU series are dropped, else 0.",
                 {}};
    Family samples{"gpuvet_samples_total", "counter", "Samples of every GPU completed since export started.", {}};
    Family build{"gpuvet_build_info", "gauge", "gpuvet's version; always 1.", {}};

    // clang-format off
    std::vector<const Family*> in_order() const {
        return {
            &sm_clock, &mem_clock, &mem_temp, &gpu_temp, &power, &replay,
            &util, &mem_util, &xid, &fb_free, &fb_used, &fb_reserved,
            &sbe_vol, &dbe_vol, &sbe_agg, &dbe_agg, &retired_sbe, &retired_dbe,
            &retired_pending, &nvlink, &rows_unc, &rows_cor, &remap_fail, &sm_active,
            &sm_occupancy, &tensor, &dram, &pcie_tx, &pcie_rx,
            &amd_gfx, &amd_umc, &amd_edge, &amd_junction, &amd_mem_temp, &amd_power, &amd_clock,
            &amd_vram_total, &amd_vram_used, &amd_vram_free, &amd_ecc_cor, &amd_ecc_unc,
            &amd_replay, &amd_pcie_speed, &amd_pcie_max_speed, &amd_xgmi_rx, &amd_xgmi_tx, &amd_ppt, &lost,
            &reason, &mig, &power_limit, &power_enforced, &power_default, &power_max, &pcie_gen,
            &pcie_gen_max, &pcie_width, &pcie_width_max, &nvlink_rx, &nvlink_tx, &held, &origin, &verdict,
            &run_verdict, &measurement, &spec, &fail_below, &report_ok, &age,
            &duration, &stale, &samples, &build,
        };
    }
    // clang-format on
    // The per-block ECC families follow the AMD ones above (in_order() plus these).
    std::vector<const Family*> all() const {
        std::vector<const Family*> out = in_order();
        auto at = std::find(out.begin(), out.end(), &amd_ppt);
        std::vector<const Family*> blocks;
        for (const Family& f : amd_ecc_blocks) blocks.push_back(&f);
        out.insert(at + 1, blocks.begin(), blocks.end());
        return out;
    }
};

}  // namespace gpuvet::export_page
