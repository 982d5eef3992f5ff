// Facts derived from a GPU's fixed facts, computed in one place for every reader (checks, top,
// export, run): the PCIe generation its link can train to, and its active NVLinks.
#pragma once
#include "core/fact.hpp"
#include "gpu/device/backend.hpp"

namespace gpuvet {

// The most both ends of the link allow: the lower of the GPU's and the host port's maximum
// generation (NVML reports them apart), the GPU's alone when the host's is unknown.
Fact<int> pcie_gen_max_link(const DeviceFacts& f);
// NVLinks the driver reports active (0 when none, or none could be read: nvlink_absent_reason says which).
int active_nvlinks(const DeviceFacts& f);
// xGMI links (AMD) the driver reports active, the same way.
int active_xgmi_links(const DeviceFacts& f);

}  // namespace gpuvet
