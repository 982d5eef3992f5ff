// Ctrl-C and SIGTERM. The first signal sets the stop flag: long work polls it, ends within a second
// and the report of what was measured is printed (INCOMPLETE). A second signal exits at once with
// exit code 3, after clearing the progress line, removing the files registered here, starting the
// cleanup command and ending the process groups registered here: the handler does only
// async-signal-safe things (write, unlink of pre-registered paths, _Fork and execve, kill,
// waitpid, nanosleep, _exit).
#pragma once
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

namespace gpuvet {

// Set by the first SIGINT / SIGTERM.
const std::atomic<bool>& stop_flag();
// Sets the stop flag as the first signal does, without its message: for a command whose own
// thread takes the signals (`run`'s job control), so that whatever polls the flag (a driver call's
// wait) sees the stop too.
void request_stop();
// What the first signal prints instead of the default (which promises a report); `text` must have
// static storage duration. The recorder (`top --log`) says its file keeps what was recorded.
void set_first_stop_message(const char* text);
// Installs the handlers; `stderr_is_tty`: the second signal clears the live progress line there.
void install_stop_handlers(bool stderr_is_tty);

// While a full-screen program owns the terminal: the terminal settings to put back and the bytes
// that leave its screen mode (alternate screen off, cursor on), applied by the second signal before
// it exits (tcsetattr and write are async-signal-safe), and the first signal prints nothing (the
// program redraws or leaves the screen itself). One at a time; the slot is freed on destruction.
class TerminalRestore {
public:
    // Snapshots the settings of `fd` now (call before the program changes them).
    TerminalRestore(int fd, const char* leave_sequence);
    ~TerminalRestore();
    TerminalRestore(const TerminalRestore&) = delete;
    TerminalRestore& operator=(const TerminalRestore&) = delete;
};

// A temporary file the second signal removes before exiting; the slot is freed on destruction.
// Registration takes no lock and allocates nothing in the handler's path.
class CleanupPath {
public:
    explicit CleanupPath(const std::filesystem::path& p);
    ~CleanupPath();
    CleanupPath(const CleanupPath&) = delete;
    CleanupPath& operator=(const CleanupPath&) = delete;

private:
    int slot_ = -1;  // -1: no free slot (or path too long); the file is then unlinked early as usual
};

// A child's process group that the second signal kills (SIGKILL) before exiting, so that an
// immediate exit leaves no framework process behind; the slot is freed on destruction. With
// `terminate_first`, the group gets SIGTERM and up to kTerminateGraceS to end (its leader, our
// child, is waited for) before the SIGKILL: a client such as srun then ends what it started on
// other machines while its pipes to us are still open.
inline constexpr double kTerminateGraceS = 2;
class CleanupProcessGroup {
public:
    explicit CleanupProcessGroup(int pgid, bool terminate_first = false);
    ~CleanupProcessGroup();
    CleanupProcessGroup(const CleanupProcessGroup&) = delete;
    CleanupProcessGroup& operator=(const CleanupProcessGroup&) = delete;

private:
    int slot_ = -1;
};

// A command the second signal starts (fork and execve, in a process group of its own, not waited
// for) before it exits, e.g. `scancel 42.0`: what gpuvet started through a scheduler on other
// machines is ended even when gpuvet leaves at once. One command at a time; arm() replaces it and
// the destructor disarms it. argv[0] is looked up in PATH when armed (a signal handler cannot).
class CleanupCommand {
public:
    CleanupCommand() = default;
    ~CleanupCommand();
    CleanupCommand(const CleanupCommand&) = delete;
    CleanupCommand& operator=(const CleanupCommand&) = delete;
    // False when argv[0] is not found or the command does not fit the handler's fixed buffer.
    bool arm(const std::vector<std::string>& argv);
    void disarm();

private:
    bool armed_ = false;
};

}  // namespace gpuvet
