// host.identity: what the host is (CPU, memory, OS, kernel, virtualization, container).
#pragma once
#include "core/check.hpp"

namespace gpuvet {

class HostIdentityCheck final : public Check {
public:
    std::string_view key() const override { return "host.identity"; }
    std::string_view title() const override { return "Host identity"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

}  // namespace gpuvet
