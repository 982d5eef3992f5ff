#include "gpu/telemetry.hpp"

#include <algorithm>
#include <cmath>

#include "gpu/memory_temperature.hpp"

namespace gpuvet {

using namespace nvml;

namespace {

// Azure's critical Xid list (REFERENCES.md): each means the GPU needs attention.
constexpr std::uint64_t kCriticalXids[] = {48, 56, 57, 58, 62, 63, 64, 65, 68, 69,
                                           73, 74, 79, 80, 81, 92, 119, 120};

void note_absent(GpuTelemetry& g, const std::string& field, const std::string& why) {
    for (const auto& [f, _] : g.absent)
        if (f == field) return;
    g.absent.emplace_back(field, why);
}
void note_absent(GpuTelemetry& g, const std::string& field, const NvmlApi& api, int rc) {
    note_absent(g, field, rc < 0 ? "the driver's NVML lacks this call"
                                 : nvml_absent_reason(rc) + " (" + api.error_name(rc) + ")");
}

}  // namespace

bool is_critical_xid(std::uint64_t xid) {
    return std::find(std::begin(kCriticalXids), std::end(kCriticalXids), xid) != std::end(kCriticalXids);
}

TelemetrySampler::TelemetrySampler(const NvmlApi& api, std::vector<int> gpus, double hz,
                                   Clock::time_point t0)
    : api_(api), indexes_(std::move(gpus)), hz_(std::isfinite(hz) ? std::clamp(hz, 1.0, 20.0) : 1.0), t0_(t0) {
    data_.sample_hz = hz_;
    for (int i : indexes_) data_.gpus.push_back(GpuTelemetry{i, {}, {}, false});
}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::start() {
    if (!api_.ok()) throw Error(ErrorKind::Driver, "NVML is not usable: " + api_.error,
                                "install the NVIDIA driver or set GPUVET_LIBNVML");
    if (int rc = api_.nvmlInit(); rc != NVML_SUCCESS)
        throw NvmlError("nvmlInit_v2", rc, api_.error_name(rc));
    started_ = true;
    devs_.assign(indexes_.size(), nullptr);
    for (size_t k = 0; k < indexes_.size(); ++k) {
        int rc = api_.nvmlDeviceGetHandleByIndex(unsigned(indexes_[k]), &devs_[k]);
        if (rc != NVML_SUCCESS) {
            devs_[k] = nullptr;
            note_absent(data_.gpus[k], "device", api_, rc);
            if (rc == NVML_ERROR_GPU_IS_LOST) data_.gpus[k].lost = true;
        }
    }
    handles_ = devs_;  // the event thread matches events against these, even for lost GPUs
    sample_once();  // a first sample at t0, before the load starts heating anything
    sampler_ = std::thread([this] { sample_loop(); });
    events_ = std::thread([this] { event_loop(); });
}

void TelemetrySampler::stop() {
    stop_ = true;
    if (sampler_.joinable()) sampler_.join();
    if (events_.joinable()) events_.join();
    if (started_) {
        api_.nvmlShutdown();
        started_ = false;
    }
}

TelemetryData TelemetrySampler::snapshot() const {
    std::lock_guard<std::mutex> lk(mu_);
    return data_;
}

std::optional<TelemetrySample> TelemetrySampler::latest(int gpu) const {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& g : data_.gpus)
        if (g.gpu == gpu && !g.samples.empty()) return g.samples.back();
    return std::nullopt;
}

void TelemetrySampler::sample_loop() {
    const auto period = std::chrono::duration<double>(1.0 / hz_);
    auto next = Clock::now() + std::chrono::duration_cast<Clock::duration>(period);
    while (!stop_) {
        // Sleep in short slices so stop() never waits a whole period.
        while (!stop_ && Clock::now() < next)
            std::this_thread::sleep_for(std::min<Clock::duration>(
                std::chrono::milliseconds(20), next - Clock::now()));
        if (stop_) break;
        sample_once();
        next += std::chrono::duration_cast<Clock::duration>(period);
        if (next < Clock::now()) next = Clock::now();  // fell behind (slow driver): don't burst
    }
}

void TelemetrySampler::sample_once() {
    for (size_t k = 0; k < devs_.size(); ++k) {
        nvmlDevice_t dev = devs_[k];
        TelemetrySample s;
        s.t_s = std::chrono::duration<double>(Clock::now() - t0_).count();
        std::vector<std::pair<std::string, int>> failures;
        bool lost = false;
        // Calls one optional NVML function; records why a field is missing.
        auto read = [&](const char* field, auto fn, auto&&... args) -> bool {
            if (!dev) return false;
            if (!fn) { failures.emplace_back(field, -1); return false; }
            int rc = fn(dev, args...);
            if (rc == NVML_SUCCESS) return true;
            if (rc == NVML_ERROR_GPU_IS_LOST) lost = true;
            failures.emplace_back(field, rc);
            return false;
        };
        unsigned u = 0;
        unsigned long long ull = 0;
        if (read("temperature_c", api_.nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU, &u)) s.temperature_c = u;
        std::string mem_temp_absent;
        if (dev) {
            auto mt = read_memory_temperature(api_, dev);
            if (mt.celsius) s.memory_temperature_c = mt.celsius;
            else mem_temp_absent = mt.absent_reason;
            if (mt.rc == NVML_ERROR_GPU_IS_LOST) lost = true;
        }
        if (read("power_w", api_.nvmlDeviceGetPowerUsage, &u)) s.power_w = u * 1e-3;
        if (read("power_limit_w", api_.nvmlDeviceGetEnforcedPowerLimit, &u)) s.power_limit_w = u * 1e-3;
        if (read("sm_clock_mhz", api_.nvmlDeviceGetClockInfo, NVML_CLOCK_SM, &u)) s.sm_clock_mhz = u;
        if (read("mem_clock_mhz", api_.nvmlDeviceGetClockInfo, NVML_CLOCK_MEM, &u)) s.mem_clock_mhz = u;
        nvmlUtilization_t ut{};
        if (read("utilization_pct", api_.nvmlDeviceGetUtilizationRates, &ut)) {
            s.utilization_gpu_pct = ut.gpu;
            s.utilization_mem_pct = ut.memory;
        }
        if (read("clock_reasons", api_.nvmlDeviceGetCurrentClocksEventReasons, &ull)) s.clock_reasons = ull;
        if (read("ecc_uncorrected", api_.nvmlDeviceGetTotalEccErrors, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                 NVML_VOLATILE_ECC, &ull))
            s.ecc_uncorrected = ull;
        if (read("ecc_corrected", api_.nvmlDeviceGetTotalEccErrors, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                 NVML_VOLATILE_ECC, &ull))
            s.ecc_corrected = ull;
        if (read("pcie_replays", api_.nvmlDeviceGetPcieReplayCounter, &u)) s.pcie_replays = u;
        std::lock_guard<std::mutex> lk(mu_);
        GpuTelemetry& g = data_.gpus[k];
        for (const auto& [f, rc] : failures) note_absent(g, f, api_, rc);
        if (!mem_temp_absent.empty()) note_absent(g, "memory_temperature_c", mem_temp_absent);
        if (lost) {
            g.lost = true;
            devs_[k] = nullptr;  // stop asking a GPU that fell off the bus
        }
        if (dev) g.samples.push_back(s);
    }
}

void TelemetrySampler::event_loop() {
    auto set_reason = [&](std::string r) {
        std::lock_guard<std::mutex> lk(mu_);
        data_.xid_absent_reason = std::move(r);
    };
    if (!api_.nvmlEventSetCreate || !api_.nvmlDeviceRegisterEvents || !api_.nvmlEventSetWait) {
        set_reason("the driver's NVML lacks the event-set calls");
        return;
    }
    nvmlEventSet_t set = nullptr;
    if (int rc = api_.nvmlEventSetCreate(&set); rc != NVML_SUCCESS) {
        set_reason("nvmlEventSetCreate failed: " + api_.error_name(rc));
        return;
    }
    int registered = 0;
    std::string why;
    for (auto* dev : handles_) {
        if (!dev) continue;
        int rc = api_.nvmlDeviceRegisterEvents(dev, kEventTypeXidCriticalError, set);
        if (rc == NVML_SUCCESS) ++registered;
        else why = "nvmlDeviceRegisterEvents failed: " + nvml_absent_reason(rc);
    }
    if (registered == 0) set_reason(why.empty() ? "no GPU to watch" : why);
    while (registered && !stop_) {
        nvmlEventData_t ev{};
        int rc = api_.nvmlEventSetWait(set, &ev, 200);  // bounded, so stop() is prompt
        if (rc == NVML_ERROR_TIMEOUT) continue;
        if (rc != NVML_SUCCESS) {
            // A lost GPU can make the wait fail; keep trying for the others, without spinning.
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            continue;
        }
        if (!(ev.eventType & kEventTypeXidCriticalError)) continue;
        double t = std::chrono::duration<double>(Clock::now() - t0_).count();
        std::lock_guard<std::mutex> lk(mu_);
        for (size_t k = 0; k < handles_.size(); ++k)
            if (handles_[k] == ev.device) {
                data_.xids.push_back(XidEvent{indexes_[k], t, ev.eventData});
                break;
            }
    }
    if (api_.nvmlEventSetFree) api_.nvmlEventSetFree(set);
}

std::vector<TimeSeries> to_time_series(const TelemetryData& d) {
    std::vector<TimeSeries> out;
    for (const auto& g : d.gpus) {
        auto add = [&](const char* key, const char* unit, auto get) {
            TimeSeries ts{key, unit, g.gpu, {}, {}};
            for (const auto& s : g.samples)
                if (auto v = get(s)) {
                    ts.t_s.push_back(s.t_s);
                    ts.values.push_back(double(*v));
                }
            if (!ts.values.empty()) out.push_back(std::move(ts));
        };
        add("temperature_c", "C", [](const TelemetrySample& s) { return s.temperature_c; });
        add("memory_temperature_c", "C", [](const TelemetrySample& s) { return s.memory_temperature_c; });
        add("power_w", "W", [](const TelemetrySample& s) { return s.power_w; });
        add("power_limit_w", "W", [](const TelemetrySample& s) { return s.power_limit_w; });
        add("sm_clock_mhz", "MHz", [](const TelemetrySample& s) { return s.sm_clock_mhz; });
        add("mem_clock_mhz", "MHz", [](const TelemetrySample& s) { return s.mem_clock_mhz; });
        add("utilization_gpu_pct", "%", [](const TelemetrySample& s) { return s.utilization_gpu_pct; });
        add("utilization_mem_pct", "%", [](const TelemetrySample& s) { return s.utilization_mem_pct; });
        add("clock_reasons_mask", "bitmask", [](const TelemetrySample& s) { return s.clock_reasons; });
        add("ecc_uncorrected_count", "count", [](const TelemetrySample& s) { return s.ecc_uncorrected; });
        add("ecc_corrected_count", "count", [](const TelemetrySample& s) { return s.ecc_corrected; });
        add("pcie_replay_count", "count", [](const TelemetrySample& s) { return s.pcie_replays; });
        TimeSeries x{"xid", "xid", g.gpu, {}, {}};
        for (const auto& e : d.xids)
            if (e.gpu == g.gpu) {
                x.t_s.push_back(e.t_s);
                x.values.push_back(double(e.xid));
            }
        if (!x.values.empty()) out.push_back(std::move(x));
    }
    return out;
}

}  // namespace gpuvet
