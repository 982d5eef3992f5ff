// Pure decoding of NVML answers: clock reasons, NVLink versions, bus ids, CPU masks, topology levels, process lists.
#include <cstdio>
#include <cstring>

#include "gpu/device/nvml_decode.hpp"

#include "core/clock_reasons.hpp"
#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

// Names as nvidia-smi -q spells them. core/clock_reasons.hpp holds the bits; they are NVML's own.
static_assert(clock_reason::kGpuIdle == nvml::kClocksEventReasonGpuIdle &&
              clock_reason::kSwPowerCap == nvml::kClocksEventReasonSwPowerCap &&
              clock_reason::kHwSlowdown == nvml::kClocksEventReasonHwSlowdown &&
              clock_reason::kHwPowerBrakeSlowdown == nvml::kClocksEventReasonHwPowerBrakeSlowdown &&
              clock_reason::kBoardLimit == nvml::kClocksEventReasonBoardLimit &&
              clock_reason::kReliability == nvml::kClocksEventReasonReliability);
std::vector<std::string> decode_clock_reasons(std::uint64_t mask) {
    return clock_reason::names_of(mask, true, "UNKNOWN_");
}

std::string nvlink_version_name(int nvml_code) {
    static const char* names[] = {"1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0", "6.0"};
    return nvml_code >= 1 && nvml_code <= 8 ? names[nvml_code - 1] : "code " + std::to_string(nvml_code);
}

std::string normalize_pci_bus_id(std::string_view id) {
    std::string s(id);
    unsigned long long domain = 0;
    unsigned bus = 0, dev = 0, fn = 0;
    int used = 0;
    // The function is one digit after the dot; checked first because %x would also eat "0x".
    if (s.size() < 2 || s[s.size() - 2] != '.' || s.back() < '0' || s.back() > '7') return "";
    if (std::sscanf(s.c_str(), "%llx:%x:%x.%x%n", &domain, &bus, &dev, &fn, &used) == 4 &&
        used == static_cast<int>(s.size())) {
    } else if (std::sscanf(s.c_str(), "%x:%x.%x%n", &bus, &dev, &fn, &used) == 3 &&
               used == static_cast<int>(s.size())) {
        domain = 0;
    } else {
        return "";
    }
    if (domain > 0xffffffffULL || bus > 0xff || dev > 0x1f || fn > 7) return "";
    char out[32];
    std::snprintf(out, sizeof out, "%04llx:%02x:%02x.%x", domain, bus, dev, fn);
    return out;
}

std::string cpu_list_from_mask(const std::uint64_t* words, std::size_t n_words) {
    std::string out;
    long start = -1;
    const long total = static_cast<long>(n_words) * 64;
    auto flush = [&](long end) {  // closes the run [start, end)
        if (start < 0) return;
        if (!out.empty()) out += ",";
        out += std::to_string(start);
        if (end - 1 > start) {
            out += '-';  // appended: `"-" + std::to_string()` draws a false -Wrestrict from GCC 12
            out += std::to_string(end - 1);
        }
        start = -1;
    };
    for (long cpu = 0; cpu < total; ++cpu) {
        bool set = (words[cpu / 64] >> (cpu % 64)) & 1ULL;
        if (set && start < 0) start = cpu;
        if (!set) flush(cpu);
    }
    flush(total);
    return out;
}

std::string topology_label(int level) {
    switch (level) {
        case nvml::NVML_TOPOLOGY_INTERNAL: return "PIX";  // two GPUs on one board
        case nvml::NVML_TOPOLOGY_SINGLE: return "PIX";
        case nvml::NVML_TOPOLOGY_MULTIPLE: return "PXB";
        case nvml::NVML_TOPOLOGY_HOSTBRIDGE: return "PHB";
        case nvml::NVML_TOPOLOGY_NODE: return "NODE";
        case nvml::NVML_TOPOLOGY_SYSTEM: return "SYS";
        default: return "?";
    }
}

std::string architecture_name(unsigned a) {
    switch (a) {
        case nvml::kDeviceArchKepler: return "Kepler";
        case nvml::kDeviceArchMaxwell: return "Maxwell";
        case nvml::kDeviceArchPascal: return "Pascal";
        case nvml::kDeviceArchVolta: return "Volta";
        case nvml::kDeviceArchTuring: return "Turing";
        case nvml::kDeviceArchAmpere: return "Ampere";
        case nvml::kDeviceArchAda: return "Ada";
        case nvml::kDeviceArchHopper: return "Hopper";
        case nvml::kDeviceArchBlackwell: return "Blackwell";
        default: return "unknown (" + std::to_string(a) + ")";
    }
}

namespace {

// Reads one entry laid out like nvmlProcessInfo_v2_t at `p`.
struct Entry {
    std::uint32_t pid, gi, ci;
    std::uint64_t mem;
};
Entry read_entry(const unsigned char* p) {
    Entry e;
    std::memcpy(&e.pid, p + offsetof(nvml::nvmlProcessInfo_v2_t, pid), 4);
    std::memcpy(&e.mem, p + offsetof(nvml::nvmlProcessInfo_v2_t, usedGpuMemory), 8);
    std::memcpy(&e.gi, p + offsetof(nvml::nvmlProcessInfo_v2_t, gpuInstanceId), 4);
    std::memcpy(&e.ci, p + offsetof(nvml::nvmlProcessInfo_v2_t, computeInstanceId), 4);
    return e;
}

// A MIG instance id is small; without MIG it is 0xFFFFFFFF.
bool plausible(const Entry& e) {
    auto id_ok = [](std::uint32_t id) { return id == 0xFFFFFFFFu || id < 0x1000; };
    return e.pid != 0 && id_ok(e.gi) && id_ok(e.ci);
}

bool all_plausible(const unsigned char* buf, std::size_t count, std::size_t stride) {
    for (std::size_t i = 0; i < count; ++i)
        if (!plausible(read_entry(buf + i * stride))) return false;
    return true;
}

}  // namespace

std::vector<RawProcess> decode_process_entries(const unsigned char* buf, std::size_t count) {
    constexpr std::size_t kStride = sizeof(nvml::nvmlProcessInfo_v2_t);  // 24
    constexpr std::size_t kWideStride = kStride + 8;                     // + usedGpuCcProtectedMemory
    std::size_t stride = kStride;
    if (count > 1 && !all_plausible(buf, count, kStride) && all_plausible(buf, count, kWideStride))
        stride = kWideStride;
    std::vector<RawProcess> out;
    for (std::size_t i = 0; i < count; ++i) {
        Entry e = read_entry(buf + i * stride);
        out.push_back({e.pid, e.mem});
    }
    return out;
}

}  // namespace gpuvet
