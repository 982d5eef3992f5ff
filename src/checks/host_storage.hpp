// host.storage: filesystem, free space and throughput of the data path (--data-dir).
#pragma once
#include "core/check.hpp"

namespace gpuvet {

class HostStorageCheck final : public Check {
public:
    std::string_view key() const override { return "host.storage"; }
    std::string_view title() const override { return "Host storage (data path)"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

}  // namespace gpuvet
