// Progress of long work on stderr: a live line on a TTY, a log line every few seconds otherwise,
// nothing when stdout carries JSON and stderr is not a terminal.
#pragma once
#include <memory>

#include "core/context.hpp"

namespace gpuvet {

std::unique_ptr<Progress> make_progress(bool quiet_unless_tty);

}  // namespace gpuvet
