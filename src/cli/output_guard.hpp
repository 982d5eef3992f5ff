// Where the results go, checked before anything is measured and after everything is printed:
// a run never measures for 40 s to find its report folder unwritable, never mixes its files with
// a concurrent run's, and never exits 0 when its output could not be written.
#pragma once
#include <string>

namespace gpuvet {

// Before the run: fds 0-2 that are closed are held open on /dev/null (so no file the run opens
// becomes "stdout"), and SIGPIPE is ignored so that a closed pipe is an EPIPE error to handle.
void guard_standard_streams();

// Before any measurement: creates the --report folder, proves it takes a file (permissions,
// read-only mounts, a full disk), and locks it for this run. Usage error (exit 2) with the fix.
void claim_report_dir(const std::string& dir);

// For a command whose stdout is not its own (`run`: it belongs to the job): a closed stdout is no
// error of gpuvet's, and finish_output leaves the exit code alone.
void stdout_belongs_to_child();

// After the command: flushes stdout. A write error (closed stdout, a full disk, /dev/full) is said
// on stderr and turns `code` into 3; EPIPE (the reader went away, `| head`) ends quietly with `code`.
int finish_output(int code);

}  // namespace gpuvet
