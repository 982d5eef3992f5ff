// The inventory as plain facts for `gpuvet inventory`'s printers: every fact with its label and
// value or absent reason, the links, RAS blocks and processes per GPU, the driver and software.
#pragma once
#include "core/inventory_facts.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

InventoryFacts inventory_facts_of(const Inventory& inv);

}  // namespace gpuvet
