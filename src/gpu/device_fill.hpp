// Fills device memory with a host tile repeated end to end: one upload, then device-to-device
// copies that double the filled part. Cheap for gigabytes, and element i is tile[i % tile length].
#pragma once
#include <cstddef>

#include "gpu/vendor/cuda_api.hpp"

namespace gpuvet {

class GpuSession;

// Returns after the device holds the data (the context is synchronised).
void fill_repeating(GpuSession& s, cu::CUdeviceptr dst, std::size_t bytes, const void* tile, std::size_t tile_bytes);

}  // namespace gpuvet
