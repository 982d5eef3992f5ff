#include "core/stats.hpp"

#include <algorithm>

namespace gpuvet {

std::optional<double> median(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<double> mean(const std::vector<double>& v) {
    if (v.empty()) return std::nullopt;
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
}

}  // namespace gpuvet
