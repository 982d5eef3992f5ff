#include "core/interrupt.hpp"
#include "core/stop_on_hangup.hpp"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>

#include "core/error.hpp"

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

// The full-screen program's terminal (TerminalRestore): `armed` is read by the handler.
std::atomic<bool> g_screen_armed{false};
int g_screen_fd = -1;
termios g_screen_termios{};
char g_screen_leave[64] = {0};

std::atomic<const char*> g_first_message{
    "\ngpuvet: stopping; the report of what was measured follows (again to exit at once)\n"};

void say(const char* s) { (void)!write(STDERR_FILENO, s, std::strlen(s)); }

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
    for (auto& g : g_groups)
        if (int pgid = g.load(); pgid > 0) kill(-pgid, SIGKILL);
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

CleanupProcessGroup::CleanupProcessGroup(int pgid) {
    for (int i = 0; i < kSlots && pgid > 0; ++i) {
        int expected = 0;
        if (g_groups[i].compare_exchange_strong(expected, pgid)) {
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

}  // namespace gpuvet
