// The process must end without its teardown (nvmlShutdown, the drivers' atexit handlers, static
// destructors): a thread of gpuvet is still inside a driver call that may never return, which
// that teardown would wait for. main() then writes its output and leaves with _exit.
#pragma once

namespace gpuvet {

// Set by a command that left a thread inside a driver call (top's sampler on `q`).
void request_exit_without_teardown();
// True after the above, or when a library or GPU stopped answering (driver_deadline.hpp).
bool exit_without_teardown();

}  // namespace gpuvet
