#include "gpu/device_fill.hpp"

#include <algorithm>

#include "gpu/session.hpp"

namespace gpuvet {

void fill_repeating(GpuSession& s, cu::CUdeviceptr dst, std::size_t bytes, const void* tile, std::size_t tile_bytes) {
    std::size_t first = std::min(tile_bytes, bytes);
    s.upload(dst, tile, first);
    // Every copy starts at a multiple of the tile length, so the pattern stays aligned.
    for (std::size_t done = first; done < bytes;) {
        std::size_t n = std::min(done, bytes - done);
        cuda_check(s.api(), s.api().cuMemcpyDtoD(dst + done, dst, n), "cuMemcpyDtoD");
        done += n;
    }
    s.synchronize();  // device-to-device copies do not wait; streams that read it must see the data
}

}  // namespace gpuvet
