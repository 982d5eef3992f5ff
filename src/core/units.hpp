// The binary size units, once: memory sizes are GiB (docs/checks.md's unit policy), rates decimal.
#pragma once

namespace gpuvet {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;

}  // namespace gpuvet
