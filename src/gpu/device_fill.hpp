// Fills device memory with a host tile repeated end to end: one upload, then device-to-device
// copies that double the filled part. Cheap for gigabytes, and element i is tile[i % tile length].
#pragma once
#include <atomic>
#include <cstddef>

#include "gpu/bindings/cuda_api.hpp"

namespace gpuvet {

class GpuSession;

// Returns after the device holds the data (the context is synchronised). `stop`, when given, is
// polled between copies (each at most kFillStepBytes) and throws Interrupted (core/error.hpp).
void fill_repeating(GpuSession& s, cu::CUdeviceptr dst, std::size_t bytes, const void* tile, std::size_t tile_bytes,
                    const std::atomic<bool>* stop = nullptr);

// The largest copy between two polls of the stop: a fraction of a second even where copies are slow.
inline constexpr std::size_t kFillStepBytes = std::size_t(64) << 20;

}  // namespace gpuvet
