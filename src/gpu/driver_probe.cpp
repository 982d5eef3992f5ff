#include "gpu/driver_probe.hpp"

#include "gpu/inventory.hpp"

namespace gpuvet {

DriverInfo probe_driver() { return driver_info_of(collect_inventory()); }

}  // namespace gpuvet
