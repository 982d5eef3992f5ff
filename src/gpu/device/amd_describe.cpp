// AmdSmiDevice::describe(): the fixed facts of one AMD GPU.
#include <algorithm>
#include <string>

#include "gpu/device/amd_backend.hpp"
#include "gpu/device/amd_decode.hpp"

namespace gpuvet {

using namespace amdsmi;
using namespace amd_backend;
using amd_decode::text_of;

namespace {

// A text fact from a fixed-size buffer: absent when the call failed or the buffer is empty.
Fact<std::string> text_fact(const std::string& why, const char* buf, size_t size) {
    if (!why.empty()) return Fact<std::string>::absent(why);
    std::string s = text_of(buf, size);
    if (s.empty() || s == "N/A") return Fact<std::string>::absent("the driver reports none");
    return s;
}

std::string form_factor_name(amdsmi_card_form_factor_t f) {
    switch (f) {
        case AMDSMI_CARD_FORM_FACTOR_PCIE: return "PCIe";
        case AMDSMI_CARD_FORM_FACTOR_OAM: return "OAM";
        case AMDSMI_CARD_FORM_FACTOR_CEM: return "CEM";
        default: return "unknown";
    }
}

}  // namespace

DeviceFacts AmdSmiDevice::describe() {
    DeviceFacts f;
    f.vendor = std::string("AMD");
    if (!unopened_.empty()) {
        f.name = Fact<std::string>::absent(unopened_);
        return f;
    }
    read_identity(f);
    read_limits(f);
    read_modes(f);
    read_xgmi(f);
    return f;
}

void AmdSmiDevice::read_identity(DeviceFacts& f) {
    const AmdSmiApi& a = r_.api;
    amdsmi_asic_info_t asic{};
    std::string why = r_.call("amdsmi_get_gpu_asic_info", a.amdsmi_get_gpu_asic_info, &asic);
    f.name = text_fact(why, asic.market_name, sizeof asic.market_name);
    f.pci_device_id = fact_of(why, static_cast<std::uint32_t>(asic.device_id));
    f.pci_vendor_id = fact_of(why, asic.vendor_id);
    // As NVML spells it: the subsystem device in the upper half, the subsystem vendor in the lower.
    std::uint16_t subsys = 0;
    std::string why_sub = r_.call("amdsmi_get_gpu_subsystem_id", a.amdsmi_get_gpu_subsystem_id, &subsys);
    f.pci_subsystem_id =
        fact_of(why.empty() ? why_sub : why, static_cast<std::uint32_t>(subsys) << 16 | asic.subvendor_id);
    auto gfx = why.empty() ? amd_decode::gfx_target_name(asic.target_graphics_version) : std::nullopt;
    f.gfx_target = gfx ? Fact<std::string>(*gfx)
                       : Fact<std::string>::absent(why.empty() ? "the driver reports no gfx target" : why);
    auto arch = gfx ? amd_decode::architecture_of(*gfx) : std::nullopt;
    f.architecture =
        arch ? Fact<std::string>(*arch)
             : Fact<std::string>::absent(f.gfx_target.absent_reason.empty() ? "gfx target not in gpuvet's table"
                                                                            : f.gfx_target.absent_reason);
    f.compute_capability = Fact<std::string>::absent("a CUDA notion: AMD GPUs have a gfx target instead");
    f.compute_units = why.empty() && asic.num_of_compute_units > 0 && asic.num_of_compute_units != 0xFFFFFFFFu
                          ? Fact<int>(static_cast<int>(asic.num_of_compute_units))
                          : Fact<int>::absent(why.empty() ? "the driver reports none" : why);

    amdsmi_board_info_t board{};
    why = r_.call("amdsmi_get_gpu_board_info", a.amdsmi_get_gpu_board_info, &board);
    f.serial = text_fact(why, board.product_serial, sizeof board.product_serial);
    if (!f.serial && why.empty()) f.serial = text_fact("", asic.asic_serial, sizeof asic.asic_serial);
    f.board_part_number = text_fact(why, board.model_number, sizeof board.model_number);

    amdsmi_vbios_info_t vbios{};
    why = r_.call("amdsmi_get_gpu_vbios_info", a.amdsmi_get_gpu_vbios_info, &vbios);
    f.vbios_version = text_fact(why, vbios.version, sizeof vbios.version);
    if (!f.vbios_version && why.empty()) f.vbios_version = text_fact("", vbios.part_number, sizeof vbios.part_number);

    std::uint64_t bdf = 0;
    why = r_.call("amdsmi_get_gpu_bdf_id", a.amdsmi_get_gpu_bdf_id, &bdf);
    f.pci_bus_id = fact_of(why, amd_decode::pci_bus_id_of(bdf));
    char uuid[kGpuUuidSize + 2] = {0};
    unsigned len = sizeof uuid - 1;
    why = r_.call("amdsmi_get_gpu_device_uuid", a.amdsmi_get_gpu_device_uuid, &len, uuid);
    f.uuid = text_fact(why, uuid, sizeof uuid);
    std::uint32_t numa = 0;
    why = r_.call("amdsmi_topo_get_numa_node_number", a.amdsmi_topo_get_numa_node_number, &numa);
    f.numa_node = fact_of(why, static_cast<int>(numa));
}

void AmdSmiDevice::read_limits(DeviceFacts& f) {
    const AmdSmiApi& a = r_.api;
    std::uint64_t total = 0;
    std::string why =
        r_.call("amdsmi_get_gpu_memory_total", a.amdsmi_get_gpu_memory_total, AMDSMI_MEM_TYPE_VRAM, &total);
    f.memory_total_bytes = fact_of(why, total);
    f.memory_reserved_bytes = Fact<std::uint64_t>::absent("AMD SMI reports no reserved VRAM");

    amdsmi_pcie_info_t p{};
    why = r_.call("amdsmi_get_pcie_info", a.amdsmi_get_pcie_info, &p);
    auto gen = amd_decode::pcie_gen_of_mts(p.pcie_static.max_pcie_speed);
    f.pcie_gen_max_gpu =
        why.empty() && gen ? Fact<int>(*gen) : Fact<int>::absent(why.empty() ? "unknown PCIe speed" : why);
    f.pcie_gen_max_host = Fact<int>::absent("AMD SMI reports the GPU's maximum only");
    f.pcie_width_max = fact_of(why, static_cast<int>(p.pcie_static.max_pcie_width));
    f.form_factor = fact_of(why, form_factor_name(p.pcie_static.slot_type));

    amdsmi_power_cap_info_t cap{};
    why = r_.call("amdsmi_get_power_cap_info", a.amdsmi_get_power_cap_info, 0u, &cap);
    f.power_default_limit_w = fact_of(why, cap.default_power_cap * 1e-6);
    f.power_min_limit_w = fact_of(why, cap.min_power_cap * 1e-6);
    f.power_max_limit_w = fact_of(why, cap.max_power_cap * 1e-6);

    amdsmi_clk_info_t gfx{}, mem{};
    why = r_.call("amdsmi_get_clock_info", a.amdsmi_get_clock_info, AMDSMI_CLK_TYPE_SYS, &gfx);
    f.clock_sm_max_mhz = fact_of(why, static_cast<int>(gfx.max_clk));
    why = r_.call("amdsmi_get_clock_info", a.amdsmi_get_clock_info, AMDSMI_CLK_TYPE_MEM, &mem);
    f.clock_mem_max_mhz = fact_of(why, static_cast<int>(mem.max_clk));

    std::int64_t crit = 0, emergency = 0, mem_crit = 0;
    why = r_.call("amdsmi_get_temp_metric", a.amdsmi_get_temp_metric, AMDSMI_TEMPERATURE_TYPE_HOTSPOT,
                  AMDSMI_TEMP_CRITICAL, &crit);
    f.temperature_slowdown_c = fact_of(why, static_cast<int>(crit));
    why = r_.call("amdsmi_get_temp_metric", a.amdsmi_get_temp_metric, AMDSMI_TEMPERATURE_TYPE_HOTSPOT,
                  AMDSMI_TEMP_EMERGENCY, &emergency);
    f.temperature_shutdown_c = fact_of(why, static_cast<int>(emergency));
    why = r_.call("amdsmi_get_temp_metric", a.amdsmi_get_temp_metric, AMDSMI_TEMPERATURE_TYPE_VRAM,
                  AMDSMI_TEMP_CRITICAL, &mem_crit);
    f.temperature_memory_max_c = fact_of(why, static_cast<int>(mem_crit));
}

void AmdSmiDevice::read_modes(DeviceFacts& f) {
    const AmdSmiApi& a = r_.api;
    std::uint64_t mask = 0;
    std::string why = r_.call("amdsmi_get_gpu_ecc_enabled", a.amdsmi_get_gpu_ecc_enabled, &mask);
    f.ecc_enabled = fact_of(why, (mask & AMDSMI_GPU_BLOCK_UMC) != 0);  // the HBM's ECC
    f.ecc_pending = Fact<bool>::absent("AMD SMI reports no pending ECC mode");
    char part[64] = {0};
    why = r_.call("amdsmi_get_gpu_compute_partition", a.amdsmi_get_gpu_compute_partition, part,
                  static_cast<uint32_t>(sizeof part - 1));
    f.compute_partition = text_fact(why, part, sizeof part);
    char mpart[64] = {0};
    why = r_.call("amdsmi_get_gpu_memory_partition", a.amdsmi_get_gpu_memory_partition, mpart,
                  static_cast<uint32_t>(sizeof mpart - 1));
    f.memory_partition = text_fact(why, mpart, sizeof mpart);
    const char* nvidia_only = "an NVIDIA mode: AMD GPUs have compute and memory partitions instead";
    f.mig_enabled = Fact<bool>::absent(nvidia_only);
    f.persistence_mode = Fact<bool>::absent("an NVIDIA mode: the amdgpu driver stays loaded");
    f.compute_mode = Fact<std::string>::absent("an NVIDIA mode");
    f.virtualization_mode = Fact<std::string>::absent("AMD SMI does not report it");
    f.cpu_affinity = Fact<std::string>::absent("AMD SMI reports the NUMA node only");
}

void AmdSmiDevice::read_xgmi(DeviceFacts& f) {
    amdsmi_link_metrics_t m{};
    std::string why = r_.call("amdsmi_get_link_metrics", r_.api.amdsmi_get_link_metrics, &m);
    if (!why.empty()) {
        f.xgmi_absent_reason = why;
        return;
    }
    uint32_t n = std::min<uint32_t>(m.num_links, kMaxNumXgmiPhysicalLink);
    for (uint32_t i = 0; i < n; ++i) {
        const auto& l = m.links[i];
        if (l.link_type != AMDSMI_LINK_TYPE_XGMI) continue;
        XgmiLinkInfo x;
        x.link = static_cast<int>(i);
        x.remote_pci_bus_id = amd_decode::pci_bus_id_of(l.bdf);
        x.active = l.bit_rate > 0;
        x.bit_rate_gbps = static_cast<double>(l.bit_rate);
        x.max_bandwidth_gbps = static_cast<double>(l.max_bandwidth);
        f.xgmi_links.push_back(std::move(x));
    }
    f.nvlink_absent_reason = "AMD GPUs have xGMI links instead (see xgmi_links)";
}

}  // namespace gpuvet
