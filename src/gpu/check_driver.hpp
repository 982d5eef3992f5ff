// gpu.driver: is an NVIDIA driver present and usable.
#pragma once
#include "core/check.hpp"

namespace gpuvet {

class GpuDriverCheck final : public Check {
public:
    std::string_view key() const override { return "gpu.driver"; }
    std::string_view title() const override { return "NVIDIA driver"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

}  // namespace gpuvet
