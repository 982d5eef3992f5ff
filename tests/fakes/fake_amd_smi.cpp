// A test double of AMD SMI (libamd_smi.so) driven by a scenario file (GPUVET_FAKE_AMD_SCENARIO,
// TOML; tests/fakes/README.md). No Debian package ships amdsmi.h, so it is built on gpuvet's own
// declarations, which tests/abi holds to the facts recorded from amdsmi.h; every exported function
// is checked against the binding's pointer type below. Every GPU starts as a healthy MI300X OAM
// as real servers report it (values and sources in README.md); a scenario states what differs.
#include <toml++/toml.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fake_hang.hpp"
#include "gpu/bindings/amd_smi_api.hpp"

using namespace gpuvet::amdsmi;

namespace {

struct RasCount {
    uint64_t correctable = 0, uncorrectable = 0, deferred = 0;
};

struct Gpu {
    std::string market_name = "AMD Instinct MI300X";
    uint64_t device_id = 0x74a1;
    uint32_t vendor_id = 0x1002, subvendor_id = 0x1002;
    uint64_t gfx_target_version = 942;
    uint32_t compute_units = 304;
    std::string serial, asic_serial, model_number = "102-G30211-0C", vbios_version = "022.040.003.043.000001";
    std::string vbios_part_number = "113-M3000100-102";
    uint64_t bdf = 0;
    uint32_t numa_node = 0;
    uint64_t vram_total_bytes = 206141652992ull, vram_used_bytes = 297963520ull;
    std::string compute_partition = "SPX", memory_partition = "NPS1";
    uint32_t pcie_max_speed_mts = 32000, pcie_speed_mts = 32000;
    uint16_t pcie_max_width = 16, pcie_width = 16;
    uint64_t pcie_replay_count = 0;
    amdsmi_card_form_factor_t form_factor = AMDSMI_CARD_FORM_FACTOR_OAM;
    double power_cap_w = 750, power_default_cap_w = 750, power_min_cap_w = 0, power_max_cap_w = 750;
    uint32_t power_w = 140;
    uint32_t gfx_clock_mhz = 132, gfx_clock_max_mhz = 2100, mem_clock_mhz = 900, mem_clock_max_mhz = 1300;
    int64_t hotspot_c = 42, edge_c = -1, vram_c = 35, hotspot_crit_c = 105, hotspot_emergency_c = 110,
            vram_crit_c = 95;  // -1: not supported (the MI300X has no edge sensor)
    uint32_t gfx_activity = 0, umc_activity = 0;
    uint64_t ecc_enabled_blocks = 0x7fff;  // UMC ... MCA
    std::map<std::string, RasCount> ras;
    uint32_t bad_pages_retired = 0, bad_pages_pending = 0;
    std::vector<int> xgmi_down;                            // peers whose link has not trained
    std::vector<std::pair<uint32_t, uint64_t>> processes;  // pid, VRAM bytes
    std::vector<std::string> unsupported;                  // AMD SMI calls that answer NOT_SUPPORTED
    // The GPU metrics table: MI300-class GPUs (table 1.6) fill the residency counters and leave the
    // throttle bits N/A; older ones fill the bits (metrics_version = 3: table 1.3, no residencies).
    int metrics_version = 6;
    int64_t throttle_status = -1;  // ASIC-independent bits (amdgpu_smu.h); -1: N/A
    double ppt_residency_percent = 0, thermal_residency_percent = 0;
    uint64_t accumulated = 0, ppt_acc = 0, thermal_acc = 0;  // advanced by every read
};

struct State {
    bool init_ok = false;
    std::string year_version = "24.7.1.0";
    std::string driver_version = "6.8.5";
    std::vector<Gpu> gpus;
};

State& state() {
    static State s;
    return s;
}

const char* kBlockNames[] = {"UMC", "SDMA", "GFX", "MMHUB", "ATHUB", "PCIE_BIF", "HDP",  "XGMI_WAFL", "DF",  "SMN",
                             "SEM", "MP0",  "MP1", "FUSE",  "MCA",   "VCN",      "JPEG", "IH",        "MPIO"};

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    std::fprintf(stderr, "fake AMD SMI: %s: %s\n", where.c_str(), what.c_str());
    throw std::runtime_error(what);
}

template <class T>
T need(const toml::node& n, const std::string& w) {
    if constexpr (std::is_same_v<T, std::string>) {
        if (auto v = n.value<std::string>()) return *v;
    } else if constexpr (std::is_same_v<T, bool>) {
        if (auto v = n.value<bool>()) return *v;
    } else if constexpr (std::is_floating_point_v<T>) {
        if (auto v = n.value<double>()) return static_cast<T>(*v);
    } else {
        if (auto v = n.value<int64_t>()) return static_cast<T>(*v);
    }
    bad(w, "wrong type");
}

void apply_ras(Gpu& g, const toml::table& t, const std::string& w) {
    for (auto&& [block, counts] : t) {
        const auto* c = counts.as_table();
        if (!c) bad(w, "ras." + std::string(block.str()) + " must be a table");
        RasCount rc;
        for (auto&& [k, v] : *c) {
            std::string key(k.str());
            if (key == "correctable") rc.correctable = need<uint64_t>(v, w);
            else if (key == "uncorrectable") rc.uncorrectable = need<uint64_t>(v, w);
            else if (key == "deferred") rc.deferred = need<uint64_t>(v, w);
            else bad(w, "unknown RAS key " + key);
        }
        g.ras[std::string(block.str())] = rc;
    }
}

void apply_list(Gpu& g, const std::string& key, const toml::array& a, const std::string& w) {
    if (key == "xgmi_down") {
        for (auto&& n : a) g.xgmi_down.push_back(need<int>(n, w));
    } else if (key == "unsupported") {
        for (auto&& n : a) g.unsupported.push_back(need<std::string>(n, w));
    } else if (key == "processes") {
        for (auto&& n : a) {
            const auto* p = n.as_table();
            if (!p || !(*p)["pid"] || !(*p)["vram_bytes"]) bad(w, "a process needs pid and vram_bytes");
            g.processes.emplace_back(need<uint32_t>(*(*p)["pid"].node(), w),
                                     need<uint64_t>(*(*p)["vram_bytes"].node(), w));
        }
    } else {
        bad(w, "unknown list " + key);
    }
}

void apply_scalar(Gpu& g, const std::string& k, const toml::node& v, const std::string& w) {
    // clang-format off
    if (k == "market_name") g.market_name = need<std::string>(v, w);
    else if (k == "device_id") g.device_id = need<uint64_t>(v, w);
    else if (k == "gfx_target_version") g.gfx_target_version = need<uint64_t>(v, w);
    else if (k == "compute_units") g.compute_units = need<uint32_t>(v, w);
    else if (k == "metrics_version") g.metrics_version = need<int>(v, w);
    else if (k == "throttle_status") g.throttle_status = need<int64_t>(v, w);
    else if (k == "ppt_residency_percent") g.ppt_residency_percent = need<double>(v, w);
    else if (k == "thermal_residency_percent") g.thermal_residency_percent = need<double>(v, w);
    else if (k == "serial") g.serial = need<std::string>(v, w);
    else if (k == "model_number") g.model_number = need<std::string>(v, w);
    else if (k == "vbios_version") g.vbios_version = need<std::string>(v, w);
    else if (k == "vram_total_bytes") g.vram_total_bytes = need<uint64_t>(v, w);
    else if (k == "vram_used_bytes") g.vram_used_bytes = need<uint64_t>(v, w);
    else if (k == "compute_partition") g.compute_partition = need<std::string>(v, w);
    else if (k == "memory_partition") g.memory_partition = need<std::string>(v, w);
    else if (k == "pcie_max_speed_mts") g.pcie_max_speed_mts = need<uint32_t>(v, w);
    else if (k == "pcie_speed_mts") g.pcie_speed_mts = need<uint32_t>(v, w);
    else if (k == "pcie_max_width") g.pcie_max_width = need<uint16_t>(v, w);
    else if (k == "pcie_width") g.pcie_width = need<uint16_t>(v, w);
    else if (k == "pcie_card") g.form_factor = need<bool>(v, w) ? AMDSMI_CARD_FORM_FACTOR_PCIE : AMDSMI_CARD_FORM_FACTOR_OAM;
    else if (k == "power_cap_w") g.power_cap_w = need<double>(v, w);
    else if (k == "power_default_cap_w") g.power_default_cap_w = need<double>(v, w);
    else if (k == "power_max_cap_w") g.power_max_cap_w = need<double>(v, w);
    else if (k == "power_w") g.power_w = need<uint32_t>(v, w);
    else if (k == "gfx_clock_mhz") g.gfx_clock_mhz = need<uint32_t>(v, w);
    else if (k == "gfx_clock_max_mhz") g.gfx_clock_max_mhz = need<uint32_t>(v, w);
    else if (k == "mem_clock_max_mhz") g.mem_clock_max_mhz = need<uint32_t>(v, w);
    else if (k == "hotspot_c") g.hotspot_c = need<int64_t>(v, w);
    else if (k == "edge_c") g.edge_c = need<int64_t>(v, w);
    else if (k == "vram_c") g.vram_c = need<int64_t>(v, w);
    else if (k == "gfx_activity") g.gfx_activity = need<uint32_t>(v, w);
    else if (k == "umc_activity") g.umc_activity = need<uint32_t>(v, w);
    else if (k == "ecc_enabled_blocks") g.ecc_enabled_blocks = need<uint64_t>(v, w);
    else if (k == "bad_pages_retired") g.bad_pages_retired = need<uint32_t>(v, w);
    else if (k == "bad_pages_pending") g.bad_pages_pending = need<uint32_t>(v, w);
    else bad(w, "unknown key " + k);
    // clang-format on
}

void apply(Gpu& g, const toml::table& t, const std::string& w) {
    for (auto&& [key, v] : t) {
        std::string k(key.str());
        if (k == "ras") apply_ras(g, *v.as_table(), w);
        else if (const auto* a = v.as_array()) apply_list(g, k, *a, w);
        else apply_scalar(g, k, v, w);
    }
}

// The default board: an 8-GPU MI300X platform's bus ids (AMD's reference OAM platform).
const uint8_t kBus[] = {0x05, 0x26, 0x46, 0x65, 0x85, 0xa6, 0xc6, 0xe5};

bool load_scenario() {
    State& s = state();
    const char* path = std::getenv("GPUVET_FAKE_AMD_SCENARIO");
    if (!path || !*path) {
        std::fprintf(stderr, "fake AMD SMI: GPUVET_FAKE_AMD_SCENARIO is not set\n");
        return false;
    }
    try {
        toml::table t = toml::parse_file(path);
        auto n = t["gpu_count"].value<int64_t>();
        if (!n || *n < 0 || *n > 64) bad(path, "gpu_count (0..64) is required");
        s.gpus.assign(static_cast<size_t>(*n), Gpu{});
        for (size_t i = 0; i < s.gpus.size(); ++i) {
            Gpu& g = s.gpus[i];
            g.bdf = (static_cast<uint64_t>(i < 8 ? kBus[i] : 0x10 + i) << 8);
            g.numa_node = i < 4 ? 0 : 1;
            char serial[64];
            std::snprintf(serial, sizeof serial, "PCB0%02zu52301%03zu", i, i + 1);
            g.serial = serial;
            std::snprintf(serial, sizeof serial, "0x%016zx", 0xd1a07a7e5e000000 + i);
            g.asic_serial = serial;
        }
        if (auto* d = t["driver"].as_table()) {
            if (auto v = (*d)["version"].value<std::string>()) s.driver_version = *v;
            if (auto v = (*d)["library_version"].value<std::string>()) s.year_version = *v;
        }
        if (auto* all = t["all"].as_table())
            for (auto& g : s.gpus) apply(g, *all, std::string(path) + " [all]");
        if (auto* gpus = t["gpu"].as_table()) {
            for (auto&& [idx, v] : *gpus) {
                size_t i = std::stoul(std::string(idx.str()));
                if (i >= s.gpus.size()) bad(path, "[gpu." + std::string(idx.str()) + "] beyond gpu_count");
                apply(s.gpus[i], *v.as_table(), std::string(path) + " [gpu." + std::string(idx.str()) + "]");
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fake AMD SMI: %s: %s\n", path, e.what());
        return false;
    }
    return true;
}

int socket_token;  // one socket holds every GPU

Gpu* gpu_of(amdsmi_processor_handle h) {
    auto& g = state().gpus;
    auto* p = static_cast<Gpu*>(h);
    if (!state().init_ok || g.empty() || p < g.data() || p >= g.data() + g.size()) return nullptr;
    return p;
}

bool unsupported(const Gpu& g, const char* fn) {
    for (const auto& u : g.unsupported)
        if (u == fn) return true;
    return false;
}

void copy(char* dst, size_t size, const std::string& s) { std::snprintf(dst, size, "%s", s.c_str()); }

}  // namespace

// GPUVET_FAKE_HANG (fake_hang.hpp) names a GPU by its index in AMD SMI's order.
#define GPU_OR_FAIL(fn)                                                       \
    Gpu* g = gpu_of(h);                                                       \
    fake::hang_point(fn, g ? static_cast<int>(g - state().gpus.data()) : -1); \
    if (!g) return AMDSMI_STATUS_INVAL;                                       \
    if (unsupported(*g, fn)) return AMDSMI_STATUS_NOT_SUPPORTED

extern "C" {

amdsmi_status_t amdsmi_init(uint64_t flags) {
    fake::hang_point(__func__, -1);
    if (!(flags & kInitAmdGpus)) return AMDSMI_STATUS_INVAL;
    // Every init rereads the scenario, so one test process can run several machines in turn.
    State& s = state();
    s = State{};
    s.init_ok = load_scenario();
    return s.init_ok ? AMDSMI_STATUS_SUCCESS : AMDSMI_STATUS_INIT_ERROR;
}

amdsmi_status_t amdsmi_shut_down() {
    fake::hang_point(__func__, -1);
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_socket_handles(uint32_t* count, amdsmi_socket_handle* sockets) {
    fake::hang_point(__func__, -1);
    if (!state().init_ok) return AMDSMI_STATUS_NOT_INIT;
    if (sockets && *count >= 1) sockets[0] = &socket_token;
    *count = 1;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_processor_handles(amdsmi_socket_handle s, uint32_t* count, amdsmi_processor_handle* out) {
    fake::hang_point(__func__, -1);
    if (!state().init_ok) return AMDSMI_STATUS_NOT_INIT;
    if (s != &socket_token) return AMDSMI_STATUS_INVAL;
    auto& gpus = state().gpus;
    if (out)
        for (uint32_t i = 0; i < *count && i < gpus.size(); ++i) out[i] = &gpus[i];
    *count = static_cast<uint32_t>(gpus.size());
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_processor_type(amdsmi_processor_handle h, processor_type_t* t) {
    GPU_OR_FAIL("amdsmi_get_processor_type");
    *t = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_lib_version(amdsmi_version_t* v) {
    fake::hang_point(__func__, -1);
    unsigned y = 0, ma = 0, mi = 0, r = 0;
    std::sscanf(state().year_version.c_str(), "%u.%u.%u.%u", &y, &ma, &mi, &r);
    *v = {y, ma, mi, r, "fake"};
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_driver_info(amdsmi_processor_handle h, amdsmi_driver_info_t* d) {
    GPU_OR_FAIL("amdsmi_get_gpu_driver_info");
    *d = {};
    copy(d->driver_version, sizeof d->driver_version, state().driver_version);
    copy(d->driver_name, sizeof d->driver_name, "amdgpu");
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_asic_info(amdsmi_processor_handle h, amdsmi_asic_info_t* a) {
    GPU_OR_FAIL("amdsmi_get_gpu_asic_info");
    *a = {};
    copy(a->market_name, sizeof a->market_name, g->market_name);
    copy(a->vendor_name, sizeof a->vendor_name, "Advanced Micro Devices Inc. [AMD/ATI]");
    copy(a->asic_serial, sizeof a->asic_serial, g->asic_serial);
    a->vendor_id = g->vendor_id, a->subvendor_id = g->subvendor_id, a->device_id = g->device_id;
    a->oam_id = static_cast<uint32_t>(g - state().gpus.data());
    a->num_of_compute_units = g->compute_units;
    a->target_graphics_version = g->gfx_target_version;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_subsystem_id(amdsmi_processor_handle h, uint16_t* id) {
    GPU_OR_FAIL("amdsmi_get_gpu_subsystem_id");
    *id = static_cast<uint16_t>(g->device_id);  // AMD's boards carry their device id as subsystem id
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_board_info(amdsmi_processor_handle h, amdsmi_board_info_t* b) {
    GPU_OR_FAIL("amdsmi_get_gpu_board_info");
    *b = {};
    copy(b->model_number, sizeof b->model_number, g->model_number);
    copy(b->product_serial, sizeof b->product_serial, g->serial);
    copy(b->product_name, sizeof b->product_name, g->market_name);
    copy(b->manufacturer_name, sizeof b->manufacturer_name, "AMD");
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_vbios_info(amdsmi_processor_handle h, amdsmi_vbios_info_t* v) {
    GPU_OR_FAIL("amdsmi_get_gpu_vbios_info");
    *v = {};
    copy(v->version, sizeof v->version, g->vbios_version);
    copy(v->part_number, sizeof v->part_number, g->vbios_part_number);
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_bdf_id(amdsmi_processor_handle h, uint64_t* bdf) {
    GPU_OR_FAIL("amdsmi_get_gpu_bdf_id");
    *bdf = g->bdf;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_device_uuid(amdsmi_processor_handle h, unsigned int* len, char* uuid) {
    GPU_OR_FAIL("amdsmi_get_gpu_device_uuid");
    if (*len < kGpuUuidSize) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
    std::snprintf(uuid, *len, "%02zxff74a1-0000-1000-80e2-%012zx", static_cast<size_t>(g - state().gpus.data()),
                  static_cast<size_t>(0xd1a07a7e5e00 + (g - state().gpus.data())));
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_topo_get_numa_node_number(amdsmi_processor_handle h, uint32_t* n) {
    GPU_OR_FAIL("amdsmi_topo_get_numa_node_number");
    *n = g->numa_node;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_memory_total(amdsmi_processor_handle h, amdsmi_memory_type_t t, uint64_t* total) {
    GPU_OR_FAIL("amdsmi_get_gpu_memory_total");
    if (t != AMDSMI_MEM_TYPE_VRAM) return AMDSMI_STATUS_NOT_SUPPORTED;
    *total = g->vram_total_bytes;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_memory_usage(amdsmi_processor_handle h, amdsmi_memory_type_t t, uint64_t* used) {
    GPU_OR_FAIL("amdsmi_get_gpu_memory_usage");
    if (t != AMDSMI_MEM_TYPE_VRAM) return AMDSMI_STATUS_NOT_SUPPORTED;
    *used = g->vram_used_bytes;
    for (const auto& p : g->processes) *used += p.second;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_pcie_info(amdsmi_processor_handle h, amdsmi_pcie_info_t* p) {
    GPU_OR_FAIL("amdsmi_get_pcie_info");
    *p = {};
    p->pcie_static.max_pcie_width = g->pcie_max_width;
    p->pcie_static.max_pcie_speed = g->pcie_max_speed_mts;
    p->pcie_static.pcie_interface_version = 5;
    p->pcie_static.slot_type = g->form_factor;
    p->pcie_metric.pcie_width = g->pcie_width;
    p->pcie_metric.pcie_speed = g->pcie_speed_mts;
    p->pcie_metric.pcie_replay_count = g->pcie_replay_count;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_power_cap_info(amdsmi_processor_handle h, uint32_t, amdsmi_power_cap_info_t* c) {
    GPU_OR_FAIL("amdsmi_get_power_cap_info");
    *c = {};
    c->power_cap = static_cast<uint64_t>(g->power_cap_w * 1e6);
    c->default_power_cap = static_cast<uint64_t>(g->power_default_cap_w * 1e6);
    c->min_power_cap = static_cast<uint64_t>(g->power_min_cap_w * 1e6);
    c->max_power_cap = static_cast<uint64_t>(g->power_max_cap_w * 1e6);
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_power_info(amdsmi_processor_handle h, amdsmi_power_info_t* p) {
    GPU_OR_FAIL("amdsmi_get_power_info");
    *p = {};
    p->current_socket_power = g->power_w;
    p->average_socket_power = 0xFFFF;  // MI300: N/A, the current power is the one reported
    p->power_limit = static_cast<uint32_t>(g->power_cap_w);
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_clock_info(amdsmi_processor_handle h, amdsmi_clk_type_t t, amdsmi_clk_info_t* c) {
    GPU_OR_FAIL("amdsmi_get_clock_info");
    *c = {};
    if (t == AMDSMI_CLK_TYPE_SYS) *c = {g->gfx_clock_mhz, 89, g->gfx_clock_max_mhz, 0, 0, {}};
    else if (t == AMDSMI_CLK_TYPE_MEM) *c = {g->mem_clock_mhz, 900, g->mem_clock_max_mhz, 0, 0, {}};
    else return AMDSMI_STATUS_NOT_SUPPORTED;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_temp_metric(amdsmi_processor_handle h, amdsmi_temperature_type_t t,
                                       amdsmi_temperature_metric_t m, int64_t* c) {
    GPU_OR_FAIL("amdsmi_get_temp_metric");
    if (t == AMDSMI_TEMPERATURE_TYPE_HOTSPOT) {
        *c = m == AMDSMI_TEMP_CURRENT     ? g->hotspot_c
             : m == AMDSMI_TEMP_CRITICAL  ? g->hotspot_crit_c
             : m == AMDSMI_TEMP_EMERGENCY ? g->hotspot_emergency_c
                                          : -1;
    } else if (t == AMDSMI_TEMPERATURE_TYPE_VRAM) {
        *c = m == AMDSMI_TEMP_CURRENT ? g->vram_c : m == AMDSMI_TEMP_CRITICAL ? g->vram_crit_c : -1;
    } else if (t == AMDSMI_TEMPERATURE_TYPE_EDGE && m == AMDSMI_TEMP_CURRENT) {
        *c = g->edge_c;
    } else {
        *c = -1;
    }
    return *c < 0 ? AMDSMI_STATUS_NOT_SUPPORTED : AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_activity(amdsmi_processor_handle h, amdsmi_engine_usage_t* u) {
    GPU_OR_FAIL("amdsmi_get_gpu_activity");
    *u = {};
    u->gfx_activity = g->gfx_activity, u->umc_activity = g->umc_activity;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_fan_speed(amdsmi_processor_handle h, uint32_t, int64_t*) {
    GPU_OR_FAIL("amdsmi_get_gpu_fan_speed");
    return AMDSMI_STATUS_NOT_SUPPORTED;  // OAM modules have no fan of their own
}

amdsmi_status_t amdsmi_get_gpu_ecc_enabled(amdsmi_processor_handle h, uint64_t* mask) {
    GPU_OR_FAIL("amdsmi_get_gpu_ecc_enabled");
    *mask = g->ecc_enabled_blocks;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_ecc_count(amdsmi_processor_handle h, amdsmi_gpu_block_t b, amdsmi_error_count_t* c) {
    GPU_OR_FAIL("amdsmi_get_gpu_ecc_count");
    *c = {};
    for (size_t i = 0; i < std::size(kBlockNames); ++i) {
        if (b != (1ul << i)) continue;
        auto it = g->ras.find(kBlockNames[i]);
        if (it != g->ras.end()) *c = {it->second.correctable, it->second.uncorrectable, it->second.deferred, {}};
        return AMDSMI_STATUS_SUCCESS;
    }
    return AMDSMI_STATUS_INVAL;
}

amdsmi_status_t amdsmi_get_gpu_total_ecc_count(amdsmi_processor_handle h, amdsmi_error_count_t* c) {
    GPU_OR_FAIL("amdsmi_get_gpu_total_ecc_count");
    *c = {};
    for (const auto& [name, r] : g->ras) {
        c->correctable_count += r.correctable, c->uncorrectable_count += r.uncorrectable;
        c->deferred_count += r.deferred;
    }
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_bad_page_info(amdsmi_processor_handle h, uint32_t* n, amdsmi_retired_page_record_t* p) {
    GPU_OR_FAIL("amdsmi_get_gpu_bad_page_info");
    uint32_t total = g->bad_pages_retired + g->bad_pages_pending;
    for (uint32_t i = 0; p && i < total && i < *n; ++i) {
        p[i] = {0x100000000ull + i * 0x1000ull, 4096,
                i < g->bad_pages_retired ? AMDSMI_MEM_PAGE_STATUS_RESERVED : AMDSMI_MEM_PAGE_STATUS_PENDING};
    }
    *n = total;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_process_list(amdsmi_processor_handle h, uint32_t* n, amdsmi_proc_info_t* list) {
    GPU_OR_FAIL("amdsmi_get_gpu_process_list");
    uint32_t total = static_cast<uint32_t>(g->processes.size());
    if (list && *n < total) return AMDSMI_STATUS_OUT_OF_RESOURCES;
    for (uint32_t i = 0; list && i < total; ++i) {
        list[i] = {};
        list[i].pid = g->processes[i].first;
        list[i].mem = list[i].memory_usage.vram_mem = g->processes[i].second;
        copy(list[i].name, sizeof list[i].name, "python3");
    }
    *n = total;
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_compute_partition(amdsmi_processor_handle h, char* out, uint32_t len) {
    GPU_OR_FAIL("amdsmi_get_gpu_compute_partition");
    if (len < g->compute_partition.size() + 1) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
    copy(out, len, g->compute_partition);
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_memory_partition(amdsmi_processor_handle h, char* out, uint32_t len) {
    GPU_OR_FAIL("amdsmi_get_gpu_memory_partition");
    if (len < g->memory_partition.size() + 1) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
    copy(out, len, g->memory_partition);
    return AMDSMI_STATUS_SUCCESS;
}

// The metrics table as the library fills it: every field N/A (its type's maximum) but those this
// GPU's table version carries. Each read advances the accumulation counter by 1000 ticks and the
// residencies by their share, so two reads give the scenario's percentages.
amdsmi_status_t amdsmi_get_gpu_metrics_info(amdsmi_processor_handle h, amdsmi_gpu_metrics_t* m) {
    GPU_OR_FAIL("amdsmi_get_gpu_metrics_info");
    std::memset(static_cast<void*>(m), 0xFF, sizeof *m);
    m->common_header = {static_cast<uint16_t>(sizeof *m), 1, static_cast<uint8_t>(g->metrics_version)};
    m->temperature_hotspot = static_cast<uint16_t>(g->hotspot_c);
    m->temperature_mem = static_cast<uint16_t>(g->vram_c);
    m->average_gfx_activity = static_cast<uint16_t>(g->gfx_activity);
    m->average_umc_activity = static_cast<uint16_t>(g->umc_activity);
    m->current_socket_power = static_cast<uint16_t>(g->power_w);
    m->current_gfxclk = static_cast<uint16_t>(g->gfx_clock_mhz);
    if (g->metrics_version >= 3 && g->throttle_status >= 0) {
        m->indep_throttle_status = static_cast<uint64_t>(g->throttle_status);
        m->throttle_status = static_cast<uint32_t>(g->throttle_status);
    }
    if (g->metrics_version >= 6) {
        g->accumulated += 1000;
        g->ppt_acc += static_cast<uint64_t>(g->ppt_residency_percent * 10);
        g->thermal_acc += static_cast<uint64_t>(g->thermal_residency_percent * 10);
        m->accumulation_counter = g->accumulated;
        m->ppt_residency_acc = g->ppt_acc;
        m->socket_thm_residency_acc = g->thermal_acc;
        m->prochot_residency_acc = m->vr_thm_residency_acc = m->hbm_thm_residency_acc = 0;
    }
    return AMDSMI_STATUS_SUCCESS;
}

// Every GPU of the board is joined to every other by one xGMI link (AMD's 8-GPU OAM platform).
amdsmi_status_t amdsmi_get_link_metrics(amdsmi_processor_handle h, amdsmi_link_metrics_t* m) {
    GPU_OR_FAIL("amdsmi_get_link_metrics");
    *m = {};
    auto& gpus = state().gpus;
    int self = static_cast<int>(g - gpus.data());
    for (int peer = 0; peer < static_cast<int>(gpus.size()); ++peer) {
        if (peer == self) continue;
        bool down = false;
        for (int d : g->xgmi_down) down = down || d == peer;
        for (int d : gpus[peer].xgmi_down) down = down || d == self;
        auto& l = m->links[m->num_links++];
        l.bdf = gpus[peer].bdf;
        l.bit_rate = down ? 0 : 32;        // Gb/s per lane
        l.max_bandwidth = down ? 0 : 512;  // Gb/s: 16 lanes at 32 Gb/s
        l.link_type = AMDSMI_LINK_TYPE_XGMI;
    }
    return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_topo_get_link_type(amdsmi_processor_handle a, amdsmi_processor_handle b, uint64_t* hops,
                                          amdsmi_io_link_type_t* t) {
    Gpu *ga = gpu_of(a), *gb = gpu_of(b);
    if (!ga || !gb) return AMDSMI_STATUS_INVAL;
    *hops = 1;
    *t = AMDSMI_IOLINK_TYPE_XGMI;
    return AMDSMI_STATUS_SUCCESS;
}

}  // extern "C"

// The compiler checks every export against the binding's pointer type.
#define SAME(fn) static_assert(std::is_same_v<decltype(&::fn), decltype(gpuvet::AmdSmiApi::fn)>, #fn)
SAME(amdsmi_init);
SAME(amdsmi_shut_down);
SAME(amdsmi_get_socket_handles);
SAME(amdsmi_get_processor_handles);
SAME(amdsmi_get_processor_type);
SAME(amdsmi_get_lib_version);
SAME(amdsmi_get_gpu_driver_info);
SAME(amdsmi_get_gpu_asic_info);
SAME(amdsmi_get_gpu_board_info);
SAME(amdsmi_get_gpu_subsystem_id);
SAME(amdsmi_get_gpu_vbios_info);
SAME(amdsmi_get_gpu_bdf_id);
SAME(amdsmi_get_gpu_device_uuid);
SAME(amdsmi_topo_get_numa_node_number);
SAME(amdsmi_get_gpu_memory_total);
SAME(amdsmi_get_gpu_memory_usage);
SAME(amdsmi_get_pcie_info);
SAME(amdsmi_get_power_cap_info);
SAME(amdsmi_get_power_info);
SAME(amdsmi_get_clock_info);
SAME(amdsmi_get_temp_metric);
SAME(amdsmi_get_gpu_activity);
SAME(amdsmi_get_gpu_fan_speed);
SAME(amdsmi_get_gpu_ecc_enabled);
SAME(amdsmi_get_gpu_ecc_count);
SAME(amdsmi_get_gpu_total_ecc_count);
SAME(amdsmi_get_gpu_bad_page_info);
SAME(amdsmi_get_gpu_process_list);
SAME(amdsmi_get_gpu_compute_partition);
SAME(amdsmi_get_gpu_memory_partition);
SAME(amdsmi_get_link_metrics);
SAME(amdsmi_topo_get_link_type);
SAME(amdsmi_get_gpu_metrics_info);
