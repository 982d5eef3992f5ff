// order.*: the delivered server held against its order, one result per ordered item. order.network
// reads host.network's measurement, so the order check runs in the second stage (reads()).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/check.hpp"
#include "core/fact.hpp"

namespace gpuvet {

struct Order;

class OrderCheck final : public Check {
public:
    using CapacityReader = std::function<Fact<std::uint64_t>(const std::string& path)>;
    // `order`: what --expect/--order described (null: the check SKIPs); `data_dir`: --data-dir.
    explicit OrderCheck(const Order* order, std::filesystem::path data_dir = ".",
                        CapacityReader disk_capacity = {});  // default: statvfs
    std::string_view key() const override { return "order"; }
    std::string_view title() const override { return "Order"; }
    // Without --expect/--order: one SKIP line, so the report says the order was not verified.
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<std::string> reads() const override { return {"host.network"}; }
    std::vector<CheckResult> run(CheckContext& ctx) override;

private:
    const Order* order_;
    std::filesystem::path data_dir_;
    CapacityReader disk_capacity_;
};

}  // namespace gpuvet
