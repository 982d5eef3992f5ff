// gpuvet history: the local history database's commands (docs/history.md).
#pragma once
#include "cli/common.hpp"

namespace gpuvet {

void add_history_command(Cli cli);

}  // namespace gpuvet
