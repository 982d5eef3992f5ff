#include "gpu/device_fill.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "gpu/session.hpp"

namespace gpuvet {

void fill_repeating(GpuSession& s, cu::CUdeviceptr dst, std::size_t bytes, const void* tile, std::size_t tile_bytes,
                    const std::atomic<bool>* stop) {
    std::size_t first = std::min(tile_bytes, bytes);
    s.upload(dst, tile, first);
    // Every copy starts at a multiple of the tile length, so the pattern stays aligned: a step is
    // a whole number of the filled part's lengths up to kFillStepBytes.
    for (std::size_t done = first; done < bytes;) {
        if (stop && stop->load()) {
            s.synchronize();  // the copies in flight end before the caller frees the buffer
            throw Interrupted{};
        }
        std::size_t n = std::min(done, bytes - done);
        if (stop && n > kFillStepBytes && first <= kFillStepBytes) n = std::max(first, kFillStepBytes / first * first);
        cuda_check(s.api(), s.api().cuMemcpyDtoD(dst + done, dst, n), "cuMemcpyDtoD");
        done += n;
    }
    s.synchronize();  // device-to-device copies do not wait; streams that read it must see the data
}

}  // namespace gpuvet
