// The registry: every check of `gpuvet check`, in the order they run. Explicit on purpose:
// reading this file tells what `gpuvet check` does.
#include "core/check.hpp"
#include "gpu/check_allreduce.hpp"
#include "gpu/check_burn.hpp"
#include "gpu/check_driver.hpp"
#include "gpu/check_gemm.hpp"
#include "host/check_balance.hpp"
#include "host/check_cpu.hpp"
#include "host/check_identity.hpp"
#include "host/check_memory.hpp"
#include "host/check_network.hpp"
#include "host/check_storage.hpp"

namespace gpuvet {

CheckList all_checks() {
    CheckList c;
    c.push_back(std::make_unique<HostIdentityCheck>());
    c.push_back(std::make_unique<HostCpuCheck>());
    c.push_back(std::make_unique<HostMemoryCheck>());
    c.push_back(std::make_unique<HostStorageCheck>());
    c.push_back(std::make_unique<HostNetworkCheck>());
    c.push_back(std::make_unique<HostBalanceCheck>());
    c.push_back(std::make_unique<GpuDriverCheck>());
    c.push_back(std::make_unique<GpuGemmCheck>());
    c.push_back(std::make_unique<GpuAllReduceCheck>());
    c.push_back(std::make_unique<GpuBurnCheck>());  // last of the GPU checks: it heats the GPUs
    return c;
}

}  // namespace gpuvet
