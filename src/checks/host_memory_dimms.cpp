// host.memory's DIMM part: the SMBIOS memory devices as measurements, the theoretical rate STREAM
// is held against, and the plain-words warnings about how the DIMMs are fitted.
#include <algorithm>
#include <set>

#include "checks/host_memory.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {

void add_unknown_dimms(CheckResult& r, const std::string& why) {
    auto& ms = r.measurements;
    ms.push_back(Measurement::absent("dimm_slots", "DIMM slots", "count", why));
    ms.push_back(Measurement::absent("dimms_populated", "DIMMs populated", "count", why));
    ms.push_back(Measurement::absent("dimm_total_bytes", "DIMMs total", "bytes", why));
    ms.push_back(Measurement::absent("memory_type", "Memory type", "", why));
    ms.push_back(Measurement::absent("memory_configured_mts", "Configured speed", "MT/s", why));
    ms.push_back(Measurement::absent("memory_rated_mts", "Rated speed", "MT/s", why));
    ms.push_back(Measurement::absent("memory_channels", "Memory channels", "count", why));
    ms.push_back(Measurement::absent("memory_theoretical_gbps", "Theoretical bandwidth", "GB/s", why));
    r.details.push_back("DIMMs not read: " + why);
}

// The channels and the theoretical rate, or why they are not stated: `vm_why` is set in a VM,
// whose DIMMs are the hypervisor's.
void add_channel_figures(std::vector<Measurement>& ms, const MemoryLayout& l,
                         const std::optional<std::string>& vm_why) {
    if (vm_why) {
        ms.push_back(Measurement::absent("memory_channels", "Memory channels", "count", *vm_why));
        ms.push_back(Measurement::absent("memory_theoretical_gbps", "Theoretical bandwidth", "GB/s", *vm_why));
    } else if (l.theoretical_gbps) {
        ms.push_back(Measurement::number("memory_channels", "Memory channels", l.channels, "count"));
        ms.push_back(
            Measurement::number("memory_theoretical_gbps", "Theoretical bandwidth", *l.theoretical_gbps, "GB/s"));
    } else {
        ms.push_back(
            Measurement::absent("memory_channels", "Memory channels", "count", l.theoretical_gbps.absent_reason));
        ms.push_back(Measurement::absent("memory_theoretical_gbps", "Theoretical bandwidth", "GB/s",
                                         l.theoretical_gbps.absent_reason));
    }
}

void add_dimm_figures(std::vector<Measurement>& ms, const MemoryLayout& l, const std::optional<std::string>& vm_why) {
    ms.push_back(Measurement::number("dimm_slots", "DIMM slots", l.slots, "count"));
    ms.push_back(Measurement::number("dimms_populated", "DIMMs populated", l.populated, "count"));
    ms.push_back(Measurement::maybe("dimm_total_bytes", "DIMMs total", l.total_bytes, "bytes",
                                    "the firmware does not state the size of every DIMM"));
    if (l.type) ms.push_back(Measurement::textual("memory_type", "Memory type", *l.type));
    else
        ms.push_back(
            Measurement::absent("memory_type", "Memory type", "", "the firmware does not state the memory type"));
    ms.push_back(Measurement::maybe("memory_configured_mts", "Configured speed", l.min_configured_mts, "MT/s",
                                    "the firmware does not state the configured speed"));
    ms.push_back(Measurement::maybe("memory_rated_mts", "Rated speed", l.min_rated_mts, "MT/s",
                                    "the firmware does not state the rated speed"));
    add_channel_figures(ms, l, vm_why);
}

// "16 of 32 DIMM slots populated, 1 TiB DDR4, configured 3200 MT/s (rated 3200 MT/s) (SMBIOS)"
std::string dimm_line(const MemoryLayout& l) {
    std::string line = std::to_string(l.populated) + " of " + std::to_string(l.slots) + " DIMM slots populated";
    if (l.total_bytes) line += ", " + format_bytes(double(*l.total_bytes));
    if (l.type) line += " " + *l.type;
    if (l.min_configured_mts) line += ", configured " + std::to_string(*l.min_configured_mts) + " MT/s";
    if (l.min_rated_mts) line += " (rated " + std::to_string(*l.min_rated_mts) + " MT/s)";
    return line + " (SMBIOS)";
}

// How the theoretical rate was derived: "16 channels x 3200 MT/s x 8 bytes" when the DIMMs agree,
// the general rule otherwise, and how the channels were found.
std::string theoretical_rate_how(const MemoryLayout& l) {
    std::optional<std::uint32_t> max_mts;
    std::set<int> widths;
    for (auto& d : l.devices)
        if (d.populated && d.configured_mts && d.data_width_bits)
            max_mts = std::max(max_mts.value_or(0), *d.configured_mts), widths.insert(*d.data_width_bits);
    std::string how = std::to_string(l.channels) + " channels x ";
    if (max_mts == l.min_configured_mts && widths.size() == 1)
        how += std::to_string(*max_mts) + " MT/s x " + format_number(*widths.begin() / 8.0) + " bytes";
    else how += "the channel's lowest configured MT/s x data width";
    how += " (SMBIOS type 17)";
    if (l.rule == ChannelRule::Locators)
        return how + "; channels read from the DIMM locators, up to " + std::to_string(l.max_dimms_per_channel) +
               " DIMM(s) per channel";
    return how +
           "; assumes one DIMM per channel (the locators do not show the channels): too high if "
           "channels hold two DIMMs";
}

Reference stream_reference_of(double theoretical_gbps, const std::string& how) {
    Reference ref;
    ref.spec = theoretical_gbps;
    ref.expected_fraction = kStreamExpectedFraction;
    ref.source = "theoretical = " + how +
                 "; healthy STREAM reaches about 70-85% of it (TI SPRAD45A/SPRACV1B: triad 74-78% of the DDR "
                 "wire rate), less without streaming stores; triad WARN below 50%, never FAIL (channels are inferred)";
    return ref;
}

std::vector<std::string> dimm_warnings(const MemoryLayout& l) {
    std::vector<std::string> w;
    if (l.slower_than_rated > 0)
        w.push_back(std::to_string(l.slower_than_rated) + " of " + std::to_string(l.populated) +
                    " DIMMs run below their rated speed (configured " +
                    std::to_string(l.min_configured_mts.value_or(0)) + " MT/s, rated " +
                    std::to_string(l.min_rated_mts.value_or(0)) +
                    " MT/s): check the BIOS memory speed setting; two DIMMs per channel or mixed DIMMs also lower it");
    if (l.populated * 2 < l.slots)
        w.push_back("only " + std::to_string(l.populated) + " of " + std::to_string(l.slots) +
                    " DIMM slots are populated: memory channels may be empty, which caps memory bandwidth");
    return w;
}

}  // namespace

Fact<MemoryLayout> read_memory_layout(const HostFs& fs) {
    auto table = read_smbios_table(fs);
    if (!table) return Fact<MemoryLayout>::absent(table.absent_reason);
    SmbiosMemory mem = parse_smbios_memory(*table);
    // A damaged table may have lost slots: better no figures than a wrong slot count.
    if (!mem.problem.empty()) return Fact<MemoryLayout>::absent("SMBIOS table is damaged: " + mem.problem);
    if (mem.devices.empty()) return Fact<MemoryLayout>::absent("the SMBIOS table lists no memory devices (type 17)");
    return summarize_memory(mem.devices);
}

DimmFindings add_dimm_facts(CheckResult& r, const Fact<MemoryLayout>& layout,
                            const std::optional<std::string>& virtualization) {
    DimmFindings f;
    if (!layout) {
        add_unknown_dimms(r, layout.absent_reason);
        return f;
    }
    const MemoryLayout& l = *layout;
    std::optional<std::string> vm_why;
    if (virtualization && *virtualization != "none")
        vm_why = "virtual machine (" + *virtualization + "): its SMBIOS DIMMs are the hypervisor's, not the host's";
    add_dimm_figures(r.measurements, l, vm_why);
    r.details.push_back(dimm_line(l));
    if (vm_why) {
        r.details.push_back(*vm_why);
        return f;
    }
    if (l.theoretical_gbps) {
        std::string how = theoretical_rate_how(l);
        r.details.push_back("Theoretical " + format_number(*l.theoretical_gbps, 4) + " GB/s: " + how);
        f.stream_reference = stream_reference_of(*l.theoretical_gbps, how);
    }
    f.warnings = dimm_warnings(l);
    for (auto& w : f.warnings) r.findings.push_back(Finding{Verdict::Warn, w, ""});
    return f;
}

}  // namespace gpuvet
