// The statistics the checks share, in one place so that a "median" means one thing everywhere.
#pragma once
#include <optional>
#include <vector>

namespace gpuvet {

// The middle value, or the mean of the two middle values of an even count; nullopt when empty.
std::optional<double> median(std::vector<double> v);
// The arithmetic mean; nullopt when empty.
std::optional<double> mean(const std::vector<double>& v);

}  // namespace gpuvet
