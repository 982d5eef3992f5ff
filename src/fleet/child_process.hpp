// A Slurm client (srun, scontrol, scancel) run as a child: its own process group (so a Ctrl-C at
// the terminal reaches gpuvet, which then ends the step itself, and not srun, whose first SIGINT only
// prints task states), its stdout and stderr read through pipes.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

inline constexpr double kReapWaitS = 2;

class ChildProcess {
public:
    // Starts `argv` (argv[0] looked up in PATH) with this process's environment less the variables
    // named in `drop_env`; a Runtime error when it cannot be started.
    explicit ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& drop_env = {});
    // Kills the group (SIGKILL) when still running and reaps it, waiting at most kReapWaitS: a
    // child stuck in the kernel (a wedged driver) must not hold gpuvet.
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    int out_fd() const { return out_; }
    int err_fd() const { return err_; }
    pid_t pid() const { return pid_; }
    // Reads what is ready on `fd` into `into`; false at end of file (the fd is then closed).
    bool read_ready(int& fd, std::string& into);
    void signal_group(int sig);
    // The exit status when the child has ended (128 + signal for a signal), without waiting.
    std::optional<int> poll_exit();
    // Waits up to `timeout_s` for the end; nothing when it did not end.
    std::optional<int> wait_exit(double timeout_s);

private:
    pid_t pid_ = -1;
    int out_ = -1, err_ = -1;
    std::optional<int> status_;
    bool killed_ = false;  // SIGKILL sent and waited for once: the destructor does not wait again
};

// Runs `argv` to its end (at most `timeout_s`, then killed; the whole call takes at most
// timeout_s + kReapWaitS): its exit status, stdout and stderr. A command that cannot start is
// status 127, one killed at its timeout 137.
struct CommandResult {
    int status = 127;
    std::string out, err;
};
CommandResult run_command(const std::vector<std::string>& argv, double timeout_s);

}  // namespace gpuvet
