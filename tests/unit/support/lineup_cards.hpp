// Cards of the GPU lineup built from the H100 fixture (name, PCI id, SMs, memory, ECC state), and
// the identity and order.gpu_memory results for them.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "checks/gpu_identity.hpp"
#include "checks/order_verify.hpp"
#include "core/runner.hpp"
#include "order/order.hpp"
#include "support/inventory_fixtures.hpp"

namespace gpuvet::testing {

inline GpuInfo card(const char* name, std::uint32_t id, int sms, std::uint64_t mib, std::optional<bool> ecc,
                    int index = 0) {
    GpuInfo g = healthy_h100(index);
    g.name = std::string(name);
    g.pci_device_id = id;
    g.sm_count = sms;
    g.memory_total_bytes = mib << 20;
    if (ecc) g.ecc_enabled = *ecc;
    else g.ecc_enabled = Fact<bool>::absent("not supported");
    g.nvlinks.clear();
    return g;
}
inline GpuInfo l40s(std::uint64_t mib, std::optional<bool> ecc = true, int index = 0) {
    return card("NVIDIA L40S", 0x26b9u, 142, mib, ecc, index);
}

inline const GpuSpec& spec(const char* key) { return *spec_db().by_key(key); }

inline CheckResult identity(const GpuInfo& g) {
    Inventory inv;
    inv.gpus.push_back(g);
    Fixture f(inv);
    CheckList list;
    list.push_back(std::make_unique<GpuIdentityCheck>());
    run_checks(list, f.ctx());
    return f.report.checks.at(0);
}

inline CheckResult order_memory(const std::vector<GpuInfo>& gpus, const char* expect) {
    Inventory inv;
    inv.gpus = gpus;
    Fixture f(inv);
    Order o = parse_expect(expect, spec_db());
    for (auto& r : verify_gpu_items(o, f.ctx()))
        if (r.key == "order.gpu_memory") return r;
    throw std::runtime_error("no order.gpu_memory");
}

}  // namespace gpuvet::testing
