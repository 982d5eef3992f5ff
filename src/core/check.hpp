// A check is a small unit: a stable key, a title, its requirements, the earlier results it reads
// and a run. Checks are listed explicitly in cli/registry.cpp, never self-registered.
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
    virtual std::optional<std::string> unmet_requirement(const CheckContext&) const { return std::nullopt; }
    // The keys of the checks whose results this one reads (ctx.prior). A check that reads any runs
    // in a second stage, after every check that reads none; its results keep their registry place.
    virtual std::vector<std::string> reads() const { return {}; }
    // One result for a box-level check, one per GPU for per-GPU checks. May throw gpuvet::Error,
    // which the runner records as an ERROR verdict with its advice; other checks still run.
    virtual std::vector<CheckResult> run(CheckContext& ctx) = 0;
};

using CheckPtr = std::unique_ptr<Check>;
using CheckList = std::vector<CheckPtr>;

}  // namespace gpuvet
