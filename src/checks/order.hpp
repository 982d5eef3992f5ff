// order.*: the delivered server held against its order, one result per ordered item. Runs last in
// `gpuvet check`: order.network needs host.network's measurement.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/check.hpp"
#include "core/fact.hpp"

namespace gpuvet {

class OrderCheck final : public Check {
public:
    using CapacityReader = std::function<Fact<std::uint64_t>(const std::string& path)>;
    explicit OrderCheck(CapacityReader disk_capacity = {});  // default: statvfs
    std::string_view key() const override { return "order"; }
    std::string_view title() const override { return "Order"; }
    // Without --expect/--order: one SKIP line, so the report says the order was not verified.
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;

private:
    CapacityReader disk_capacity_;
};

}  // namespace gpuvet
