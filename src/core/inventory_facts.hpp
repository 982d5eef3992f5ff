// The inventory as the printers see it: tables of facts, each a value as the driver gave it or
// the reason it is absent, with the driver's codes (clock-event reasons, NVLink versions) already
// in words. gpu/inventory_facts.cpp fills it from the GPU inventory; report/inventory_view.cpp
// prints it as `gpuvet inventory`'s listing and JSON document.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/fact.hpp"

namespace gpuvet {

// A value with the type the driver gave it: the JSON writes numbers, flags and text as such.
using FactValue = std::variant<bool, std::int64_t, std::uint64_t, double, std::string>;

// One per-GPU fact, in display order.
struct InventoryFact {
    std::string key;    // stable, unit in the name: "memory_total_bytes"
    std::string label;  // "Memory total"
    Fact<FactValue> value;
    // A bit set's names of the set bits ("SW_POWER_CAP"), shown instead of the number; set (maybe
    // empty) for bit sets only, also when the value is absent.
    std::optional<std::vector<std::string>> decoded;
};

struct InventoryLink {
    int link = 0;
    Fact<bool> active;
    Fact<std::string> remote_pci_bus_id;
    Fact<int> version;         // the driver's code for the version
    std::string version_name;  // that code in words: "4.0"; "?" when unknown
    Fact<std::string> remote_type;
};

// An AMD xGMI link as the driver lists it.
struct InventoryXgmiLink {
    int link = 0;
    Fact<bool> active;
    Fact<std::string> remote_pci_bus_id;
    Fact<double> bit_rate_gbps, max_bandwidth_gbps;
};

// One RAS block's error counts (AMD), since the driver loaded.
struct InventoryRasBlock {
    std::string block;  // "UMC", "XGMI_WAFL", ...
    Fact<std::uint64_t> correctable, uncorrectable, deferred;
};

struct InventoryProcess {
    std::uint32_t pid = 0;
    std::string name;  // empty when not visible
    std::string type;  // "compute", "graphics"
    Fact<std::uint64_t> used_memory_bytes;
};

struct InventoryGpu {
    int index = 0;
    std::string vendor;  // "AMD"; "NVIDIA" on a box with both vendors; empty on an NVIDIA-only box
    bool lost = false;
    Fact<std::string> name;  // the heading's name (also among `facts`)
    std::vector<InventoryFact> facts;
    std::vector<InventoryLink> nvlinks;
    int nvlinks_active = 0;  // gpu/device/derived_facts' count, once
    std::string nvlinks_absent_reason;
    std::vector<InventoryXgmiLink> xgmi_links;  // AMD
    int xgmi_links_active = 0;
    std::string xgmi_links_absent_reason;
    std::vector<InventoryRasBlock> ras_blocks;  // AMD
    std::vector<InventoryProcess> processes;
    std::string processes_absent_reason;
    std::vector<std::string> errors;
};

// The deep-learning stack of the server's Python, as gpu.software read and judged it (filled by the
// inventory command; empty `rows` with `absent_reason` when it was not read).
struct SoftwareFacts {
    std::string absent_reason;
    std::string verdict;  // "PASS", "WARN", "FAIL", "SKIP", "ERROR"
    std::string summary;
    std::vector<std::pair<std::string, std::string>> rows;  // label, value ("PyTorch", "2.5.1+cu124")
    std::vector<std::string> findings;                      // "FAIL: ..." (judged statements)
};

struct InventoryFacts {
    bool cuda_present = false;
    std::string cuda_absent_reason;
    Fact<std::string> driver_version;
    Fact<int> cuda_driver_version;  // 12080
    Fact<std::string> nvml_version;
    bool nvml_present = false;
    std::string nvml_absent_reason;
    std::string libcuda_path, libnvml_path;  // empty when not loaded
    // AMD's driver and library (empty `amd_library` when none lists a GPU; then the reason).
    bool amd_present = false;
    std::string amd_absent_reason, amd_library, libamd_path;
    Fact<std::string> amd_driver_version, amd_library_version;
    std::vector<InventoryGpu> gpus;
    std::vector<std::vector<std::string>> topology;  // [i][j] like `nvidia-smi topo -m`
    std::string topology_absent_reason;
    std::vector<std::string> errors;
    SoftwareFacts software;
};

}  // namespace gpuvet
