#include "checks/order.hpp"

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "order/order.hpp"
#include "checks/order_verify.hpp"

namespace gpuvet {

OrderCheck::OrderCheck(const Order* order, std::filesystem::path data_dir, CapacityReader disk_capacity)
    : order_(order),
      data_dir_(std::move(data_dir)),
      disk_capacity_(disk_capacity ? std::move(disk_capacity) : CapacityReader(filesystem_capacity_bytes)) {}

std::optional<std::string> OrderCheck::unmet_requirement(const CheckContext&) const {
    if (!order_) return std::string("no order given: use --expect or --order");
    return std::nullopt;
}

std::vector<CheckResult> OrderCheck::run(CheckContext& ctx) {
    const Order& o = *order_;
    std::vector<CheckResult> out = verify_gpu_items(o, ctx);
    Fact<std::uint64_t> cap = Fact<std::uint64_t>::absent("not needed");
    if (o.disk_gb) cap = disk_capacity_(data_dir_.string());
    for (auto& r : verify_host_items(o, ctx, cap, data_dir_.string())) out.push_back(std::move(r));
    if (!out.empty()) out.front().details.push_back("order from " + o.origin);
    return out;
}

}  // namespace gpuvet
