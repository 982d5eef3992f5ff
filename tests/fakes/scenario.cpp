// Scenario file parsing (TOML via toml++). Unknown keys are errors so a typo cannot silently
// leave a default in place.
#include "scenario.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>

namespace fake {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
    throw std::runtime_error(where + ": " + what);
}

template <class T>
T need(const toml::node& n, const std::string& where) {
    if constexpr (std::is_same_v<T, bool>) {
        if (auto v = n.value_exact<bool>()) return *v;
        fail(where, "expected true or false");
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (auto v = n.value_exact<std::string>()) return *v;
        fail(where, "expected a quoted string");
    } else if constexpr (std::is_same_v<T, double>) {
        if (auto v = n.value<double>()) return *v;
        fail(where, "expected a number");
    } else {
        auto v = n.value_exact<int64_t>();
        if (!v || *v < 0) fail(where, "expected a non-negative integer");
        return static_cast<T>(*v);
    }
}

// Clock event reason names (bit values from nvml.h, nvmlClocksEventReason*).
const std::map<std::string, unsigned long long> kReasonBits = {
    {"gpu_idle", 0x1},
    {"applications_clocks_setting", 0x2},
    {"sw_power_cap", 0x4},
    {"hw_slowdown", 0x8},
    {"sync_boost", 0x10},
    {"sw_thermal_slowdown", 0x20},
    {"hw_thermal_slowdown", 0x40},
    {"hw_power_brake_slowdown", 0x80},
    {"display_clock_setting", 0x100},
};

using Setter = std::function<void(Gpu&, const toml::node&, const std::string&)>;

template <class T>
Setter field(T Gpu::*m) {
    return [m](Gpu& g, const toml::node& n, const std::string& w) { g.*m = need<T>(n, w); };
}
Setter mib_field(uint64_t Gpu::*m) {
    return [m](Gpu& g, const toml::node& n, const std::string& w) { g.*m = need<uint64_t>(n, w) << 20; };
}

const std::map<std::string, Setter>& setters() {
    static const std::map<std::string, Setter> s = [] {
        std::map<std::string, Setter> m;
        m["name"] = field(&Gpu::name);
        m["uuid"] = field(&Gpu::uuid);
        m["serial"] = field(&Gpu::serial);
        m["pci_bus_id"] = field(&Gpu::pci_bus_id);
        m["pci_device_id"] = field(&Gpu::pci_device_id);
        m["pci_vendor_id"] = field(&Gpu::pci_vendor_id);
        m["pci_subsystem_id"] = field(&Gpu::pci_subsystem_id);
        m["vbios"] = field(&Gpu::vbios);
        m["inforom_image"] = field(&Gpu::inforom_image);
        m["board_part_number"] = field(&Gpu::board_part_number);
        m["minor_number"] = field(&Gpu::minor_number);
        m["multi_gpu_board"] = field(&Gpu::multi_gpu_board);
        m["memory_total_bytes"] = field(&Gpu::memory_total_bytes);
        m["memory_total_mib"] = mib_field(&Gpu::memory_total_bytes);
        m["memory_reserved_bytes"] = field(&Gpu::memory_reserved_bytes);
        m["memory_reserved_mib"] = mib_field(&Gpu::memory_reserved_bytes);
        m["memory_used_bytes"] = field(&Gpu::memory_used_bytes);
        m["memory_used_mib"] = mib_field(&Gpu::memory_used_bytes);
        m["ecc_enabled"] = field(&Gpu::ecc_enabled);
        m["ecc_pending_enabled"] = field(&Gpu::ecc_pending_enabled);
        m["ecc_supported"] = field(&Gpu::ecc_supported);
        m["remapped_rows_supported"] = field(&Gpu::remapped_rows_supported);
        m["ecc_volatile_corrected"] = field(&Gpu::ecc_volatile_corrected);
        m["ecc_volatile_uncorrected"] = field(&Gpu::ecc_volatile_uncorrected);
        m["ecc_aggregate_corrected"] = field(&Gpu::ecc_aggregate_corrected);
        m["ecc_aggregate_uncorrected"] = field(&Gpu::ecc_aggregate_uncorrected);
        m["remapped_rows_correctable"] = field(&Gpu::remapped_rows_correctable);
        m["remapped_rows_uncorrectable"] = field(&Gpu::remapped_rows_uncorrectable);
        m["remap_pending"] = field(&Gpu::remap_pending);
        m["remap_failure"] = field(&Gpu::remap_failure);
        m["retired_pages_sbe"] = field(&Gpu::retired_pages_sbe);
        m["retired_pages_dbe"] = field(&Gpu::retired_pages_dbe);
        m["retired_pages_pending"] = field(&Gpu::retired_pages_pending);
        m["pcie_gen_current"] = field(&Gpu::pcie_gen_current);
        m["pcie_width_current"] = field(&Gpu::pcie_width_current);
        m["pcie_gen_gpu_max"] = field(&Gpu::pcie_gen_gpu_max);
        m["pcie_width_gpu_max"] = field(&Gpu::pcie_width_gpu_max);
        m["host_pcie_gen_max"] = field(&Gpu::host_pcie_gen_max);
        m["host_pcie_width_max"] = field(&Gpu::host_pcie_width_max);
        m["pcie_replay_counter"] = field(&Gpu::pcie_replay_counter);
        m["pcie_rx_kb_per_s"] = field(&Gpu::pcie_rx_kb_per_s);
        m["pcie_tx_kb_per_s"] = field(&Gpu::pcie_tx_kb_per_s);
        m["nvlink_rx_kib"] = field(&Gpu::nvlink_rx_kib);
        m["nvlink_tx_kib"] = field(&Gpu::nvlink_tx_kib);
        m["nvlink_count"] = field(&Gpu::nvlink_count);
        m["nvlink_version"] = field(&Gpu::nvlink_version);
        m["nvlink_down"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            const auto* a = n.as_array();
            if (!a) fail(w, "expected an array of link indexes, e.g. [2, 7]");
            g.nvlink_down.clear();
            for (const auto& e : *a) g.nvlink_down.push_back(need<unsigned>(e, w));
        };
        m["nvlink_remote_type"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.nvlink_remote_type = need<std::string>(n, w);
            if (g.nvlink_remote_type != "switch" && g.nvlink_remote_type != "gpu")
                fail(w, "expected \"switch\" or \"gpu\"");
        };
        m["nvlink_remote_bus_ids"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            const auto* a = n.as_array();
            if (!a) fail(w, "expected an array of PCI bus id strings");
            g.nvlink_remote_bus_ids.clear();
            for (const auto& e : *a) g.nvlink_remote_bus_ids.push_back(need<std::string>(e, w));
        };
        m["persistence_mode"] = field(&Gpu::persistence_mode);
        m["compute_mode"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.compute_mode = need<std::string>(n, w);
            if (g.compute_mode != "default" && g.compute_mode != "exclusive_process" && g.compute_mode != "prohibited")
                fail(w, "expected default, exclusive_process or prohibited");
        };
        m["mig_mode"] = field(&Gpu::mig_mode);
        m["mig_pending"] = field(&Gpu::mig_pending);
        m["virtualization_mode"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.virtualization_mode = need<std::string>(n, w);
            static const char* ok[] = {"none", "passthrough", "vgpu", "host_vgpu", "host_vsga"};
            for (const char* o : ok)
                if (g.virtualization_mode == o) return;
            fail(w, "expected none, passthrough, vgpu, host_vgpu or host_vsga");
        };
        m["power_draw_w"] = field(&Gpu::power_draw_w);
        m["power_limit_w"] = field(&Gpu::power_limit_w);
        m["power_default_limit_w"] = field(&Gpu::power_default_limit_w);
        m["power_min_limit_w"] = field(&Gpu::power_min_limit_w);
        m["power_max_limit_w"] = field(&Gpu::power_max_limit_w);
        m["power_enforced_limit_w"] = field(&Gpu::power_enforced_limit_w);
        m["sm_clock_mhz"] = field(&Gpu::sm_clock_mhz);
        m["mem_clock_mhz"] = field(&Gpu::mem_clock_mhz);
        m["video_clock_mhz"] = field(&Gpu::video_clock_mhz);
        m["max_sm_clock_mhz"] = field(&Gpu::max_sm_clock_mhz);
        m["max_mem_clock_mhz"] = field(&Gpu::max_mem_clock_mhz);
        m["max_video_clock_mhz"] = field(&Gpu::max_video_clock_mhz);
        m["clock_event_reasons"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            if (const auto* a = n.as_array()) {
                g.clock_event_reasons = 0;
                for (const auto& e : *a) {
                    auto name = need<std::string>(e, w);
                    auto it = kReasonBits.find(name);
                    if (it == kReasonBits.end()) fail(w, "unknown clock event reason \"" + name + "\"");
                    g.clock_event_reasons |= it->second;
                }
            } else {
                g.clock_event_reasons = need<unsigned long long>(n, w);
            }
        };
        m["temperature_c"] = field(&Gpu::temperature_c);
        m["temp_shutdown_c"] = field(&Gpu::temp_shutdown_c);
        m["temp_slowdown_c"] = field(&Gpu::temp_slowdown_c);
        m["temp_gpu_max_c"] = field(&Gpu::temp_gpu_max_c);
        m["temp_mem_max_c"] = field(&Gpu::temp_mem_max_c);
        m["memory_temperature_c"] = field(&Gpu::memory_temperature_c);
        m["memory_temperature_supported"] = field(&Gpu::memory_temperature_supported);
        m["fan_speed_percent"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.fan_speed_percent = need<unsigned>(n, w);
        };
        m["utilization_gpu_percent"] = field(&Gpu::utilization_gpu_percent);
        m["utilization_memory_percent"] = field(&Gpu::utilization_memory_percent);
        m["sample_period_s"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.sample_period_s = need<double>(n, w);
            if (!(g.sample_period_s >= 0.01 && g.sample_period_s <= 10)) fail(w, "expected seconds from 0.01 to 10");
        };
        m["sample_buffer_entries"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.sample_buffer_entries = need<unsigned>(n, w);
            if (g.sample_buffer_entries < 1 || g.sample_buffer_entries > 100000) fail(w, "expected 1 to 100000");
        };
        m["samples_supported"] = field(&Gpu::samples_supported);
        m["samples_skip_idle"] = field(&Gpu::samples_skip_idle);
        m["load_period_s"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.load_period_s = need<double>(n, w);
            if (!(g.load_period_s == 0 || g.load_period_s >= 0.01)) fail(w, "expected 0 (no wave) or >= 0.01 s");
        };
        m["load_duty"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.load_duty = need<double>(n, w);
            if (!(g.load_duty >= 0 && g.load_duty <= 1)) fail(w, "expected a fraction from 0 to 1");
        };
        m["load_phase_s"] = field(&Gpu::load_phase_s);
        m["load_idle_power_w"] = field(&Gpu::load_idle_power_w);
        m["energy_start_mj"] = field(&Gpu::energy_start_mj);
        m["energy_supported"] = field(&Gpu::energy_supported);
        m["violation_supported"] = field(&Gpu::violation_supported);
        m["gpm_supported"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.gpm_supported = need<bool>(n, w);
        };
        m["gpm_sm_activity_percent"] = field(&Gpu::gpm_sm_activity_percent);
        m["gpm_sm_occupancy_percent"] = field(&Gpu::gpm_sm_occupancy_percent);
        m["gpm_tensor_activity_percent"] = field(&Gpu::gpm_tensor_activity_percent);
        m["gpm_dram_bandwidth_percent"] = field(&Gpu::gpm_dram_bandwidth_percent);
        m["processes"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            const auto* a = n.as_array();
            if (!a) fail(w, "expected an array of {pid, used_memory_mib, name} tables");
            g.processes.clear();
            for (const auto& e : *a) {
                const auto* t = e.as_table();
                if (!t) fail(w, "each process must be a table {pid = ..., used_memory_mib = ..., name = ...}");
                Process p;
                for (const auto& [k, v] : *t) {
                    std::string key(k.str()), kw = w + "." + key;
                    if (key == "pid") p.pid = need<unsigned>(v, kw);
                    else if (key == "used_memory_mib") p.used_bytes = need<uint64_t>(v, kw) << 20;
                    else if (key == "used_memory_bytes") p.used_bytes = need<uint64_t>(v, kw);
                    else if (key == "name") p.name = need<std::string>(v, kw);
                    else if (key == "graphics") p.graphics = need<bool>(v, kw);
                    else if (key == "child_of_caller") p.child_of_caller = need<bool>(v, kw);
                    else
                        fail(kw,
                             "unknown process key (known: pid, used_memory_mib, used_memory_bytes, name, graphics, "
                             "child_of_caller)");
                }
                if (p.pid == 0 && !p.child_of_caller) fail(w, "a process needs a pid (or child_of_caller = true)");
                g.processes.push_back(p);
            }
        };
        m["numa_node"] = field(&Gpu::numa_node);
        m["cpu_affinity"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.cpu_affinity = need<std::string>(n, w);
            try {
                parse_cpu_list(g.cpu_affinity);
            } catch (const std::exception& e) {
                fail(w, e.what());
            }
        };
        m["sm_count"] = field(&Gpu::sm_count);
        m["cc_major"] = field(&Gpu::cc_major);
        m["cc_minor"] = field(&Gpu::cc_minor);
        m["gpu_cores"] = field(&Gpu::gpu_cores);
        m["l2_cache_bytes"] = field(&Gpu::l2_cache_bytes);
        m["memory_bus_width_bits"] = field(&Gpu::memory_bus_width_bits);
        m["hbm_bandwidth_gbps"] = field(&Gpu::hbm_bandwidth_gbps);
        m["h2d_bandwidth_gbps"] = field(&Gpu::h2d_bandwidth_gbps);
        m["d2h_bandwidth_gbps"] = field(&Gpu::d2h_bandwidth_gbps);
        m["p2p_bandwidth_gbps"] = field(&Gpu::p2p_bandwidth_gbps);
        m["gemm_tf32_tflops"] = field(&Gpu::gemm_tf32_tflops);
        m["gemm_fp16_tflops"] = field(&Gpu::gemm_fp16_tflops);
        m["gemm_bf16_tflops"] = field(&Gpu::gemm_bf16_tflops);
        m["gemm_fp8_tflops"] = field(&Gpu::gemm_fp8_tflops);
        m["gemm_int8_tops"] = field(&Gpu::gemm_int8_tops);
        m["gemm_wrong_results"] = field(&Gpu::gemm_wrong_results);
        m["nccl_busbw_gbps"] = field(&Gpu::nccl_busbw_gbps);
        m["nccl_wrong_sums"] = field(&Gpu::nccl_wrong_sums);
        m["fp64_tflops"] = field(&Gpu::fp64_tflops);
        m["fp32_tflops"] = field(&Gpu::fp32_tflops);
        m["fp16_tflops"] = field(&Gpu::fp16_tflops);
        m["bf16_tflops"] = field(&Gpu::bf16_tflops);
        m["fma_wrong_results"] = field(&Gpu::fma_wrong_results);
        m["p2p_disabled"] = field(&Gpu::p2p_disabled);
        m["bad_memory_cells"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            const auto* a = n.as_array();
            if (!a) fail(w, "expected an array of {offset_bytes = N, flip = N} tables");
            g.bad_memory_cells.clear();
            for (const auto& e : *a) {
                const auto* t = e.as_table();
                if (!t || !(*t)["offset_bytes"]) fail(w, "each cell needs offset_bytes = N (flip = N optional)");
                BadCell c{need<uint64_t>(*(*t)["offset_bytes"].node(), w), 1};
                if ((*t)["flip"]) c.flip = need<uint64_t>(*(*t)["flip"].node(), w);
                if (c.offset_bytes % 8 || c.flip == 0) fail(w, "offset_bytes must be a multiple of 8 and flip nonzero");
                g.bad_memory_cells.push_back(c);
            }
        };
        m["call_delay_ms"] = field(&Gpu::call_delay_ms);
        m["lost_after_calls"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            g.lost_after_calls = need<uint64_t>(n, w);
        };
        m["xid_events"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            const auto* a = n.as_array();
            if (!a) fail(w, "expected an array of {after_calls, xid} tables");
            g.xid_events.clear();
            for (const auto& e : *a) {
                const auto* t = e.as_table();
                if (!t || !(*t)["xid"] || t->size() != 2 || (!(*t)["after_calls"] && !(*t)["after_s"]))
                    fail(w, "each event must be {after_calls = N, xid = N} or {after_s = S, xid = N}");
                XidEvent x;
                if ((*t)["after_calls"]) x.after_calls = need<uint64_t>(*(*t)["after_calls"].node(), w);
                else x.after_s = need<double>(*(*t)["after_s"].node(), w);
                x.xid = need<unsigned long long>(*(*t)["xid"].node(), w);
                g.xid_events.push_back(x);
            }
        };
        m["changes"] = [](Gpu& g, const toml::node& n, const std::string& w) {
            const auto* a = n.as_array();
            if (!a) fail(w, "expected [[...changes]] tables");
            g.changes.clear();
            for (const auto& e : *a) {
                const auto* t = e.as_table();
                if (!t || (!(*t)["after_calls"] == !(*t)["after_s"]))
                    fail(w, "each change needs after_calls = N or after_s = S (one of them)");
                Change c;
                if ((*t)["after_calls"]) c.after_calls = need<uint64_t>(*(*t)["after_calls"].node(), w);
                else c.after_s = need<double>(*(*t)["after_s"].node(), w);
                c.keys = std::make_shared<toml::table>(*t);
                c.keys->erase("after_calls");
                c.keys->erase("after_s");
                if (c.keys->contains("changes")) fail(w, "a change cannot contain changes");
                Gpu probe = g;  // validate now, so errors surface at load time
                apply_gpu_keys(probe, *c.keys, w);
                g.changes.push_back(std::move(c));
            }
        };
        return m;
    }();
    return s;
}

int topology_value(const std::string& name, const std::string& w) {
    static const std::map<std::string, int> levels = {{"internal", 0},    {"single", 10}, {"multiple", 20},
                                                      {"hostbridge", 30}, {"node", 40},   {"system", 50}};
    auto it = levels.find(name);
    if (it == levels.end()) fail(w, "expected internal, single, multiple, hostbridge, node or system");
    return it->second;
}

// HGX H100 bus ids, used for GPU i when the scenario gives none.
const char* kHgxBusIds[] = {"00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
                            "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0"};

// GPUVET_FAKE_MACHINE names the machine the scenario stands for (a fleet test's node): its GPUs'
// default UUIDs and serials then carry a hash of the name, so two nodes never share a GPU's
// identity. Unset: the fixed defaults of the README.
unsigned machine_salt() {
    const char* m = std::getenv("GPUVET_FAKE_MACHINE");
    if (!m || !*m) return 0;
    std::uint32_t h = 2166136261u;  // FNV-1a
    for (const char* c = m; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 16777619u;
    return h % 0xffffu + 1;
}

void derive(Gpu& g, unsigned i, unsigned count) {
    char buf[64];
    const unsigned salt = machine_salt();
    if (g.uuid.empty()) {
        std::snprintf(buf, sizeof buf, "GPU-fa4e%04x-0000-4000-8000-%012x", salt, i + 1);
        g.uuid = buf;
    }
    if (g.serial.empty()) g.serial = std::to_string(1654922000000ull + salt * 1000ull + i);
    if (g.pci_bus_id.empty()) {
        if (i < 8) g.pci_bus_id = kHgxBusIds[i];
        else {
            std::snprintf(buf, sizeof buf, "00000001:%02X:00.0", i);
            g.pci_bus_id = buf;
        }
    }
    if (g.numa_node < 0) g.numa_node = (count > 1 && i >= (count + 1) / 2) ? 1 : 0;
    if (g.cpu_affinity.empty()) g.cpu_affinity = g.numa_node == 0 ? "0-47,96-143" : "48-95,144-191";
}

void share(double v, const std::string& w, double most) {
    if (!(v >= 0 && v <= most)) fail(w, "expected a number from 0 to " + std::to_string(int(most)));
}

void read_fabric(const toml::table& t, const std::string& path, Fabric& f) {
    for (const auto& [k, v] : t) {
        std::string key(k.str()), w = path + ": fabric." + key;
        if (key == "efficiency") share(f.efficiency = need<double>(v, w), w, 1);
        else if (key == "node_factor") share(f.node_factor = need<double>(v, w), w, 1);
        else if (key == "slow_nic_factor") share(f.slow_nic_factor = need<double>(v, w), w, 1);
        else if (key == "gdr_off_factor") share(f.gdr_off_factor = need<double>(v, w), w, 1);
        else if (key == "write_efficiency") share(f.write_efficiency = need<double>(v, w), w, 1);
        else if (key == "socket_busbw_gbps") share(f.socket_busbw_gbps = need<double>(v, w), w, 1e6);
        else if (key == "gdr") f.gdr = need<bool>(v, w);
        else if (key == "dmabuf_mr") f.dmabuf_mr = need<bool>(v, w);
        else if (key == "dmabuf") {
            f.dmabuf = need<std::string>(v, w);
            if (f.dmabuf != "ok" && f.dmabuf != "unsupported" && f.dmabuf != "refused")
                fail(w, "expected \"ok\", \"unsupported\" or \"refused\"");
        } else if (key == "ib") {
            f.ib = need<std::string>(v, w);
            if (f.ib != "ok" && f.ib != "no_device") fail(w, "expected \"ok\" or \"no_device\"");
        } else if (key == "slow_nics" || key == "fail_connect") {
            const auto* a = v.as_array();
            if (!a) fail(w, "expected a list of NIC names, e.g. [\"mlx5_1\"]");
            for (const auto& e : *a)
                (key == "slow_nics" ? f.slow_nics : f.fail_connect).push_back(need<std::string>(e, w));
        } else {
            fail(w,
                 "unknown fabric key (known: efficiency, node_factor, slow_nics, slow_nic_factor, ib, gdr, "
                 "gdr_off_factor, socket_busbw_gbps, write_efficiency, fail_connect, dmabuf, dmabuf_mr)");
        }
    }
}

}  // namespace

void apply_gpu_keys(Gpu& gpu, const toml::table& t, const std::string& where) {
    const auto& s = setters();
    for (const auto& [k, v] : t) {
        std::string key(k.str());
        auto it = s.find(key);
        if (it == s.end()) fail(where + "." + key, "unknown GPU key (see tests/fakes/README.md)");
        it->second(gpu, v, where + "." + key);
    }
}

bool parse_bus_id(const std::string& s, unsigned& domain, unsigned& bus, unsigned& device) {
    unsigned fn = 0;
    return std::sscanf(s.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &fn) == 4;
}

std::vector<unsigned> parse_cpu_list(const std::string& s) {
    std::vector<unsigned> cpus;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t end = s.find(',', pos);
        if (end == std::string::npos) end = s.size();
        std::string part = s.substr(pos, end - pos);
        unsigned a = 0, b = 0;
        char extra = 0;
        if (std::sscanf(part.c_str(), "%u-%u%c", &a, &b, &extra) == 2 && a <= b) {
        } else if (std::sscanf(part.c_str(), "%u%c", &a, &extra) == 1) {
            b = a;
        } else {
            throw std::runtime_error("bad CPU list \"" + s + "\" (expected e.g. \"0-47,96-143\")");
        }
        for (unsigned c = a; c <= b; ++c) cpus.push_back(c);
        pos = end + 1;
    }
    return cpus;
}

int topology_level(const Scenario& s, unsigned a, unsigned b) {
    if (a == b) return 0;
    auto it = s.topology.find({std::min(a, b), std::max(a, b)});
    if (it != s.topology.end()) return it->second;
    return s.gpus[a].numa_node == s.gpus[b].numa_node ? 40 : 50;  // NODE or SYSTEM
}

std::optional<Scenario> load_scenario(const std::string& path, std::string& error) {
    try {
        toml::table doc;
        try {
            doc = toml::parse_file(path);
        } catch (const toml::parse_error& e) {
            fail(path, std::string(e.description()) + " at line " + std::to_string(e.source().begin.line));
        }
        Scenario sc;
        sc.path = path;
        unsigned count = 0;
        bool have_count = false;
        for (const auto& [k, v] : doc) {
            std::string key(k.str());
            if (key == "gpu_count") {
                count = need<unsigned>(v, path + ": gpu_count");
                have_count = true;
            } else if (key == "time_scale") {
                sc.time_scale = need<double>(v, path + ": time_scale");
                if (!(sc.time_scale > 0)) fail(path + ": time_scale", "expected a number above 0");
            } else if (key != "driver" && key != "all" && key != "gpu" && key != "topology" && key != "pcie_switch" &&
                       key != "fabric") {
                fail(path + ": " + key,
                     "unknown top-level key (known: gpu_count, time_scale, [driver], [all], [gpu.N], [[topology]], "
                     "[[pcie_switch]], [fabric])");
            }
        }
        if (!have_count) fail(path, "gpu_count is required (a top-level key before any [table])");
        if (const auto* d = doc["driver"].as_table()) {
            for (const auto& [k, v] : *d) {
                std::string key(k.str()), w = path + ": driver." + key;
                if (key == "version") sc.driver_version = need<std::string>(v, w);
                else if (key == "nvml_version") sc.nvml_version = need<std::string>(v, w);
                else if (key == "cuda_version") sc.cuda_driver_version = need<int>(v, w);
                else if (key == "kernel_driver_loaded") sc.kernel_driver_loaded = need<bool>(v, w);
                else if (key == "cublaslt_cuda_version") sc.cublaslt_cuda_version = need<int>(v, w);
                else if (key == "context_release_ms") sc.context_release_ms = need<unsigned>(v, w);
                else
                    fail(w,
                         "unknown driver key (known: version, nvml_version, cuda_version, kernel_driver_loaded, "
                         "cublaslt_cuda_version, context_release_ms)");
            }
        }
        if (const auto* f = doc["fabric"].as_table()) read_fabric(*f, path, sc.fabric);
        sc.gpus.resize(count);
        const auto* all = doc["all"].as_table();
        const auto* per = doc["gpu"].as_table();
        if (per) {
            for (const auto& [k, v] : *per) {
                std::string key(k.str());
                char* end = nullptr;
                unsigned long idx = std::strtoul(key.c_str(), &end, 10);
                if (key.empty() || *end || idx >= count)
                    fail(path + ": gpu." + key,
                         "expected [gpu.N] with N below gpu_count (" + std::to_string(count) + ")");
                if (!v.is_table()) fail(path + ": gpu." + key, "expected a table");
            }
        }
        for (unsigned i = 0; i < count; ++i) {
            Gpu& g = sc.gpus[i];
            g.minor_number = i;
            if (all) apply_gpu_keys(g, *all, path + ": all");
            if (per)
                if (const auto* t = (*per)[std::to_string(i)].as_table())
                    apply_gpu_keys(g, *t, path + ": gpu." + std::to_string(i));
            derive(g, i, count);
            unsigned d, b, dev;
            if (!parse_bus_id(g.pci_bus_id, d, b, dev))
                fail(path + ": gpu." + std::to_string(i) + ".pci_bus_id", "expected DDDDDDDD:BB:DD.F");
        }
        if (const auto* topo = doc["topology"].as_array()) {
            for (const auto& e : *topo) {
                const auto* t = e.as_table();
                std::string w = path + ": topology";
                const toml::array* pair = t ? (*t)["gpus"].as_array() : nullptr;
                if (!pair || pair->size() != 2 || !(*t)["level"])
                    fail(w, "each [[topology]] needs gpus = [a, b] and level = \"single\"|...");
                unsigned a = need<unsigned>(*pair->get(0), w), b = need<unsigned>(*pair->get(1), w);
                if (a >= count || b >= count) fail(w, "GPU index beyond gpu_count");
                sc.topology[{std::min(a, b), std::max(a, b)}] =
                    topology_value(need<std::string>(*(*t)["level"].node(), w), w);
            }
        }
        if (const auto* sw = doc["pcie_switch"].as_array()) {
            for (const auto& e : *sw) {
                const auto* t = e.as_table();
                std::string w = path + ": pcie_switch";
                const toml::array* gs = t ? (*t)["gpus"].as_array() : nullptr;
                if (!gs || !(*t)["gbps"]) fail(w, "each [[pcie_switch]] needs gpus = [...] and gbps = N");
                PcieSwitch ps;
                ps.gbps = need<double>(*(*t)["gbps"].node(), w);
                for (const auto& x : *gs) {
                    unsigned i = need<unsigned>(x, w);
                    if (i >= count) fail(w, "GPU index beyond gpu_count");
                    ps.gpus.push_back(i);
                }
                sc.pcie_switches.push_back(ps);
            }
        }
        return sc;
    } catch (const std::exception& e) {
        error = e.what();
        return std::nullopt;
    }
}

std::optional<Scenario> load_scenario_from_env(std::string& error) {
    const char* p = std::getenv("GPUVET_FAKE_SCENARIO");
    if (!p || !*p) {
        error = "GPUVET_FAKE_SCENARIO is not set; point it at a file in tests/fakes/scenarios/";
        return std::nullopt;
    }
    return load_scenario(p, error);
}

}  // namespace fake
