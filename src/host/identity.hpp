// Who the host is: CPU, memory, OS, kernel, virtualization and container limits.
#pragma once
#include "core/result.hpp"
#include "core/host_fs.hpp"

namespace gpuvet {

// Fills everything but `driver`. Unknown facts stay empty (never guessed).
MachineInfo read_machine_info(const HostFs& fs);

}  // namespace gpuvet
