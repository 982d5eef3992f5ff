// A test double of ROCm SMI (librocm_smi64.so) as ROCm 5 stacks ship it, without AMD SMI, driven by a
// scenario file (GPUVET_FAKE_ROCM_SCENARIO, TOML; tests/fakes/README.md). Built on Debian's
// rocm_smi.h (ROCm 5.2, package librocm-smi-dev): the compiler holds every export to the header's
// declaration. The partition calls of ROCm 6 are not exported, as on a ROCm 5 library. Every GPU
// starts as one die of an MI250X on ROCm 5.7 as rocm-smi reports it; a scenario states what differs.
#include <rocm_smi/rocm_smi.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_hang.hpp"

namespace {

struct Ras {
    uint64_t correctable = 0, uncorrectable = 0;
};

struct Gpu {
    std::string name = "AMD Instinct MI250X";
    uint16_t device_id = 0x740c, vendor_id = 0x1002, subsystem_id = 0x0b0c, subsystem_vendor_id = 0x1002;
    std::string serial, vbios = "113-D65201-042";
    uint64_t unique_id = 0, bdf = 0;
    uint32_t numa_node = 0;
    uint64_t vram_total_bytes = 68702699520ull, vram_used_bytes = 10985472ull;
    uint32_t pcie_gen = 4, pcie_width = 16;  // the current level: the highest one of the list
    uint64_t power_uw = 90000000, cap_uw = 560000000, default_cap_uw = 560000000, max_cap_uw = 560000000;
    uint32_t busy_percent = 0, memory_busy_percent = 0;
    std::vector<uint64_t> sys_clocks_mhz = {500, 800, 1700};
    uint32_t sys_clock_level = 0;
    int64_t edge_mc = 38000, junction_mc = 42000, memory_mc = 40000, junction_crit_mc = 100000,
            junction_emergency_mc = 105000, memory_crit_mc = 95000;
    uint64_t ecc_enabled_blocks = 0x3fff;
    std::map<std::string, Ras> ras;
    uint32_t bad_pages_retired = 0, bad_pages_pending = 0;
    std::vector<std::pair<uint32_t, uint64_t>> processes;  // pid, VRAM bytes
    std::vector<std::string> unsupported;
};

struct State {
    bool init_ok = false;
    std::string driver_version = "6.2.4";  // the amdgpu module of ROCm 5.7
    uint32_t major = 5, minor = 0, patch = 0;
    bool xgmi = true;  // every GPU joined to every other by xGMI (a 4x MI250X node)
    std::vector<Gpu> gpus;
};

State& state() {
    static State s;
    return s;
}

const char* kBlocks[] = {"UMC",       "SDMA", "GFX", "MMHUB", "ATHUB", "PCIE_BIF", "HDP",
                         "XGMI_WAFL", "DF",   "SMN", "SEM",   "MP0",   "MP1",      "FUSE"};

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    std::fprintf(stderr, "fake ROCm SMI: %s: %s\n", where.c_str(), what.c_str());
    throw std::runtime_error(what);
}

template <class T>
T need(const toml::node& n, const std::string& w) {
    if constexpr (std::is_same_v<T, std::string>) {
        if (auto v = n.value<std::string>()) return *v;
    } else {
        if (auto v = n.value<int64_t>()) return static_cast<T>(*v);
    }
    bad(w, "wrong type");
}

void apply(Gpu& g, const toml::table& t, const std::string& w) {
    for (auto&& [key, v] : t) {
        std::string k(key.str());
        // clang-format off
        if (k == "ras") {
            for (auto&& [block, counts] : *v.as_table()) {
                Ras r;
                const auto& c = *counts.as_table();
                if (auto x = c["correctable"].value<int64_t>()) r.correctable = static_cast<uint64_t>(*x);
                if (auto x = c["uncorrectable"].value<int64_t>()) r.uncorrectable = static_cast<uint64_t>(*x);
                g.ras[std::string(block.str())] = r;
            }
        } else if (k == "unsupported") {
            for (auto&& n : *v.as_array()) g.unsupported.push_back(need<std::string>(n, w));
        } else if (k == "processes") {
            for (auto&& n : *v.as_array()) {
                const auto* p = n.as_table();
                if (!p || !(*p)["pid"] || !(*p)["vram_bytes"]) bad(w, "a process needs pid and vram_bytes");
                g.processes.emplace_back(need<uint32_t>(*(*p)["pid"].node(), w), need<uint64_t>(*(*p)["vram_bytes"].node(), w));
            }
        }
        else if (k == "name") g.name = need<std::string>(v, w);
        else if (k == "device_id") g.device_id = need<uint16_t>(v, w);
        else if (k == "serial") g.serial = need<std::string>(v, w);
        else if (k == "vram_total_bytes") g.vram_total_bytes = need<uint64_t>(v, w);
        else if (k == "vram_used_bytes") g.vram_used_bytes = need<uint64_t>(v, w);
        else if (k == "pcie_gen") g.pcie_gen = need<uint32_t>(v, w);
        else if (k == "pcie_width") g.pcie_width = need<uint32_t>(v, w);
        else if (k == "power_w") g.power_uw = need<uint64_t>(v, w) * 1000000;
        else if (k == "power_cap_w") g.cap_uw = need<uint64_t>(v, w) * 1000000;
        else if (k == "power_default_cap_w") g.default_cap_uw = need<uint64_t>(v, w) * 1000000;
        else if (k == "busy_percent") g.busy_percent = need<uint32_t>(v, w);
        else if (k == "sys_clock_level") g.sys_clock_level = need<uint32_t>(v, w);
        else if (k == "junction_c") g.junction_mc = need<int64_t>(v, w) * 1000;
        else if (k == "bad_pages_retired") g.bad_pages_retired = need<uint32_t>(v, w);
        else if (k == "bad_pages_pending") g.bad_pages_pending = need<uint32_t>(v, w);
        else bad(w, "unknown key " + k);
        // clang-format on
    }
}

bool load_scenario() {
    State& s = state();
    const char* path = std::getenv("GPUVET_FAKE_ROCM_SCENARIO");
    if (!path || !*path) {
        std::fprintf(stderr, "fake ROCm SMI: GPUVET_FAKE_ROCM_SCENARIO is not set\n");
        return false;
    }
    try {
        toml::table t = toml::parse_file(path);
        auto n = t["gpu_count"].value<int64_t>();
        if (!n || *n < 0 || *n > 64) bad(path, "gpu_count (0..64) is required");
        s.gpus.assign(static_cast<size_t>(*n), Gpu{});
        for (size_t i = 0; i < s.gpus.size(); ++i) {
            Gpu& g = s.gpus[i];
            // Two dies per OAM on adjacent buses, as an MI250X node lists them.
            g.bdf = static_cast<uint64_t>(0xc1 + (i / 2) * 0x20 + (i % 2) * 0x05) << 8;
            g.numa_node = static_cast<uint32_t>(i / 2);
            g.unique_id = 0x6a0d2b1c00000000ull + i;
            char serial[32];
            std::snprintf(serial, sizeof serial, "PCB04%07zu", 2110 + i / 2);
            g.serial = serial;
        }
        if (auto* d = t["driver"].as_table()) {
            if (auto v = (*d)["version"].value<std::string>()) s.driver_version = *v;
            if (auto v = (*d)["library_version"].value<std::string>())
                std::sscanf(v->c_str(), "%u.%u.%u", &s.major, &s.minor, &s.patch);
            if (auto v = (*d)["xgmi"].value<bool>()) s.xgmi = *v;
        }
        if (auto* all = t["all"].as_table())
            for (auto& g : s.gpus) apply(g, *all, std::string(path) + " [all]");
        if (auto* gpus = t["gpu"].as_table())
            for (auto&& [idx, v] : *gpus) {
                size_t i = std::stoul(std::string(idx.str()));
                if (i >= s.gpus.size()) bad(path, "[gpu." + std::string(idx.str()) + "] beyond gpu_count");
                apply(s.gpus[i], *v.as_table(), std::string(path) + " [gpu." + std::string(idx.str()) + "]");
            }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fake ROCm SMI: %s: %s\n", path, e.what());
        return false;
    }
    return true;
}

Gpu* gpu_of(uint32_t dv) {
    auto& g = state().gpus;
    return state().init_ok && dv < g.size() ? &g[dv] : nullptr;
}

bool unsupported(const Gpu& g, const char* fn) {
    return std::find(g.unsupported.begin(), g.unsupported.end(), fn) != g.unsupported.end();
}

void copy(char* dst, size_t size, const std::string& s) {
    if (size) std::snprintf(dst, size, "%s", s.c_str());
}

// The frequency levels in the Debian (ROCm 5) layout.
void levels(rsmi_frequencies_t* f, const std::vector<uint64_t>& hz, uint32_t current) {
    *f = {};
    f->num_supported = static_cast<uint32_t>(hz.size());
    f->current = current;
    for (size_t i = 0; i < hz.size() && i < RSMI_MAX_NUM_FREQUENCIES; ++i) f->frequency[i] = hz[i];
}

}  // namespace

#define GPU_OR_FAIL(fn)                         \
    fake::hang_point(fn, static_cast<int>(dv)); \
    Gpu* g = gpu_of(dv);                        \
    if (!g) return RSMI_STATUS_INVALID_ARGS;    \
    if (unsupported(*g, fn)) return RSMI_STATUS_NOT_SUPPORTED

extern "C" {

rsmi_status_t rsmi_init(uint64_t) {
    fake::hang_point(__func__, -1);
    State& s = state();
    s = State{};
    s.init_ok = load_scenario();
    return s.init_ok ? RSMI_STATUS_SUCCESS : RSMI_STATUS_INIT_ERROR;
}

rsmi_status_t rsmi_shut_down() { return RSMI_STATUS_SUCCESS; }

rsmi_status_t rsmi_num_monitor_devices(uint32_t* n) {
    fake::hang_point(__func__, -1);
    if (!state().init_ok) return RSMI_STATUS_INIT_ERROR;
    *n = static_cast<uint32_t>(state().gpus.size());
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_version_get(rsmi_version_t* v) {
    static const char build[] = "fake";
    *v = {state().major, state().minor, state().patch, build};
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_version_str_get(rsmi_sw_component_t c, char* out, uint32_t len) {
    if (c != RSMI_SW_COMP_DRIVER) return RSMI_STATUS_INVALID_ARGS;
    copy(out, len, state().driver_version);
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char** text) {
    static const std::map<int, const char*> names = {{RSMI_STATUS_SUCCESS, "RSMI_STATUS_SUCCESS"},
                                                     {RSMI_STATUS_NOT_SUPPORTED, "RSMI_STATUS_NOT_SUPPORTED"},
                                                     {RSMI_STATUS_INVALID_ARGS, "RSMI_STATUS_INVALID_ARGS"}};
    auto it = names.find(status);
    *text = it == names.end() ? "RSMI_STATUS_UNKNOWN_ERROR" : it->second;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_name_get(uint32_t dv, char* name, size_t len) {
    GPU_OR_FAIL("rsmi_dev_name_get");
    copy(name, len, g->name);
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_id_get(uint32_t dv, uint16_t* id) {
    GPU_OR_FAIL("rsmi_dev_id_get");
    *id = g->device_id;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_vendor_id_get(uint32_t dv, uint16_t* id) {
    GPU_OR_FAIL("rsmi_dev_vendor_id_get");
    *id = g->vendor_id;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_subsystem_id_get(uint32_t dv, uint16_t* id) {
    GPU_OR_FAIL("rsmi_dev_subsystem_id_get");
    *id = g->subsystem_id;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_subsystem_vendor_id_get(uint32_t dv, uint16_t* id) {
    GPU_OR_FAIL("rsmi_dev_subsystem_vendor_id_get");
    *id = g->subsystem_vendor_id;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_serial_number_get(uint32_t dv, char* serial, uint32_t len) {
    GPU_OR_FAIL("rsmi_dev_serial_number_get");
    copy(serial, len, g->serial);
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv, uint64_t* id) {
    GPU_OR_FAIL("rsmi_dev_unique_id_get");
    *id = g->unique_id;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_vbios_version_get(uint32_t dv, char* vbios, uint32_t len) {
    GPU_OR_FAIL("rsmi_dev_vbios_version_get");
    copy(vbios, len, g->vbios);
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv, uint64_t* bdf) {
    GPU_OR_FAIL("rsmi_dev_pci_id_get");
    *bdf = g->bdf;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_topo_get_numa_node_number(uint32_t dv, uint32_t* n) {
    GPU_OR_FAIL("rsmi_topo_get_numa_node_number");
    *n = g->numa_node;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv, rsmi_memory_type_t t, uint64_t* total) {
    GPU_OR_FAIL("rsmi_dev_memory_total_get");
    if (t != RSMI_MEM_TYPE_VRAM) return RSMI_STATUS_NOT_SUPPORTED;
    *total = g->vram_total_bytes;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv, rsmi_memory_type_t t, uint64_t* used) {
    GPU_OR_FAIL("rsmi_dev_memory_usage_get");
    if (t != RSMI_MEM_TYPE_VRAM) return RSMI_STATUS_NOT_SUPPORTED;
    *used = g->vram_used_bytes;
    for (const auto& p : g->processes) *used += p.second;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv, uint32_t* busy) {
    GPU_OR_FAIL("rsmi_dev_busy_percent_get");
    *busy = g->busy_percent;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t dv, uint32_t* busy) {
    GPU_OR_FAIL("rsmi_dev_memory_busy_percent_get");
    *busy = g->memory_busy_percent;
    return RSMI_STATUS_SUCCESS;
}

// The link's levels from Gen1 up to its current generation, at its width.
rsmi_status_t rsmi_dev_pci_bandwidth_get(uint32_t dv, rsmi_pcie_bandwidth_t* b) {
    GPU_OR_FAIL("rsmi_dev_pci_bandwidth_get");
    static const uint64_t rates[] = {2500000000ull, 5000000000ull, 8000000000ull, 16000000000ull, 32000000000ull};
    std::vector<uint64_t> hz(rates, rates + std::min<uint32_t>(g->pcie_gen, 5));
    levels(&b->transfer_rate, hz, static_cast<uint32_t>(hz.size() - 1));
    for (size_t i = 0; i < hz.size(); ++i) b->lanes[i] = g->pcie_width;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_pci_replay_counter_get(uint32_t dv, uint64_t* n) {
    GPU_OR_FAIL("rsmi_dev_pci_replay_counter_get");
    *n = 0;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv, uint32_t, uint64_t* uw) {
    GPU_OR_FAIL("rsmi_dev_power_ave_get");
    *uw = g->power_uw;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_cap_get(uint32_t dv, uint32_t, uint64_t* uw) {
    GPU_OR_FAIL("rsmi_dev_power_cap_get");
    *uw = g->cap_uw;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_cap_default_get(uint32_t dv, uint64_t* uw) {
    GPU_OR_FAIL("rsmi_dev_power_cap_default_get");
    *uw = g->default_cap_uw;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_cap_range_get(uint32_t dv, uint32_t, uint64_t* max, uint64_t* min) {
    GPU_OR_FAIL("rsmi_dev_power_cap_range_get");
    *max = g->max_cap_uw;
    *min = 0;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_gpu_clk_freq_get(uint32_t dv, rsmi_clk_type_t t, rsmi_frequencies_t* f) {
    GPU_OR_FAIL("rsmi_dev_gpu_clk_freq_get");
    std::vector<uint64_t> hz;
    uint32_t current = 0;
    if (t == RSMI_CLK_TYPE_SYS) {
        for (uint64_t mhz : g->sys_clocks_mhz) hz.push_back(mhz * 1000000);
        current = std::min<uint32_t>(g->sys_clock_level, static_cast<uint32_t>(hz.size() - 1));
    } else if (t == RSMI_CLK_TYPE_MEM) {
        hz = {1600000000ull};
    } else {
        return RSMI_STATUS_NOT_SUPPORTED;
    }
    levels(f, hz, current);
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensor, rsmi_temperature_metric_t m, int64_t* mc) {
    GPU_OR_FAIL("rsmi_dev_temp_metric_get");
    if (sensor == RSMI_TEMP_TYPE_JUNCTION) {
        if (m == RSMI_TEMP_CURRENT) *mc = g->junction_mc;
        else if (m == RSMI_TEMP_CRITICAL) *mc = g->junction_crit_mc;
        else if (m == RSMI_TEMP_EMERGENCY) *mc = g->junction_emergency_mc;
        else return RSMI_STATUS_NOT_SUPPORTED;
    } else if (sensor == RSMI_TEMP_TYPE_EDGE && m == RSMI_TEMP_CURRENT) {
        *mc = g->edge_mc;
    } else if (sensor == RSMI_TEMP_TYPE_MEMORY) {
        if (m == RSMI_TEMP_CURRENT) *mc = g->memory_mc;
        else if (m == RSMI_TEMP_CRITICAL) *mc = g->memory_crit_mc;
        else return RSMI_STATUS_NOT_SUPPORTED;
    } else {
        return RSMI_STATUS_NOT_SUPPORTED;
    }
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_fan_speed_get(uint32_t dv, uint32_t, int64_t*) {
    GPU_OR_FAIL("rsmi_dev_fan_speed_get");
    return RSMI_STATUS_NOT_SUPPORTED;  // OAM modules have no fan of their own
}

rsmi_status_t rsmi_dev_ecc_enabled_get(uint32_t dv, uint64_t* mask) {
    GPU_OR_FAIL("rsmi_dev_ecc_enabled_get");
    *mask = g->ecc_enabled_blocks;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_ecc_count_get(uint32_t dv, rsmi_gpu_block_t b, rsmi_error_count_t* c) {
    GPU_OR_FAIL("rsmi_dev_ecc_count_get");
    *c = {};
    for (size_t i = 0; i < std::size(kBlocks); ++i) {
        if (b != (1ull << i)) continue;
        if (auto it = g->ras.find(kBlocks[i]); it != g->ras.end())
            *c = {it->second.correctable, it->second.uncorrectable};
        return RSMI_STATUS_SUCCESS;
    }
    return RSMI_STATUS_INVALID_ARGS;
}

rsmi_status_t rsmi_dev_memory_reserved_pages_get(uint32_t dv, uint32_t* n, rsmi_retired_page_record_t* p) {
    GPU_OR_FAIL("rsmi_dev_memory_reserved_pages_get");
    uint32_t total = g->bad_pages_retired + g->bad_pages_pending;
    for (uint32_t i = 0; p && i < total && i < *n; ++i)
        p[i] = {0x200000000ull + i * 0x1000ull, 4096,
                i < g->bad_pages_retired ? RSMI_MEM_PAGE_STATUS_RESERVED : RSMI_MEM_PAGE_STATUS_PENDING};
    *n = total;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_topo_get_link_type(uint32_t a, uint32_t b, uint64_t* hops, RSMI_IO_LINK_TYPE* type) {
    fake::hang_point(__func__, static_cast<int>(a));
    if (!gpu_of(a) || !gpu_of(b)) return RSMI_STATUS_INVALID_ARGS;
    *hops = 1;
    *type = state().xgmi ? RSMI_IOLINK_TYPE_XGMI : RSMI_IOLINK_TYPE_PCIEXPRESS;
    return RSMI_STATUS_SUCCESS;
}

// KFD's processes: every process of every GPU, then which GPUs a process uses.
rsmi_status_t rsmi_compute_process_info_get(rsmi_process_info_t* procs, uint32_t* n) {
    fake::hang_point(__func__, -1);
    if (!state().init_ok) return RSMI_STATUS_INIT_ERROR;
    std::vector<rsmi_process_info_t> all;
    for (const auto& g : state().gpus)
        for (const auto& [pid, bytes] : g.processes) all.push_back({pid, 0, bytes, 0, 0});
    for (uint32_t i = 0; procs && i < all.size() && i < *n; ++i) procs[i] = all[i];
    *n = static_cast<uint32_t>(all.size());
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_compute_process_gpus_get(uint32_t pid, uint32_t* dv, uint32_t* n) {
    fake::hang_point(__func__, -1);
    std::vector<uint32_t> on;
    for (uint32_t i = 0; i < state().gpus.size(); ++i)
        for (const auto& p : state().gpus[i].processes)
            if (p.first == pid) on.push_back(i);
    if (on.empty()) return RSMI_STATUS_NOT_FOUND;
    for (uint32_t i = 0; dv && i < on.size() && i < *n; ++i) dv[i] = on[i];
    *n = static_cast<uint32_t>(on.size());
    return RSMI_STATUS_SUCCESS;
}

}  // extern "C"
