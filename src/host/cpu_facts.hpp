// CPU facts host.cpu adds to read_machine_info: frequency governors and the CPUs this process may use.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/host_fs.hpp"

namespace gpuvet {

// Governor name -> number of CPUs using it; empty when the kernel exposes no cpufreq (common in VMs).
std::map<std::string, int> read_governors(const HostFs& fs);

// The CPUs this process may run on (sched_getaffinity), in order.
std::vector<int> allowed_cpus();

// Expands "0-3,8" into {0,1,2,3,8}; nullopt if malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view list);

}  // namespace gpuvet
