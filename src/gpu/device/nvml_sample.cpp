// NvmlDevice::sample(): the live facts of one GPU, only the readings asked for.
#include <algorithm>
#include <cmath>

#include "gpu/device/nvml_backend.hpp"
#include "gpu/device/nvml_decode.hpp"
#include "gpu/device/nvml_memory_temperature.hpp"

namespace gpuvet {

using namespace nvml;
using namespace nvml_backend;

std::string NvmlDevice::no_answer() const { return r_.dev ? handle_no_answer(nvml_driver_lib(), r_.dev) : ""; }

DeviceSample NvmlDevice::sample(unsigned readings) {
    DeviceSample s;
    s.taken_at = std::chrono::steady_clock::now();
    if (!open_error_.empty()) return s;  // every fact stays "not read", as describe() says why
    if (readings & kReadUtilization) interval_.read_utilization(s);
    if (readings & kReadMemory) {
        MemoryInfo m = read_memory();
        s.memory_used_bytes = m.used;
        s.memory_free_bytes = m.free;
    }
    if (readings & (kReadPower | kReadClocks)) sample_power_clocks(s);
    if (readings & kReadThermal) sample_thermal(s);
    if (readings & (kReadPcieLink | kReadPcieThroughput)) sample_pcie(s, readings);
    if (readings & kReadNvLinkThroughput) sample_nvlink_throughput(s);
    if (readings & kReadEcc) sample_ecc(s);
    if (readings & kReadRetirement) sample_retirement(s);
    if (readings & kReadProcesses) sample_processes(s);
    if (readings & kReadGpm) gpm_.read(s);
    return s;
}

NvmlDevice::MemoryInfo NvmlDevice::read_memory() {
    const NvmlApi& a = r_.api;
    MemoryInfo m;
    // v2 reports what the driver reserves; v1 folds it into "used".
    if (a.nvmlDeviceGetMemoryInfo_v2) {
        nvmlMemory_v2_t v{};
        v.version = kMemory_v2;
        if (r_.call("nvmlDeviceGetMemoryInfo_v2", a.nvmlDeviceGetMemoryInfo_v2, &v).empty()) {
            m.total = v.total, m.reserved = v.reserved, m.used = v.used, m.free = v.free;
            return m;
        }
    }
    nvmlMemory_t v{};
    std::string why = r_.call("nvmlDeviceGetMemoryInfo", a.nvmlDeviceGetMemoryInfo, &v);
    m.total = fact_of(why, static_cast<std::uint64_t>(v.total));
    m.used = fact_of(why, static_cast<std::uint64_t>(v.used));
    m.free = fact_of(why, static_cast<std::uint64_t>(v.free));
    m.reserved =
        Fact<std::uint64_t>::absent(a.nvmlDeviceGetMemoryInfo_v2 ? why : driver_lacks("nvmlDeviceGetMemoryInfo_v2"));
    return m;
}

void NvmlDevice::sample_power_clocks(DeviceSample& s) {
    const NvmlApi& a = r_.api;
    interval_.read_power(s);
    s.power_limit_w =
        r_.fact("nvmlDeviceGetPowerManagementLimit", a.nvmlDeviceGetPowerManagementLimit, milliwatts_to_w);
    s.power_enforced_limit_w =
        r_.fact("nvmlDeviceGetEnforcedPowerLimit", a.nvmlDeviceGetEnforcedPowerLimit, milliwatts_to_w);
    auto clock = [&](nvmlClockType_t t) {
        return r_.fact("nvmlDeviceGetClockInfo", a.nvmlDeviceGetClockInfo, as_int, t);
    };
    interval_.read_clocks(s);
    s.clock_mem_mhz = clock(NVML_CLOCK_MEM);
    s.clock_graphics_mhz = clock(NVML_CLOCK_GRAPHICS);
    s.clock_event_reasons =
        r_.fact("nvmlDeviceGetCurrentClocksEventReasons", a.nvmlDeviceGetCurrentClocksEventReasons, as_u64);
}

void NvmlDevice::sample_thermal(DeviceSample& s) {
    const NvmlApi& a = r_.api;
    s.temperature_c = r_.fact("nvmlDeviceGetTemperature", a.nvmlDeviceGetTemperature, as_int, NVML_TEMPERATURE_GPU);
    if (r_.lost) {
        s.temperature_memory_c = Fact<int>::absent("GPU is lost");
    } else {
        auto mt = read_memory_temperature(a, r_.dev);
        if (mt.celsius) s.temperature_memory_c = Fact<int>(static_cast<int>(std::lround(*mt.celsius)));
        else if (mt.rc > 0 && mt.rc != NVML_ERROR_NOT_SUPPORTED)  // a real failure: noted, lost noticed
            s.temperature_memory_c = Fact<int>::absent(r_.status("nvmlDeviceGetFieldValues", mt.rc));
        else s.temperature_memory_c = Fact<int>::absent(mt.absent_reason);
    }
    s.fan_percent = r_.fact("nvmlDeviceGetFanSpeed", a.nvmlDeviceGetFanSpeed, as_int);
}

void NvmlDevice::sample_pcie(DeviceSample& s, unsigned readings) {
    const NvmlApi& a = r_.api;
    if (readings & kReadPcieLink) {
        s.pcie_gen_current =
            r_.fact("nvmlDeviceGetCurrPcieLinkGeneration", a.nvmlDeviceGetCurrPcieLinkGeneration, as_int);
        s.pcie_width_current = r_.fact("nvmlDeviceGetCurrPcieLinkWidth", a.nvmlDeviceGetCurrPcieLinkWidth, as_int);
        s.pcie_replay_count = r_.fact("nvmlDeviceGetPcieReplayCounter", a.nvmlDeviceGetPcieReplayCounter, as_u32);
    }
    if (readings & kReadPcieThroughput) {
        // NVML counts KB (1024 bytes) per second over a 20 ms window per call.
        auto rate = [&](nvmlPcieUtilCounter_t c) {
            return r_.fact(
                "nvmlDeviceGetPcieThroughput", a.nvmlDeviceGetPcieThroughput,
                [](unsigned kb_per_s) { return kb_per_s * 1024.0; }, c);
        };
        s.pcie_rx_bytes_per_s = rate(NVML_PCIE_UTIL_RX_BYTES);
        s.pcie_tx_bytes_per_s = rate(NVML_PCIE_UTIL_TX_BYTES);
    }
}

void NvmlDevice::sample_nvlink_throughput(DeviceSample& s) {
    const NvmlApi& a = r_.api;
    nvmlFieldValue_t f[2]{};
    f[0].fieldId = kFiDevNvLinkThroughputDataRx, f[0].scopeId = kFieldScopeAllLinks;
    f[1].fieldId = kFiDevNvLinkThroughputDataTx, f[1].scopeId = kFieldScopeAllLinks;
    std::string why = r_.call("nvmlDeviceGetFieldValues", a.nvmlDeviceGetFieldValues, 2, f);
    // The call succeeds when any entry was filled; each entry has its own status.
    auto counter = [&](const nvmlFieldValue_t& v) {
        if (!why.empty()) return Fact<std::uint64_t>::absent(why);
        if (v.nvmlReturn != NVML_SUCCESS) return Fact<std::uint64_t>::absent(nvml_absent_reason(v.nvmlReturn));
        auto kib = field_value_number(v);
        if (!kib)
            return Fact<std::uint64_t>::absent("NVML returned an NVLink counter of value type " +
                                               std::to_string(int(v.valueType)) + ", which gpuvet does not read");
        return Fact<std::uint64_t>(static_cast<std::uint64_t>(*kib) * 1024u);
    };
    s.nvlink_rx_bytes_total = counter(f[0]);
    s.nvlink_tx_bytes_total = counter(f[1]);
}

void NvmlDevice::sample_ecc(DeviceSample& s) {
    const NvmlApi& a = r_.api;
    auto ecc = [&](nvmlMemoryErrorType_t t, nvmlEccCounterType_t c) {
        return r_.fact("nvmlDeviceGetTotalEccErrors", a.nvmlDeviceGetTotalEccErrors, as_u64, t, c);
    };
    s.ecc.volatile_corrected = ecc(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC);
    s.ecc.volatile_uncorrected = ecc(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC);
    s.ecc.aggregate_corrected = ecc(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC);
    s.ecc.aggregate_uncorrected = ecc(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC);
}

void NvmlDevice::sample_retirement(DeviceSample& s) {
    const NvmlApi& a = r_.api;
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    std::string why = r_.call("nvmlDeviceGetRemappedRows", a.nvmlDeviceGetRemappedRows, &corr, &unc, &pending, &failed);
    s.remapped_rows_correctable = fact_of(why, std::uint32_t(corr));
    s.remapped_rows_uncorrectable = fact_of(why, std::uint32_t(unc));
    s.remap_pending = fact_of(why, pending != 0);
    s.remap_failure = fact_of(why, failed != 0);
    auto pages = [&](nvmlPageRetirementCause_t cause) {
        unsigned n = 0;  // count only: a null address buffer with count 0 asks for the size
        std::string w = r_.call("nvmlDeviceGetRetiredPages", a.nvmlDeviceGetRetiredPages, cause, &n,
                                static_cast<unsigned long long*>(nullptr));
        if (w.find("NVML_ERROR_INSUFFICIENT_SIZE") != std::string::npos) w.clear();
        return fact_of(w, std::uint32_t(n));
    };
    s.retired_pages_single_bit = pages(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
    s.retired_pages_double_bit = pages(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
    s.retired_pages_pending =
        r_.fact("nvmlDeviceGetRetiredPagesPendingStatus", a.nvmlDeviceGetRetiredPagesPendingStatus, is_enabled);
}

void NvmlDevice::sample_processes(DeviceSample& s) {
    const NvmlApi& a = r_.api;
    std::string why_c, why_g;
    sample_process_list(s, "nvmlDeviceGetComputeRunningProcesses_v3", a.nvmlDeviceGetComputeRunningProcesses,
                        "nvmlDeviceGetComputeRunningProcesses", a.nvmlDeviceGetComputeRunningProcesses_v1, "compute",
                        why_c);
    sample_process_list(s, "nvmlDeviceGetGraphicsRunningProcesses_v3", a.nvmlDeviceGetGraphicsRunningProcesses,
                        "nvmlDeviceGetGraphicsRunningProcesses", a.nvmlDeviceGetGraphicsRunningProcesses_v1, "graphics",
                        why_g);
    if (!why_c.empty()) s.processes_absent_reason = why_c;  // graphics lists are often unsupported
}

void NvmlDevice::sample_process_list(DeviceSample& s, const char* symbol, nvmlDeviceGetRunningProcesses_fn fn,
                                     const char* v1_symbol, nvmlDeviceGetRunningProcesses_v1_fn fn_v1, const char* type,
                                     std::string& why_out) {
    std::vector<RawProcess> procs;
    if (fn) {
        unsigned count = 0;  // sizing call: SUCCESS when idle, INSUFFICIENT_SIZE with the count otherwise
        if (!r_.lost) fn(r_.dev, &count, nullptr);
        unsigned cap = count + 8;  // a few spare entries: processes may start between the two calls
        // Room for 32-byte entries (see decode_process_entries), 8-byte aligned.
        std::vector<std::uint64_t> buf(cap * 4, 0);
        unsigned n = cap;
        int rc = r_.lost ? NVML_ERROR_GPU_IS_LOST : fn(r_.dev, &n, reinterpret_cast<nvmlProcessInfo_v2_t*>(buf.data()));
        if (rc != NVML_SUCCESS) {
            why_out = r_.status(symbol, rc);
            return;
        }
        procs = decode_process_entries(reinterpret_cast<const unsigned char*>(buf.data()), std::min(n, cap));
    } else if (fn_v1) {
        unsigned cap = 64;
        std::vector<nvmlProcessInfo_v1_t> buf(cap);
        unsigned n = cap;
        if (std::string why = r_.call(v1_symbol, fn_v1, &n, buf.data()); !why.empty()) {
            why_out = why;
            return;
        }
        for (unsigned i = 0; i < std::min(n, cap); ++i) procs.push_back({buf[i].pid, buf[i].usedGpuMemory});
    } else {
        why_out = driver_lacks(symbol);
        return;
    }
    for (const auto& p : procs) {
        GpuProcess gp;
        gp.pid = p.pid;
        gp.type = type;
        if (p.used_memory_bytes == ~0ULL)  // NVML_VALUE_NOT_AVAILABLE
            gp.used_memory_bytes = Fact<std::uint64_t>::absent("not available (MIG or WDDM)");
        else gp.used_memory_bytes = p.used_memory_bytes;
        s.processes.push_back(std::move(gp));
    }
}

}  // namespace gpuvet
