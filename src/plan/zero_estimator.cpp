#include "plan/zero_estimator.hpp"

#include <algorithm>

namespace gpuvet {

// Python's int() truncates toward zero; the sizes here are non-negative.
static std::int64_t py_int(double v) { return static_cast<std::int64_t>(v); }

ZeroEstimate deepspeed_zero2_estimate(std::int64_t P, int per_node, int nodes, bool cpu_offload, double buf) {
    const std::int64_t total_gpus = std::int64_t(per_node) * nodes;
    ZeroEstimate e;
    if (cpu_offload) {
        e.gpu_bytes = 2 * P;
        e.cpu_bytes = py_int(double(P) * double(std::max<std::int64_t>(4 * total_gpus, 16)) * buf);
    } else {
        e.gpu_bytes = 4 * P + py_int(16.0 * double(P) / double(total_gpus));
        e.cpu_bytes = py_int(double(P) * 4.0 * per_node * buf);
    }
    return e;
}

ZeroEstimate deepspeed_zero3_estimate(std::int64_t P, std::int64_t L, int per_node, int nodes, bool cpu_offload,
                                      bool cpu_offload_params, bool zero_init, double buf) {
    const std::int64_t total_gpus = std::int64_t(per_node) * nodes;
    const double gpus_factor = 1.0 / nodes;
    ZeroEstimate e;
    e.largest_layer_bytes = 4 * L;
    if (cpu_offload) {
        if (cpu_offload_params) {
            e.gpu_bytes = e.largest_layer_bytes;
            e.cpu_bytes = zero_init ? py_int(double(P) * 18 * gpus_factor * buf)
                                    : py_int(double(P) * std::max(4.0 * per_node, 18 * gpus_factor) * buf);
        } else {
            e.gpu_bytes = e.largest_layer_bytes + py_int(2.0 * double(P) / double(total_gpus));
            e.cpu_bytes = zero_init ? py_int(double(P) * 16 * gpus_factor * buf)
                                    : py_int(double(P) * std::max(4.0 * per_node, 16 * gpus_factor) * buf);
        }
    } else {
        e.gpu_bytes = e.largest_layer_bytes + py_int(18.0 * double(P) / double(total_gpus));
        e.cpu_bytes = zero_init ? py_int(double(L) * 4 * per_node * buf) : py_int(double(P) * 4 * per_node * buf);
    }
    return e;
}

}  // namespace gpuvet
