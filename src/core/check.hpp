// A check is a small unit: a stable key, a title, its requirements and a run.
// Checks are listed explicitly in core/registry.cpp, never self-registered.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct CheckContext;

class Check {
public:
    virtual ~Check() = default;
    virtual std::string_view key() const = 0;    // "gpu.identity"
    virtual std::string_view title() const = 0;  // "GPU identity"
    // The reason this check cannot run here (-> SKIP with that reason), or nullopt.
    virtual std::optional<std::string> unmet_requirement(const CheckContext&) const {
        return std::nullopt;
    }
    // One result for a box-level check, one per GPU for per-GPU checks. May throw gpuvet::Error,
    // which the runner records as an ERROR verdict with its advice; other checks still run.
    virtual std::vector<CheckResult> run(CheckContext& ctx) = 0;
};

using CheckList = std::vector<std::unique_ptr<Check>>;

// The registry: every check `gpuvet check` knows, in the order they run.
CheckList all_checks();
// The checks named by `keys` (exact keys, or areas ending in '.' such as "gpu."), in registry
// order; all of them when `keys` is empty. An unknown key is a usage error listing the keys.
CheckList select_checks(const std::vector<std::string>& keys);

}  // namespace gpuvet
