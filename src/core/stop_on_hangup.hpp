// SIGHUP as a stop too (a closed session, a service manager's hangup): the orderly stop of SIGTERM
// (core/interrupt.hpp), for commands meant to run unattended (export).
#pragma once

namespace gpuvet {

void also_stop_on_hangup();

}  // namespace gpuvet
