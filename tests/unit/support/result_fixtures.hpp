// A CheckResult with the fields the verdict and printer tests vary; the rest stay default.
#pragma once
#include <optional>
#include <string>

#include "core/result.hpp"

namespace gpuvet::test {

inline CheckResult result_of(std::string key, Verdict v, std::string summary = "", std::optional<int> gpu = {}) {
    CheckResult c;
    c.key = std::move(key);
    c.verdict = v;
    c.summary = std::move(summary);
    c.gpu = gpu;
    return c;
}

}  // namespace gpuvet::test
