#include "gpu/device/derived_facts.hpp"

#include <algorithm>

namespace gpuvet {

Fact<int> pcie_gen_max_link(const DeviceFacts& f) {
    if (!f.pcie_gen_max_gpu) return f.pcie_gen_max_gpu;
    return f.pcie_gen_max_host ? std::min(*f.pcie_gen_max_gpu, *f.pcie_gen_max_host) : *f.pcie_gen_max_gpu;
}

int active_nvlinks(const DeviceFacts& f) {
    return static_cast<int>(std::count_if(f.nvlinks.begin(), f.nvlinks.end(),
                                          [](const NvLinkInfo& l) { return l.active.value_or(false); }));
}

int active_xgmi_links(const DeviceFacts& f) {
    return static_cast<int>(std::count_if(f.xgmi_links.begin(), f.xgmi_links.end(),
                                          [](const XgmiLinkInfo& l) { return l.active.value_or(false); }));
}

}  // namespace gpuvet
