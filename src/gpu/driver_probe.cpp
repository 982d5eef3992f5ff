#include "gpu/driver_probe.hpp"

#include "gpu/vendor/dynlib.hpp"

namespace gpuvet {

DriverInfo probe_driver() {
    DriverInfo d;
    auto cuda = DynLib::open(kEnvLibCuda, {"libcuda.so.1", "libcuda.so"});
    if (!cuda) {
        d.present = false;
        d.absent_reason = "libcuda.so.1 could not be loaded: " + cuda.error();
        return d;
    }
    d.libcuda_path = cuda.path();
    using cuInit_t = int (*)(unsigned);
    using cuDriverGetVersion_t = int (*)(int*);
    auto init = reinterpret_cast<cuInit_t>(cuda.symbol("cuInit"));
    auto ver = reinterpret_cast<cuDriverGetVersion_t>(cuda.symbol("cuDriverGetVersion"));
    if (!init || !ver) {
        d.absent_reason = "libcuda.so.1 at " + cuda.path() + " lacks cuInit/cuDriverGetVersion";
        return d;
    }
    int v = 0;
    if (ver(&v) == 0) d.cuda_driver_version = v;
    int rc = init(0);
    if (rc != 0) {
        d.absent_reason = "cuInit failed with CUDA error " + std::to_string(rc);
        return d;
    }
    d.present = true;
    auto nvml = DynLib::open(kEnvLibNvml, {"libnvidia-ml.so.1", "libnvidia-ml.so"});
    if (nvml) d.libnvml_path = nvml.path();
    return d;
}

}  // namespace gpuvet
