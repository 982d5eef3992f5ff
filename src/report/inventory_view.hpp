// `gpuvet inventory` output: the JSON document (docs/report-schema.md, "inventory") and the
// terminal listing. Absent facts print as "— (reason)" and serialise as value null + reason.
#pragma once
#include <string>

#include "core/fabric_inventory.hpp"
#include "core/inventory_facts.hpp"
#include "core/result.hpp"
#include "report/json.hpp"
#include "report/style.hpp"

namespace gpuvet {

// `fabric`: host.fabric's section (empty: not read, and not printed).
Json inventory_to_json(const InventoryFacts& inv, const MachineInfo& host, const FabricInventory& fabric = {});
std::string render_inventory(const InventoryFacts& inv, const MachineInfo& host, const Style& style,
                             const FabricInventory& fabric = {});

}  // namespace gpuvet
