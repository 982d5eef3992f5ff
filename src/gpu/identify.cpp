#include "gpu/identify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/strings.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

double gib(std::uint64_t bytes) { return double(bytes) / double(1ull << 30); }

bool contains(const std::vector<const GpuSpec*>& v, const GpuSpec* s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// Of several SKUs, the one whose size as sold is nearest the memory the driver reports.
const GpuSpec* nearest_memory(const std::vector<const GpuSpec*>& v, const Fact<std::uint64_t>& total) {
    if (!total) return v.front();
    return *std::min_element(v.begin(), v.end(), [&](const GpuSpec* a, const GpuSpec* b) {
        return std::fabs(a->memory_size_gib - gib(*total)) < std::fabs(b->memory_size_gib - gib(*total));
    });
}

}  // namespace

std::string hex_device_id(std::uint32_t id) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x", id);
    return buf;
}

Identification identify_gpu(const GpuInfo& g, const SpecDb& specs) {
    Identification id;
    std::vector<const GpuSpec*> by_id, by_name;
    if (g.pci_device_id) by_id = specs.by_pci_device_id(*g.pci_device_id);
    if (g.name) by_name = specs.by_driver_name(*g.name);

    if (!by_id.empty()) {
        // Several SKUs may share an id: prefer the one the name also says, then the memory size.
        std::vector<const GpuSpec*> both;
        for (auto* s : by_id)
            if (contains(by_name, s)) both.push_back(s);
        id.spec = nearest_memory(both.empty() ? by_id : both, g.memory_total_bytes);
        id.how = "pci-device-id";
        if (!by_name.empty() && both.empty())
            id.conflicts.push_back("the driver names it '" + *g.name + "' (" + by_name.front()->name +
                                   ") but its PCI device id " + hex_device_id(*g.pci_device_id) + " is a " +
                                   id.spec->name + ": a re-badged or modified card");
    } else if (!by_name.empty()) {
        id.spec = nearest_memory(by_name, g.memory_total_bytes);
        id.how = g.memory_total_bytes ? "name+memory" : "name";
        if (g.pci_device_id)
            id.unknowns.push_back("PCI device id " + hex_device_id(*g.pci_device_id) +
                                  " is not in the spec database; identified by its name only (add the id with --specs FILE)");
    } else {
        std::string what = g.name ? "'" + *g.name + "'" : "a GPU with no name";
        if (g.pci_device_id) what += " (PCI device id " + hex_device_id(*g.pci_device_id) + ")";
        id.unknowns.push_back(what + " is not in the spec database: describe it in a file and pass --specs FILE");
        return id;
    }

    const GpuSpec& s = *id.spec;
    if (g.sm_count && s.sm_count && *g.sm_count != *s.sm_count)
        id.conflicts.push_back(std::to_string(*g.sm_count) + " SMs where the " + s.name + " has " +
                               std::to_string(*s.sm_count) +
                               (*g.sm_count < *s.sm_count ? ": a cut-down part" : ": a different part"));
    if (g.memory_total_bytes) {
        double have = gib(*g.memory_total_bytes);
        if (have < s.memory_size_gib * (1 - kMemoryReserveFraction))
            id.conflicts.push_back(format_number(have, 4) + " GiB of memory where the " + s.name + " has " +
                                   format_number(s.memory_size_gib) + " GiB (more than " +
                                   format_number(kMemoryReserveFraction * 100) + "% short: not the firmware reserve)");
        else if (have > s.memory_size_gib * (1 + kMemoryReserveFraction))
            id.conflicts.push_back(format_number(have, 4) + " GiB of memory where the " + s.name + " has " +
                                   format_number(s.memory_size_gib) + " GiB: a different part");
    }
    return id;
}

}  // namespace gpuvet
