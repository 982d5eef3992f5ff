// gpuvet fleet: every node of a Slurm cluster (cli/fleet_cmd.cpp).
#pragma once
#include "cli/common.hpp"

namespace gpuvet {

void add_fleet_command(Cli cli);

}  // namespace gpuvet
