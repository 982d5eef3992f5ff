#include "gpu/identify.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/strings.hpp"
#include "specs/driver_memory.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

double mib(std::uint64_t bytes) { return double(bytes) / double(1ull << 20); }

std::optional<bool> ecc_state(const GpuInfo& g) {
    return g.ecc_enabled ? std::optional<bool>(*g.ecc_enabled) : std::nullopt;
}

bool contains(const std::vector<const GpuSpec*>& v, const GpuSpec* s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// Of several SKUs, the one whose driver figure (for this ECC state) is nearest what the driver reports.
const GpuSpec* nearest_memory(const std::vector<const GpuSpec*>& v, const GpuInfo& g) {
    if (!g.memory_total_bytes) return v.front();
    double have = mib(*g.memory_total_bytes);
    auto distance = [&](const GpuSpec* s) {
        return std::fabs(expected_driver_memory(*s, ecc_state(g)).expected_mib - have);
    };
    return *std::min_element(v.begin(), v.end(),
                             [&](const GpuSpec* a, const GpuSpec* b) { return distance(a) < distance(b); });
}

}  // namespace

bool amd_partitioned(const DeviceFacts& g) { return g.compute_partition && *g.compute_partition != "SPX"; }

std::string hex_device_id(std::uint32_t id) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x", id);
    return buf;
}

std::string with_article(const std::string& name) {
    if (name.empty()) return "a card";
    std::string first = name.substr(0, name.find(' '));
    bool acronym = std::any_of(first.begin(), first.end(), [](unsigned char c) { return std::isdigit(c); }) ||
                   std::all_of(first.begin(), first.end(), [](unsigned char c) { return !std::islower(c); });
    char c = char(std::toupper(static_cast<unsigned char>(name[0])));
    // Spelled letter by letter ("H100", "RTX"): letters whose names start with a vowel sound take "an".
    bool an = acronym ? std::string("AEFHILMNORSX").find(c) != std::string::npos
                      : std::string("AEIOU").find(c) != std::string::npos;
    return (an ? "an " : "a ") + name;
}

Identification identify_gpu(const GpuInfo& g, const SpecDb& specs) {
    Identification id;
    std::vector<const GpuSpec*> by_id, by_name;
    // NVML reports no vendor id: its GPUs are NVIDIA's.
    if (g.pci_device_id) by_id = specs.by_pci_device_id(*g.pci_device_id, g.pci_vendor_id.value_or(kPciVendorNvidia));
    if (g.name) by_name = specs.by_driver_name(*g.name);
    if (!by_name.empty()) id.named = nearest_memory(by_name, g);
    const std::string label = "GPU " + std::to_string(g.index);

    std::string basis;  // what the claim rests on, for the findings below
    if (!by_id.empty()) {
        // Several SKUs may share an id: prefer the one the name also says, then the memory size.
        std::vector<const GpuSpec*> both;
        for (auto* s : by_id)
            if (contains(by_name, s)) both.push_back(s);
        id.spec = nearest_memory(both.empty() ? by_id : both, g);
        id.how = "pci-device-id";
        basis = both.empty() ? "its PCI device id " + hex_device_id(*g.pci_device_id)
                             : "its name '" + *g.name + "' and PCI device id " + hex_device_id(*g.pci_device_id);
        if (id.named && both.empty())
            id.conflicts.push_back(label + " claims to be " + with_article(id.named->name) + " (its name '" + *g.name +
                                   "') but its PCI device id " + hex_device_id(*g.pci_device_id) + " is " +
                                   with_article(id.spec->name) + ": a re-badged or modified card");
    } else if (id.named) {
        id.spec = id.named;
        id.how = g.memory_total_bytes ? "name+memory" : "name";
        basis = "its name '" + *g.name + "'";
        if (g.pci_device_id)
            id.unknowns.push_back(
                "PCI device id " + hex_device_id(*g.pci_device_id) +
                " is not in the spec database; identified by its name only (add the id with --specs FILE)");
    } else {
        std::string what = g.name ? "'" + *g.name + "'" : "a GPU with no name";
        if (g.pci_device_id) what += " (PCI device id " + hex_device_id(*g.pci_device_id) + ")";
        id.unknowns.push_back(what + " is not in the spec database: describe it in a file and pass --specs FILE");
        return id;
    }

    const GpuSpec& s = *id.spec;
    const std::string claim = label + " claims to be " + with_article(s.name) + " (" + basis + ")";
    if (g.sm_count && s.sm_count && *g.sm_count != *s.sm_count)
        id.conflicts.push_back(claim + " but has " + std::to_string(*g.sm_count) + " SMs where " +
                               with_article(s.name) + " has " + std::to_string(*s.sm_count) +
                               (*g.sm_count < *s.sm_count ? ": a cut-down part" : ": a different part"));
    if (g.gfx_target && !s.gfx_target.empty() && *g.gfx_target != s.gfx_target)
        id.conflicts.push_back(claim + " but its gfx target is " + *g.gfx_target + " where " + with_article(s.name) +
                               " is " + s.gfx_target + ": a different chip");
    // A partitioned AMD GPU (CPX, DPX...) lists each partition as a GPU with its share of the compute
    // units and memory: the whole GPU's figures do not apply (gpu.tenancy names the partitioning).
    if (amd_partitioned(g)) {
        id.partitioned = true;
        return id;
    }
    std::optional<int> cus = s.compute_units_per_device();
    if (g.compute_units && cus && *g.compute_units != *cus)
        id.conflicts.push_back(claim + " but has " + std::to_string(*g.compute_units) + " compute units where " +
                               with_article(s.name) + " has " + std::to_string(*cus) +
                               (s.devices_per_board > 1 ? " per die" : "") +
                               (*g.compute_units < *cus ? ": a cut-down part" : ": a different part"));
    if (g.memory_total_bytes) {
        double have = mib(*g.memory_total_bytes);
        DriverMemoryExpectation want = expected_driver_memory(s, ecc_state(g));
        id.memory_matches = have >= want.low_mib && have <= want.high_mib;
        if (!id.memory_matches)
            id.conflicts.push_back(claim + " but its driver reports " + mib_and_gib(have) + " of memory where " +
                                   with_article(s.name) + " with " + want.ecc_state + " reports " +
                                   mib_and_gib(want.expected_mib) +
                                   (have < want.low_mib ? ": a smaller or cut-down part" : ": a different part"));
    }
    return id;
}

}  // namespace gpuvet
