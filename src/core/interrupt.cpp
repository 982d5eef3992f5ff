#include "core/interrupt.hpp"
#include "core/stop_on_hangup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

extern char** environ;

namespace gpuvet {

namespace {

std::atomic<bool> g_stop{false};
bool g_tty = false;

// Fixed slots: the handler reads them without locks. `state`: 0 free, 1 being written, 2 ready.
constexpr int kSlots = 8;
constexpr std::size_t kPathMax = 4096;
struct Slot {
    std::atomic<int> state{0};
    char path[kPathMax];
};
Slot g_slots[kSlots];
std::atomic<int> g_groups[kSlots];  // process group ids, 0: free
std::atomic<bool> g_group_terminate[kSlots];

// The cleanup command: argv as NUL-separated words in `text`, pointers in `argv`. `state` as for
// the slots.
constexpr std::size_t kCommandMax = 4096;
constexpr int kCommandArgsMax = 32;
struct Command {
    std::atomic<int> state{0};
    char text[kCommandMax];
    char* argv[kCommandArgsMax + 1];
};
Command g_command;

// The full-screen program's terminal (TerminalRestore): `armed` is read by the handler.
std::atomic<bool> g_screen_armed{false};
int g_screen_fd = -1;
termios g_screen_termios{};
char g_screen_leave[64] = {0};

std::atomic<const char*> g_first_message{
    "\ngpuvet: stopping; the report of what was measured follows (again to exit at once)\n"};

void say(const char* s) { (void)!write(STDERR_FILENO, s, std::strlen(s)); }

// Async-signal-safe: _Fork (glibc 2.34 and later; fork runs atfork handlers) and execve.
pid_t fork_in_handler() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return _Fork();
#else
    return fork();
#endif
}

void run_cleanup_command() {
    if (g_command.state.load() != 2) return;
    pid_t pid = fork_in_handler();
    if (pid == 0) {
        setpgid(0, 0);  // a third Ctrl-C at the terminal must not stop it
        // Nor may it hold gpuvet's output open (a caller reading it would wait for it).
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) dup2(null, STDOUT_FILENO), dup2(null, STDERR_FILENO);
        execve(g_command.argv[0], g_command.argv, environ);
        _exit(127);
    }
}

void sleep_ms(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, nullptr);
}

// SIGTERM to the groups that asked for it, their leaders waited for up to kTerminateGraceS, then
// SIGKILL to every group.
void end_groups() {
    bool waiting = false;
    for (int i = 0; i < kSlots; ++i)
        if (int pgid = g_groups[i].load(); pgid > 0 && g_group_terminate[i].load()) {
            kill(-pgid, SIGTERM);
            waiting = true;
        }
    for (long waited_ms = 0; waiting && waited_ms < long(kTerminateGraceS * 1000); waited_ms += 20) {
        waiting = false;
        for (int i = 0; i < kSlots; ++i)
            if (int pgid = g_groups[i].load(); pgid > 0 && g_group_terminate[i].load()) {
                int status;
                pid_t r = waitpid(pgid, &status, WNOHANG);
                if (r == 0) waiting = true;
            }
        if (waiting) sleep_ms(20);
    }
    for (auto& g : g_groups)
        if (int pgid = g.load(); pgid > 0) kill(-pgid, SIGKILL);
}

void on_signal(int) {
    bool screen = g_screen_armed.load();
    if (!g_stop.exchange(true)) {
        if (!screen) say(g_first_message.load());
        return;
    }
    // The second signal: leave the terminal clean, remove what is ours, go.
    if (screen) {
        tcsetattr(g_screen_fd, TCSANOW, &g_screen_termios);
        (void)!write(g_screen_fd, g_screen_leave, std::strlen(g_screen_leave));
    }
    if (g_tty) say("\r\x1b[2K\x1b[0m");
    for (auto& s : g_slots)
        if (s.state.load() == 2) unlink(s.path);
    run_cleanup_command();
    end_groups();
    say("gpuvet: interrupted again: exiting without a report (exit 3)\n");
    _exit(exit_code::could_not_run);
}

}  // namespace

const std::atomic<bool>& stop_flag() { return g_stop; }

void request_stop() { g_stop.store(true); }

void set_first_stop_message(const char* text) { g_first_message.store(text); }

void install_stop_handlers(bool stderr_is_tty) {
    g_tty = stderr_is_tty;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;  // reads and writes in flight carry on; the stop flag ends the work
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);  // one handler at a time: the second waits for the first to return
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

void also_stop_on_hangup() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);
    sigaction(SIGHUP, &sa, nullptr);
}

TerminalRestore::TerminalRestore(int fd, const char* leave_sequence) {
    if (tcgetattr(fd, &g_screen_termios) != 0) return;
    g_screen_fd = fd;
    std::strncpy(g_screen_leave, leave_sequence, sizeof g_screen_leave - 1);
    g_screen_armed.store(true);
}

TerminalRestore::~TerminalRestore() { g_screen_armed.store(false); }

CleanupPath::CleanupPath(const std::filesystem::path& p) {
    const std::string& s = p.native();
    if (s.size() >= kPathMax) return;
    for (int i = 0; i < kSlots; ++i) {
        int expected = 0;
        if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
        std::memcpy(g_slots[i].path, s.c_str(), s.size() + 1);
        g_slots[i].state.store(2);
        slot_ = i;
        return;
    }
}

CleanupProcessGroup::CleanupProcessGroup(int pgid, bool terminate_first) {
    for (int i = 0; i < kSlots && pgid > 0; ++i) {
        int expected = 0;
        if (g_groups[i].compare_exchange_strong(expected, -1)) {  // -1: taken, not ready for the handler
            g_group_terminate[i].store(terminate_first);
            g_groups[i].store(pgid);
            slot_ = i;
            return;
        }
    }
}

CleanupProcessGroup::~CleanupProcessGroup() {
    if (slot_ >= 0) g_groups[slot_].store(0);
}

CleanupPath::~CleanupPath() {
    if (slot_ >= 0) g_slots[slot_].state.store(0);
}

namespace {

// argv[0] as an absolute path: as given when it names a folder, else the first PATH entry that has
// it as an executable file.
std::string resolve_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        std::size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    return {};
}

}  // namespace

bool CleanupCommand::arm(const std::vector<std::string>& argv) {
    disarm();
    if (argv.empty() || argv.size() > std::size_t(kCommandArgsMax)) return false;
    std::vector<std::string> words = argv;
    words[0] = resolve_program(argv[0]);
    if (words[0].empty()) return false;
    std::size_t need = 0;
    for (auto& w : words) need += w.size() + 1;
    if (need > kCommandMax) return false;
    int expected = 0;
    if (!g_command.state.compare_exchange_strong(expected, 1)) return false;  // another owns it
    std::size_t at = 0;
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::memcpy(g_command.text + at, words[i].c_str(), words[i].size() + 1);
        g_command.argv[i] = g_command.text + at;
        at += words[i].size() + 1;
    }
    g_command.argv[words.size()] = nullptr;
    g_command.state.store(2);
    armed_ = true;
    return true;
}

void CleanupCommand::disarm() {
    if (armed_) g_command.state.store(0);
    armed_ = false;
}

CleanupCommand::~CleanupCommand() { disarm(); }

}  // namespace gpuvet
