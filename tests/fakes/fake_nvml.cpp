// Fake NVML (libnvidia-ml.so.1) driven by a scenario file. Every exported function is defined with
// the signature nvml.h declares, so the compiler checks the ABI. Built twice: the current driver,
// and with FAKE_OLD_DRIVER an R440-era library lacking the newer versioned entry points.
#define NVML_NO_UNVERSIONED_FUNC_DEFS  // declare both the versioned and the legacy names
#pragma GCC visibility push(default)
#include <nvml.h>
#pragma GCC visibility pop

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>

#include "fake_hang.hpp"
#include "scenario.hpp"

namespace {

// One entry of a driver sample buffer: CPU microseconds and the value.
struct Entry {
    unsigned long long ts_us = 0;
    unsigned value = 0;
};

// What the driver accumulates between NVML calls, kept in scenario seconds: the sample buffers,
// the energy counter and the violation-time counters. advance() brings it up to a moment, taking
// the scripted changes (after_s) at their own times so every integral is exact.
struct Accumulated {
    double t_s = 0;           // advanced up to here
    double period_end_s = 0;  // end of the sample period in progress
    double busy_s = 0;        // busy seconds of the period in progress
    double clock_mhz_s = 0;   // SM MHz x seconds of the period in progress
    double energy_mj = 0;     // total energy
    double violation_power_ns = 0, violation_thermal_ns = 0;
    std::deque<Entry> gpu, memory, clock;  // the buffers, oldest first
};

struct Dev {
    fake::Gpu gpu;       // current state: scenario plus changes already due
    uint64_t calls = 0;  // NVML calls that named this device
    size_t changes_applied = 0;
    std::set<size_t> xids_delivered{};
    bool lost_event_delivered = false;
    Accumulated acc{};
};

struct EventSet {
    std::set<Dev*> devices;
};

std::mutex g_mu;
int g_init_count = 0;
fake::Scenario g_sc;
std::vector<Dev> g_devs;
std::set<EventSet*> g_sets;
long long g_epoch_us = 0;  // the CPU clock (microseconds) at scenario second 0

// A driver stamps its samples and counters with the CPU clock (microseconds since 1970), which
// runs at wall-clock speed whatever the scenario's time_scale: scenario seconds / time_scale.
unsigned long long cpu_us(double scenario_s) {
    return static_cast<unsigned long long>(g_epoch_us + std::llround(scenario_s * 1e6 / g_sc.time_scale));
}

// Seconds of [-inf, t] phase-shifted by whole periods that the square wave is busy: differences of
// it give the busy time of any interval.
double wave_busy_until(const fake::Gpu& g, double t) {
    double period = g.load_period_s, on = g.load_duty * period, x = t - g.load_phase_s;
    double k = std::floor(x / period);
    return k * on + std::min(x - k * period, on);
}
double busy_seconds(const fake::Gpu& g, double a, double b) {
    return g.load_period_s > 0 ? wave_busy_until(g, b) - wave_busy_until(g, a) : b - a;
}
// Whether the wave is in its busy phase at t (no wave: always).
bool busy_at(const fake::Gpu& g, double t) {
    if (g.load_period_s <= 0) return true;
    double x = std::fmod(t - g.load_phase_s, g.load_period_s);
    if (x < 0) x += g.load_period_s;
    return x < g.load_duty * g.load_period_s;
}

void integrate(Dev& d, double to_s) {
    const fake::Gpu& g = d.gpu;
    Accumulated& a = d.acc;
    double dt = to_s - a.t_s;
    if (dt <= 0) return;
    double busy = busy_seconds(g, a.t_s, to_s);
    a.busy_s += busy;
    a.clock_mhz_s += g.sm_clock_mhz * dt;
    double idle_w = g.load_period_s > 0 ? g.load_idle_power_w : g.power_draw_w;
    // Energy in wall-clock terms: gpuvet divides it by the wall time between its reads, so under a
    // scenario time_scale the watts stay the scenario's.
    a.energy_mj += (busy * g.power_draw_w + (dt - busy) * idle_w) * 1000.0 / g_sc.time_scale;
    // In wall-clock nanoseconds, as the reference time they are read against.
    const double ns = dt * 1e9 / g_sc.time_scale;
    if (g.clock_event_reasons & 0x4ULL) a.violation_power_ns += ns;     // SW power cap
    if (g.clock_event_reasons & 0x60ULL) a.violation_thermal_ns += ns;  // SW or HW thermal
    a.t_s = to_s;
}

void push_entry(std::deque<Entry>& buf, unsigned long long ts, unsigned value, unsigned cap) {
    buf.push_back({ts, value});
    while (buf.size() > cap) buf.pop_front();
}

// The sample period ending now: its entries go into the buffers.
void close_period(Dev& d) {
    const fake::Gpu& g = d.gpu;
    Accumulated& a = d.acc;
    double period = g.sample_period_s, share = std::clamp(a.busy_s / period, 0.0, 1.0);
    unsigned long long ts = cpu_us(a.t_s);
    unsigned busy = static_cast<unsigned>(std::lround(share * g.utilization_gpu_percent));
    if (!(g.samples_skip_idle && busy == 0)) {
        push_entry(a.gpu, ts, busy, g.sample_buffer_entries);
        push_entry(a.memory, ts, static_cast<unsigned>(std::lround(share * g.utilization_memory_percent)),
                   g.sample_buffer_entries);
    }
    push_entry(a.clock, ts, static_cast<unsigned>(std::lround(a.clock_mhz_s / period)), g.sample_buffer_entries);
    a.busy_s = a.clock_mhz_s = 0;
    a.period_end_s += period;
}

void apply_next_change(Dev& d) {
    auto keys = d.gpu.changes[d.changes_applied].keys;
    fake::apply_gpu_keys(d.gpu, *keys, "change");  // validated at load time
    ++d.changes_applied;
}

// Brings the device's driver-side counters up to scenario second now_s.
void advance(Dev& d, double now_s) {
    Accumulated& a = d.acc;
    for (;;) {
        double change_at = std::numeric_limits<double>::infinity();
        if (d.changes_applied < d.gpu.changes.size() && d.gpu.changes[d.changes_applied].after_s)
            change_at = std::max(*d.gpu.changes[d.changes_applied].after_s, a.t_s);
        double period = d.gpu.sample_period_s;
        // A long gap with nothing scripted in it: only the last buffer's worth of periods is kept,
        // so skip to it (the counters integrate the skipped time in one step).
        double keep_from = now_s - (d.gpu.sample_buffer_entries + 1) * period;
        if (keep_from > a.period_end_s + period && change_at > keep_from) {
            double k = std::floor((keep_from - a.period_end_s) / period);
            integrate(d, a.period_end_s + k * period);
            a.busy_s = a.clock_mhz_s = 0;
            a.period_end_s += (k + 1) * period;
            continue;
        }
        if (change_at <= a.period_end_s && change_at <= now_s) {
            integrate(d, change_at);
            apply_next_change(d);
        } else if (a.period_end_s <= now_s) {
            integrate(d, a.period_end_s);
            close_period(d);
        } else {
            integrate(d, now_s);
            return;
        }
    }
}

bool lost(const Dev& d) { return d.gpu.lost_after_calls && d.calls > *d.gpu.lost_after_calls; }

// A change or Xid is due by call count, or by scenario seconds when it has after_s.
bool due(const fake::Change& c, const Dev& d) {
    return c.after_s ? g_sc.seconds() >= *c.after_s : d.calls > c.after_calls;
}
bool due(const fake::XidEvent& x, const Dev& d) {
    return x.after_s ? g_sc.seconds() >= *x.after_s : d.calls >= x.after_calls;
}

// Looks up a handle, counts the call, applies scripted changes and the lost-GPU rule.
nvmlReturn_t enter(nvmlDevice_t h, Dev** out) {
    if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
    auto* d = reinterpret_cast<Dev*>(h);
    if (g_devs.empty() || d < g_devs.data() || d >= g_devs.data() + g_devs.size()) return NVML_ERROR_INVALID_ARGUMENT;
    ++d->calls;
    advance(*d, g_sc.seconds());
    while (d->changes_applied < d->gpu.changes.size() && due(d->gpu.changes[d->changes_applied], *d))
        apply_next_change(*d);
    // Under the library's lock, as a driver stuck in a call holds up every other caller.
    if (d->gpu.call_delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(d->gpu.call_delay_ms));
    if (lost(*d)) return NVML_ERROR_GPU_IS_LOST;
    *out = d;
    return NVML_SUCCESS;
}

// The GPU index a handle names, -1 for none (GPUVET_FAKE_HANG rules name GPUs by index).
int device_index(nvmlDevice_t h) {
    std::lock_guard<std::mutex> lk(g_mu);
    auto* d = reinterpret_cast<Dev*>(h);
    if (g_devs.empty() || d < g_devs.data() || d >= g_devs.data() + g_devs.size()) return -1;
    return static_cast<int>(d - g_devs.data());
}

// A hang (GPUVET_FAKE_HANG) blocks before the lock: the other GPUs' calls go on.
#define DEVICE(h)                                                       \
    fake::hang_point(__func__, device_index(h));                        \
    std::lock_guard<std::mutex> lock_(g_mu);                            \
    Dev* d_ = nullptr;                                                  \
    if (nvmlReturn_t r_ = enter(h, &d_); r_ != NVML_SUCCESS) return r_; \
    const fake::Gpu& g = d_->gpu;                                       \
    (void)g

#define NEED(p) \
    if (!(p)) return NVML_ERROR_INVALID_ARGUMENT

// An entry point that reports one unsigned int of this GPU's scenario; `expr` reads `g`.
#define UINT_GETTER(fn, expr)                            \
    nvmlReturn_t fn(nvmlDevice_t h, unsigned int* out) { \
        DEVICE(h);                                       \
        NEED(out);                                       \
        *out = (expr);                                   \
        return NVML_SUCCESS;                             \
    }

nvmlReturn_t copy_str(const std::string& s, char* buf, unsigned len) {
    NEED(buf);
    if (len < s.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
    std::memcpy(buf, s.c_str(), s.size() + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t init_locked() {
    if (g_init_count > 0) {
        ++g_init_count;
        return NVML_SUCCESS;
    }
    std::string err;
    auto sc = fake::load_scenario_from_env(err);
    if (!sc) {
        std::fprintf(stderr, "fake NVML: %s\n", err.c_str());
        return NVML_ERROR_UNKNOWN;
    }
    if (!sc->kernel_driver_loaded) return NVML_ERROR_DRIVER_NOT_LOADED;
    g_sc = std::move(*sc);
    g_devs.clear();
    g_devs.reserve(g_sc.gpus.size());
    for (const auto& gpu : g_sc.gpus) {
        Dev d{gpu};
        d.acc.period_end_s = gpu.sample_period_s;
        d.acc.energy_mj = gpu.energy_start_mj;
        g_devs.push_back(std::move(d));
    }
    g_epoch_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count() -
        std::llround(g_sc.seconds() * 1e6 / g_sc.time_scale);
    g_init_count = 1;
    return NVML_SUCCESS;
}

[[maybe_unused]] void fill_pci(const fake::Gpu& g, unsigned& domain, unsigned& bus, unsigned& device) {
    fake::parse_bus_id(g.pci_bus_id, domain, bus, device);
}

nvmlReturn_t fill_pci_info(const std::string& bus_id, unsigned device_id, unsigned vendor_id, unsigned subsys,
                           nvmlPciInfo_t* pci) {
    NEED(pci);
    std::memset(pci, 0, sizeof *pci);
    unsigned dom = 0, bus = 0, dev = 0;
    fake::parse_bus_id(bus_id, dom, bus, dev);
    pci->domain = dom;
    pci->bus = bus;
    pci->device = dev;
    pci->pciDeviceId = (device_id << 16) | vendor_id;
    pci->pciSubSystemId = subsys;
    std::snprintf(pci->busId, sizeof pci->busId, NVML_DEVICE_PCI_BUS_ID_FMT, dom, bus, dev);
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, dom, bus, dev);
    return NVML_SUCCESS;
}

uint64_t process_bytes(const fake::Gpu& g) {
    uint64_t sum = 0;
    for (const auto& p : g.processes) sum += p.used_bytes;
    return sum;
}

// The lowest pid among the children of this process's threads (0: none), from /proc.
unsigned first_child_of_caller() {
    unsigned best = 0;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
        std::ifstream in(task.path() / "children");
        for (unsigned pid = 0; in >> pid;)
            if (pid && (best == 0 || pid < best)) best = pid;
    }
    return best;
}

template <class Info>
nvmlReturn_t list_processes(nvmlDevice_t h, unsigned* count, Info* infos, bool graphics) {
    DEVICE(h);
    NEED(count);
    std::vector<fake::Process> ps;
    for (const auto& p : g.processes) {
        if (p.graphics != graphics) continue;
        fake::Process q = p;
        if (q.child_of_caller && !(q.pid = first_child_of_caller())) continue;
        ps.push_back(q);
    }
    if (*count < ps.size()) {
        *count = static_cast<unsigned>(ps.size());
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = static_cast<unsigned>(ps.size());
    if (!ps.empty()) NEED(infos);
    for (size_t i = 0; i < ps.size(); ++i) {
        std::memset(&infos[i], 0, sizeof(Info));
        infos[i].pid = ps[i].pid;
        infos[i].usedGpuMemory = ps[i].used_bytes;
        if constexpr (sizeof(Info) > sizeof(nvmlProcessInfo_v1_t)) {
            infos[i].gpuInstanceId = 0xFFFFFFFF;
            infos[i].computeInstanceId = 0xFFFFFFFF;
        }
    }
    return NVML_SUCCESS;
}

unsigned mw(double w) { return static_cast<unsigned>(w * 1000.0 + 0.5); }

bool link_ok(const fake::Gpu& g, unsigned link) { return link < g.nvlink_count; }

}  // namespace

extern "C" {

// ---- fake-only hook ------------------------------------------------------------------------------
// Number of NVML calls made so far on GPU `index` (tests use it to place scripted failures).
__attribute__((visibility("default"))) unsigned long long gpuvet_fake_nvml_calls(unsigned index) {
    std::lock_guard<std::mutex> lk(g_mu);
    return index < g_devs.size() ? g_devs[index].calls : 0;
}

// ---- initialisation and system -------------------------------------------------------------------
nvmlReturn_t nvmlInit_v2(void) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    return init_locked();
}
nvmlReturn_t nvmlInit(void) {
    fake::hang_point(__func__, -1);
    return nvmlInit_v2();
}
nvmlReturn_t nvmlInitWithFlags(unsigned int) {
    fake::hang_point(__func__, -1);
    return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
    if (--g_init_count == 0) g_devs.clear();
    return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t r) {
    fake::hang_point(__func__, -1);
    switch (r) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case NVML_ERROR_TIMEOUT: return "Timeout";
        case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
        case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
        default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    return copy_str(g_sc.driver_version, version, length);
}
nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    return copy_str(g_sc.nvml_version, version, length);
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(v);
    *v = g_sc.cuda_driver_version;
    return NVML_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
    fake::hang_point(__func__, -1);
    return nvmlSystemGetCudaDriverVersion(v);
}
#endif

nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    for (const auto& d : g_devs)
        for (const auto& p : d.gpu.processes)
            if (p.pid == pid) return copy_str(p.name, name, length);
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(count);
    *count = static_cast<unsigned>(g_devs.size());
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
    fake::hang_point(__func__, -1);
    return nvmlDeviceGetCount_v2(count);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
    fake::hang_point(__func__, static_cast<int>(index));
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(device && index < g_devs.size());
    Dev& d = g_devs[index];
    ++d.calls;
    if (lost(d)) return NVML_ERROR_GPU_IS_LOST;
    *device = reinterpret_cast<nvmlDevice_t>(&d);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
    fake::hang_point(__func__, static_cast<int>(index));
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(uuid && device);
    for (auto& d : g_devs)
        if (d.gpu.uuid == uuid) {
            *device = reinterpret_cast<nvmlDevice_t>(&d);
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(bus_id && device);
    unsigned a, b, c, x, y, z;
    if (!fake::parse_bus_id(bus_id, a, b, c)) return NVML_ERROR_INVALID_ARGUMENT;
    for (auto& d : g_devs) {
        fake::parse_bus_id(d.gpu.pci_bus_id, x, y, z);
        if (a == x && b == y && c == z) {
            *device = reinterpret_cast<nvmlDevice_t>(&d);
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}
UINT_GETTER(nvmlDeviceGetIndex, static_cast<unsigned>(d_ - g_devs.data()))

// ---- identity ------------------------------------------------------------------------------------
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char* name, unsigned int length) {
    DEVICE(h);
    return copy_str(g.name, name, length);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char* uuid, unsigned int length) {
    DEVICE(h);
    return copy_str(g.uuid, uuid, length);
}
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t h, char* serial, unsigned int length) {
    DEVICE(h);
    return copy_str(g.serial, serial, length);
}
nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t h, char* pn, unsigned int length) {
    DEVICE(h);
    return copy_str(g.board_part_number, pn, length);
}
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t h, char* version, unsigned int length) {
    DEVICE(h);
    return copy_str(g.vbios, version, length);
}
nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t h, char* version, unsigned int length) {
    DEVICE(h);
    if (g.inforom_image.empty()) return NVML_ERROR_NOT_SUPPORTED;  // a board without an InfoROM
    return copy_str(g.inforom_image, version, length);
}
UINT_GETTER(nvmlDeviceGetMinorNumber, g.minor_number)
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t* pci) {
    DEVICE(h);
    return fill_pci_info(g.pci_bus_id, g.pci_device_id, g.pci_vendor_id, g.pci_subsystem_id, pci);
}
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t h, nvmlPciInfoExt_t* pci) {
    DEVICE(h);
    NEED(pci);
    if (pci->version != nvmlPciInfoExt_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    unsigned dom = 0, bus = 0, dev = 0;
    fill_pci(g, dom, bus, dev);
    pci->domain = dom;
    pci->bus = bus;
    pci->device = dev;
    pci->pciDeviceId = (g.pci_device_id << 16) | g.pci_vendor_id;
    pci->pciSubSystemId = g.pci_subsystem_id;
    pci->baseClass = 0x03;  // display controller
    pci->subClass = 0x02;   // 3D controller, as datacenter GPUs report
    std::snprintf(pci->busId, sizeof pci->busId, NVML_DEVICE_PCI_BUS_ID_FMT, dom, bus, dev);
    return NVML_SUCCESS;
}
#endif
nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t h, nvmlDeviceArchitecture_t* arch) {
    DEVICE(h);
    NEED(arch);
    // NVML_DEVICE_ARCH_* from the compute capability major: 7 Volta, 8 Ampere, 9 Hopper, 10 Blackwell.
    switch (g.cc_major) {
        case 7: *arch = g.cc_minor >= 5 ? NVML_DEVICE_ARCH_TURING : NVML_DEVICE_ARCH_VOLTA; break;
        case 8: *arch = g.cc_minor == 9 ? NVML_DEVICE_ARCH_ADA : NVML_DEVICE_ARCH_AMPERE; break;
        case 9: *arch = NVML_DEVICE_ARCH_HOPPER; break;
        case 10:
        case 12: *arch = NVML_DEVICE_ARCH_BLACKWELL; break;
        default: *arch = NVML_DEVICE_ARCH_UNKNOWN;
    }
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int* major, int* minor) {
    DEVICE(h);
    NEED(major && minor);
    *major = static_cast<int>(g.cc_major);
    *minor = static_cast<int>(g.cc_minor);
    return NVML_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
UINT_GETTER(nvmlDeviceGetNumGpuCores, g.gpu_cores)
#endif
UINT_GETTER(nvmlDeviceGetMultiGpuBoard, g.multi_gpu_board ? 1 : 0)

// ---- memory and ECC ------------------------------------------------------------------------------
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t* m) {
    DEVICE(h);
    NEED(m);
    // v1 counts the driver's reservation as used.
    m->total = g.memory_total_bytes;
    m->used = g.memory_reserved_bytes + g.memory_used_bytes + process_bytes(g);
    m->free = m->total > m->used ? m->total - m->used : 0;
    return NVML_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, nvmlMemory_v2_t* m) {
    DEVICE(h);
    NEED(m);
    if (m->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->total = g.memory_total_bytes;
    m->reserved = g.memory_reserved_bytes;
    m->used = g.memory_used_bytes + process_bytes(g);
    uint64_t taken = m->reserved + m->used;
    m->free = m->total > taken ? m->total - taken : 0;
    return NVML_SUCCESS;
}
#endif
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t h, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
    DEVICE(h);
    NEED(current && pending);
    if (!g.ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
    *current = g.ecc_enabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    *pending = g.ecc_pending_enabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t h, nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter,
                                         unsigned long long* count) {
    DEVICE(h);
    NEED(count);
    if (!g.ecc_supported || !g.ecc_enabled) return NVML_ERROR_NOT_SUPPORTED;
    bool corrected = type == NVML_MEMORY_ERROR_TYPE_CORRECTED;
    NEED(corrected || type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
    NEED(counter == NVML_VOLATILE_ECC || counter == NVML_AGGREGATE_ECC);
    if (counter == NVML_VOLATILE_ECC) *count = corrected ? g.ecc_volatile_corrected : g.ecc_volatile_uncorrected;
    else *count = corrected ? g.ecc_aggregate_corrected : g.ecc_aggregate_uncorrected;
    return NVML_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t h, unsigned int* corr, unsigned int* unc, unsigned int* pending,
                                       unsigned int* failure) {
    DEVICE(h);
    NEED(corr && unc && pending && failure);
    if (!g.ecc_supported || !g.remapped_rows_supported) return NVML_ERROR_NOT_SUPPORTED;
    *corr = g.remapped_rows_correctable;
    *unc = g.remapped_rows_uncorrectable;
    *pending = g.remap_pending ? 1 : 0;
    *failure = g.remap_failure ? 1 : 0;
    return NVML_SUCCESS;
}
#endif

namespace {
nvmlReturn_t retired(nvmlDevice_t h, nvmlPageRetirementCause_t cause, unsigned* count, unsigned long long* addrs,
                     unsigned long long* stamps) {
    DEVICE(h);
    NEED(count);
    if (!g.ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
    // Hopper replaced page retirement with row remapping; the scenario can still script pages.
    unsigned n = cause == NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS ? g.retired_pages_sbe
                 : cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR         ? g.retired_pages_dbe
                                                                                    : ~0u;
    NEED(n != ~0u);
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = n;
    for (unsigned i = 0; i < n; ++i) {
        if (addrs) addrs[i] = 0x1000 + 0x10 * i + (cause << 20);
        if (stamps) stamps[i] = 1700000000ull + i;
    }
    return NVML_SUCCESS;
}
}  // namespace
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t h, nvmlPageRetirementCause_t cause, unsigned int* count,
                                       unsigned long long* addresses) {
    return retired(h, cause, count, addresses, nullptr);
}
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t h, nvmlPageRetirementCause_t cause, unsigned int* count,
                                          unsigned long long* addresses, unsigned long long* timestamps) {
    return retired(h, cause, count, addresses, timestamps);
}
#endif
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t h, nvmlEnableState_t* pending) {
    DEVICE(h);
    NEED(pending);
    if (!g.ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
    *pending = g.retired_pages_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

// ---- PCIe ----------------------------------------------------------------------------------------
UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, g.pcie_gen_current)
UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, g.pcie_width_current)
// "Max" is what this device and this system can reach together; "GpuMax" the device alone.
UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, std::min(g.pcie_gen_gpu_max, g.host_pcie_gen_max))
UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, std::min(g.pcie_width_gpu_max, g.host_pcie_width_max))
#ifndef FAKE_OLD_DRIVER
UINT_GETTER(nvmlDeviceGetGpuMaxPcieLinkGeneration, g.pcie_gen_gpu_max)
#endif
UINT_GETTER(nvmlDeviceGetPcieReplayCounter, g.pcie_replay_counter)
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t h, nvmlPcieUtilCounter_t counter, unsigned int* value) {
    DEVICE(h);
    NEED(value);
    switch (counter) {
        case NVML_PCIE_UTIL_TX_BYTES: *value = g.pcie_tx_kb_per_s; break;
        case NVML_PCIE_UTIL_RX_BYTES: *value = g.pcie_rx_kb_per_s; break;
        default: return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
}
#endif

// ---- NVLink --------------------------------------------------------------------------------------
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t h, unsigned int link, nvmlEnableState_t* active) {
    DEVICE(h);
    NEED(active);
    if (g.nvlink_count == 0) return NVML_ERROR_NOT_SUPPORTED;
    NEED(link_ok(g, link));
    bool down = std::find(g.nvlink_down.begin(), g.nvlink_down.end(), link) != g.nvlink_down.end();
    *active = down ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t h, unsigned int link, unsigned int* version) {
    DEVICE(h);
    NEED(version);
    if (g.nvlink_count == 0) return NVML_ERROR_NOT_SUPPORTED;
    NEED(link_ok(g, link));
    // nvmlNvlinkVersion_t codes: NVLink 1.0 -> 1, 2.0 -> 2, 3.0 -> 4, 4.0 -> 6, 5.0 -> 7.
    static const unsigned codes[] = {0, 1, 2, 4, 6, 7, 8};
    *version = g.nvlink_version < 7 ? codes[g.nvlink_version] : 0;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t h, unsigned int link, nvmlPciInfo_t* pci) {
    DEVICE(h);
    if (g.nvlink_count == 0) return NVML_ERROR_NOT_SUPPORTED;
    NEED(link_ok(g, link));
    std::string bus = link < g.nvlink_remote_bus_ids.size() ? g.nvlink_remote_bus_ids[link] : "00000000:05:00.0";
    // NVSwitch device id 0x22A3 (H100-generation NVSwitch).
    unsigned devid = g.nvlink_remote_type == "switch" ? 0x22A3 : g.pci_device_id;
    return fill_pci_info(bus, devid, 0x10DE, 0, pci);
}
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t h, unsigned int link, nvmlIntNvLinkDeviceType_t* type) {
    DEVICE(h);
    NEED(type);
    if (g.nvlink_count == 0) return NVML_ERROR_NOT_SUPPORTED;
    NEED(link_ok(g, link));
    *type = g.nvlink_remote_type == "switch" ? NVML_NVLINK_DEVICE_TYPE_SWITCH : NVML_NVLINK_DEVICE_TYPE_GPU;
    return NVML_SUCCESS;
}

// ---- modes ---------------------------------------------------------------------------------------
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t h, nvmlEnableState_t* mode) {
    DEVICE(h);
    NEED(mode);
    *mode = g.persistence_mode ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t h, nvmlComputeMode_t* mode) {
    DEVICE(h);
    NEED(mode);
    *mode = g.compute_mode == "prohibited"          ? NVML_COMPUTEMODE_PROHIBITED
            : g.compute_mode == "exclusive_process" ? NVML_COMPUTEMODE_EXCLUSIVE_PROCESS
                                                    : NVML_COMPUTEMODE_DEFAULT;
    return NVML_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int* current, unsigned int* pending) {
    DEVICE(h);
    NEED(current && pending);
    *current = g.mig_mode ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    *pending = g.mig_pending ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
}
#endif
nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t h, nvmlGpuVirtualizationMode_t* mode) {
    DEVICE(h);
    NEED(mode);
    const std::string& v = g.virtualization_mode;
    *mode = v == "passthrough" ? NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH
            : v == "vgpu"      ? NVML_GPU_VIRTUALIZATION_MODE_VGPU
            : v == "host_vgpu" ? NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU
            : v == "host_vsga" ? NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA
                               : NVML_GPU_VIRTUALIZATION_MODE_NONE;
    return NVML_SUCCESS;
}

// ---- power, clocks, thermals, utilisation --------------------------------------------------------
// Point reads: the state at the instant of the call (the wave's phase included).
UINT_GETTER(nvmlDeviceGetPowerUsage, mw(busy_at(g, d_->acc.t_s) ? g.power_draw_w : g.load_idle_power_w))
UINT_GETTER(nvmlDeviceGetPowerManagementLimit, mw(g.power_limit_w))
UINT_GETTER(nvmlDeviceGetPowerManagementDefaultLimit, mw(g.power_default_limit_w))
nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t h, unsigned int* lo, unsigned int* hi) {
    DEVICE(h);
    NEED(lo && hi);
    *lo = mw(g.power_min_limit_w);
    *hi = mw(g.power_max_limit_w);
    return NVML_SUCCESS;
}
UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, mw(g.power_enforced_limit_w))
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, nvmlClockType_t type, unsigned int* mhz) {
    DEVICE(h);
    NEED(mhz);
    switch (type) {
        case NVML_CLOCK_GRAPHICS:
        case NVML_CLOCK_SM: *mhz = g.sm_clock_mhz; break;
        case NVML_CLOCK_MEM: *mhz = g.mem_clock_mhz; break;
        case NVML_CLOCK_VIDEO: *mhz = g.video_clock_mhz; break;
        default: return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, nvmlClockType_t type, unsigned int* mhz) {
    DEVICE(h);
    NEED(mhz);
    switch (type) {
        case NVML_CLOCK_GRAPHICS:
        case NVML_CLOCK_SM: *mhz = g.max_sm_clock_mhz; break;
        case NVML_CLOCK_MEM: *mhz = g.max_mem_clock_mhz; break;
        case NVML_CLOCK_VIDEO: *mhz = g.max_video_clock_mhz; break;
        default: return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t h, unsigned long long* reasons) {
    DEVICE(h);
    NEED(reasons);
    *reasons = g.clock_event_reasons;
    return NVML_SUCCESS;
}
#endif
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h, unsigned long long* reasons) {
    DEVICE(h);
    NEED(reasons);
    *reasons = g.clock_event_reasons;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, nvmlTemperatureSensors_t sensor, unsigned int* temp) {
    DEVICE(h);
    NEED(temp);
    NEED(sensor == NVML_TEMPERATURE_GPU);
    *temp = g.temperature_c;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t h, nvmlTemperatureThresholds_t type, unsigned int* temp) {
    DEVICE(h);
    NEED(temp);
    switch (type) {
        case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: *temp = g.temp_shutdown_c; break;
        case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: *temp = g.temp_slowdown_c; break;
        case NVML_TEMPERATURE_THRESHOLD_MEM_MAX: *temp = g.temp_mem_max_c; break;
        case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: *temp = g.temp_gpu_max_c; break;
        default: return NVML_ERROR_NOT_SUPPORTED;
    }
    return NVML_SUCCESS;
}
#ifndef FAKE_OLD_DRIVER
// Field values: each entry gets its own status; the call fails only for a bad device or array.
// Served: the memory temperature and the NVLink data counters summed over all links (scopeId
// UINT_MAX); any other field id or scope is NOT_SUPPORTED in its entry.
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int count, nvmlFieldValue_t* values) {
    DEVICE(h);
    NEED(values && count >= 0);
    const long long now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    for (int i = 0; i < count; ++i) {
        nvmlFieldValue_t& v = values[i];
        v.timestamp = now_us;
        v.latencyUsec = 0;
        std::memset(&v.value, 0, sizeof v.value);
        bool nvlink =
            v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX || v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
        if (v.fieldId == NVML_FI_DEV_MEMORY_TEMP && g.memory_temperature_supported) {
            v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
            v.value.uiVal = g.memory_temperature_c;
            v.nvmlReturn = NVML_SUCCESS;
        } else if (nvlink && g.nvlink_count > 0 && v.scopeId == UINT_MAX) {  // the sum over all links
            v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
            v.value.ullVal = v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX ? g.nvlink_rx_kib : g.nvlink_tx_kib;
            v.nvmlReturn = NVML_SUCCESS;
        } else {
            v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
            v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
    }
    return NVML_SUCCESS;
}
#endif
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t h, unsigned int* speed) {
    DEVICE(h);
    NEED(speed);
    if (!g.fan_speed_percent) return NVML_ERROR_NOT_SUPPORTED;
    *speed = *g.fan_speed_percent;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t* u) {
    DEVICE(h);
    NEED(u);
    bool busy = busy_at(g, d_->acc.t_s);
    u->gpu = busy ? g.utilization_gpu_percent : 0;
    u->memory = busy ? g.utilization_memory_percent : 0;
    return NVML_SUCCESS;
}

// ---- the driver's sample buffers and counters ----------------------------------------------------
// Utilization and SM clock samples newer than lastSeen, oldest first; NOT_FOUND when there are none
// (an idle GPU with samples_skip_idle), a sizing call when `samples` is null.
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t h, nvmlSamplingType_t type, unsigned long long last_seen,
                                  nvmlValueType_t* value_type, unsigned int* count, nvmlSample_t* samples) {
    DEVICE(h);
    NEED(value_type && count);
    if (!g.samples_supported) return NVML_ERROR_NOT_SUPPORTED;
    const std::deque<Entry>* buf = type == NVML_GPU_UTILIZATION_SAMPLES      ? &d_->acc.gpu
                                   : type == NVML_MEMORY_UTILIZATION_SAMPLES ? &d_->acc.memory
                                   : type == NVML_PROCESSOR_CLK_SAMPLES      ? &d_->acc.clock
                                                                             : nullptr;
    if (!buf) return NVML_ERROR_NOT_SUPPORTED;
    auto first = std::find_if(buf->begin(), buf->end(), [&](const Entry& e) { return e.ts_us > last_seen; });
    auto n = static_cast<unsigned>(buf->end() - first);
    if (n == 0) return NVML_ERROR_NOT_FOUND;
    *value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (!samples) {
        *count = n;
        return NVML_SUCCESS;
    }
    NEED(*count > 0);
    unsigned k = std::min(*count, n);
    for (unsigned i = 0; i < k; ++i, ++first) {
        samples[i].timeStamp = first->ts_us;
        samples[i].sampleValue.uiVal = first->value;
    }
    *count = k;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h, unsigned long long* energy) {
    DEVICE(h);
    NEED(energy);
    if (!g.energy_supported) return NVML_ERROR_NOT_SUPPORTED;
    *energy = static_cast<unsigned long long>(d_->acc.energy_mj);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t h, nvmlPerfPolicyType_t policy, nvmlViolationTime_t* t) {
    DEVICE(h);
    NEED(t);
    if (!g.violation_supported) return NVML_ERROR_NOT_SUPPORTED;
    double ns = policy == NVML_PERF_POLICY_POWER     ? d_->acc.violation_power_ns
                : policy == NVML_PERF_POLICY_THERMAL ? d_->acc.violation_thermal_ns
                                                     : 0.0;
    t->referenceTime = cpu_us(d_->acc.t_s);
    t->violationTime = static_cast<unsigned long long>(ns);
    return NVML_SUCCESS;
}

// ---- processes -----------------------------------------------------------------------------------
#ifndef FAKE_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h, unsigned int* n, nvmlProcessInfo_t* p) {
    fake::hang_point(__func__, device_index(h));
    return list_processes(h, n, p, false);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t h, unsigned int* n, nvmlProcessInfo_v2_t* p) {
    fake::hang_point(__func__, device_index(h));
    return list_processes(h, n, p, false);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t h, unsigned int* n, nvmlProcessInfo_t* p) {
    fake::hang_point(__func__, device_index(h));
    return list_processes(h, n, p, true);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t h, unsigned int* n, nvmlProcessInfo_v2_t* p) {
    fake::hang_point(__func__, device_index(h));
    return list_processes(h, n, p, true);
}
#endif
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t h, unsigned int* n, nvmlProcessInfo_v1_t* p) {
    fake::hang_point(__func__, device_index(h));
    return list_processes(h, n, p, false);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t h, unsigned int* n, nvmlProcessInfo_v1_t* p) {
    fake::hang_point(__func__, device_index(h));
    return list_processes(h, n, p, true);
}

// ---- host placement and topology -----------------------------------------------------------------
#ifndef FAKE_OLD_DRIVER
UINT_GETTER(nvmlDeviceGetNumaNodeId, static_cast<unsigned>(g.numa_node))
#endif
nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t h, unsigned int size, unsigned long* set) {
    DEVICE(h);
    NEED(set && size > 0);
    std::memset(set, 0, size * sizeof(unsigned long));
    const unsigned bits = sizeof(unsigned long) * 8;
    for (unsigned cpu : fake::parse_cpu_list(g.cpu_affinity))
        if (cpu / bits < size) set[cpu / bits] |= 1ul << (cpu % bits);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t h1, nvmlDevice_t h2, nvmlGpuTopologyLevel_t* level) {
    fake::hang_point(__func__, device_index(h1));
    unsigned a, b;
    {
        DEVICE(h1);
        a = static_cast<unsigned>(d_ - g_devs.data());
    }
    DEVICE(h2);
    NEED(level);
    b = static_cast<unsigned>(d_ - g_devs.data());
    *level = static_cast<nvmlGpuTopologyLevel_t>(fake::topology_level(g_sc, a, b));
    return NVML_SUCCESS;
}

// ---- events --------------------------------------------------------------------------------------
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(set);
    auto* s = new EventSet;
    g_sets.insert(s);
    *set = reinterpret_cast<nvmlEventSet_t>(s);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t h, unsigned long long* types) {
    DEVICE(h);
    NEED(types);
    *types = nvmlEventTypeXidCriticalError | nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t h, unsigned long long types, nvmlEventSet_t set) {
    DEVICE(h);
    auto* s = reinterpret_cast<EventSet*>(set);
    NEED(g_sets.count(s));
    if (types & nvmlEventTypeXidCriticalError) s->devices.insert(d_);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    auto* s = reinterpret_cast<EventSet*>(set);
    NEED(g_sets.erase(s));
    delete s;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
    fake::hang_point(__func__, -1);
    // Scripted Xids become due by call count; a GPU that fell off the bus reports Xid 79 once.
    auto poll = [&]() -> bool {
        auto* s = reinterpret_cast<EventSet*>(set);
        for (Dev* d : s->devices) {
            const auto& xs = d->gpu.xid_events;
            for (size_t i = 0; i < xs.size(); ++i)
                if (due(xs[i], *d) && !d->xids_delivered.count(i)) {
                    d->xids_delivered.insert(i);
                    *data = nvmlEventData_t{reinterpret_cast<nvmlDevice_t>(d), nvmlEventTypeXidCriticalError, xs[i].xid,
                                            0xFFFFFFFF, 0xFFFFFFFF};
                    return true;
                }
            if (lost(*d) && !d->lost_event_delivered) {
                d->lost_event_delivered = true;
                *data = nvmlEventData_t{reinterpret_cast<nvmlDevice_t>(d), nvmlEventTypeXidCriticalError, 79,
                                        0xFFFFFFFF, 0xFFFFFFFF};
                return true;
            }
        }
        return false;
    };
    {
        std::lock_guard<std::mutex> lk(g_mu);
        if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
        NEED(data && g_sets.count(reinterpret_cast<EventSet*>(set)));
        if (poll()) return NVML_SUCCESS;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(timeoutms));
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count || !g_sets.count(reinterpret_cast<EventSet*>(set))) return NVML_ERROR_UNINITIALIZED;
    return poll() ? NVML_SUCCESS : NVML_ERROR_TIMEOUT;
}
nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
    fake::hang_point(__func__, -1);
    return nvmlEventSetWait_v2(set, data, timeoutms);
}

// ---- GPM (absent from the R440-era library) ----------------------------------------------------
#ifndef FAKE_OLD_DRIVER
}  // extern "C"
struct nvmlGpmSample_st {
    Dev* dev = nullptr;  // null until nvmlGpmSampleGet filled it
    double values[4] = {};
};
namespace {
bool gpm_on(const fake::Gpu& g) { return g.gpm_supported.value_or(g.cc_major >= 9) && !g.mig_mode; }
std::set<nvmlGpmSample_t> g_gpm_samples;
}  // namespace
extern "C" {
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t h, nvmlGpmSupport_t* support) {
    DEVICE(h);
    NEED(support);
    // The raw 1, as nvml.h defines it (not NVML_STRUCT_VERSION).
    if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    support->isSupportedDevice = g.gpm_supported.value_or(g.cc_major >= 9) ? 1 : 0;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(sample);
    *sample = new nvmlGpmSample_st;
    g_gpm_samples.insert(*sample);
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    NEED(g_gpm_samples.erase(sample));
    delete sample;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t h, nvmlGpmSample_t sample) {
    DEVICE(h);
    NEED(g_gpm_samples.count(sample));
    if (!gpm_on(g)) return NVML_ERROR_NOT_SUPPORTED;
    sample->dev = d_;
    sample->values[0] = g.gpm_sm_activity_percent;
    sample->values[1] = g.gpm_sm_occupancy_percent;
    sample->values[2] = g.gpm_tensor_activity_percent;
    sample->values[3] = g.gpm_dram_bandwidth_percent;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_init_count) return NVML_ERROR_UNINITIALIZED;
    NEED(m);
    if (m->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    NEED(m->numMetrics <= NVML_GPM_METRIC_MAX && g_gpm_samples.count(m->sample1) && g_gpm_samples.count(m->sample2));
    NEED(m->sample1->dev && m->sample1->dev == m->sample2->dev);  // two filled samples of one GPU
    if (lost(*m->sample2->dev)) return NVML_ERROR_GPU_IS_LOST;
    for (unsigned i = 0; i < m->numMetrics; ++i) {
        nvmlGpmMetric_t& e = m->metrics[i];
        int slot = e.metricId == NVML_GPM_METRIC_SM_UTIL           ? 0
                   : e.metricId == NVML_GPM_METRIC_SM_OCCUPANCY    ? 1
                   : e.metricId == NVML_GPM_METRIC_ANY_TENSOR_UTIL ? 2
                   : e.metricId == NVML_GPM_METRIC_DRAM_BW_UTIL    ? 3
                                                                   : -1;
        e.nvmlReturn = slot < 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
        e.value = slot < 0 ? 0 : m->sample2->values[slot];
    }
    return NVML_SUCCESS;
}
#endif

}  // extern "C"
