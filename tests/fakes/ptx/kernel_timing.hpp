// Simulated durations of gpuvet's kernels on a scenario GPU. The interpreter computes what a
// kernel writes; how long it took on the GPU comes from the scenario's figures, so bandwidth and
// FLOPS measured through the fake equal them: bytes / hbm_bandwidth_gbps for stream_* and
// memtest_*, FLOPs / <dtype>_tflops for fma_*. Sizes are read from the launch's parameters by
// their declared names (..._n_vec, ..._n_words, ..._n, ..._iterations).
#pragma once
#include <cstdint>
#include <optional>

#include "ptx_module.hpp"
#include "scenario.hpp"

namespace fake {

// Nanoseconds, or nullopt for a kernel the scenario has no rate for.
std::optional<double> simulated_ns(const ptx::Function& f, void* const* params, uint64_t threads, const Gpu& g);

}  // namespace fake
