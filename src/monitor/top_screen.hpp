// The full-screen `gpuvet top` (ncurses): draws a TopFrame in a ViewState and reads keys. The
// terminal is restored on every exit path: the destructor (normal end, exceptions) calls endwin,
// and a second Ctrl-C/SIGTERM, which exits at once, puts the saved terminal settings back from
// the signal handler (core/interrupt.hpp TerminalRestore).
#pragma once
#include <chrono>
#include <memory>

#include "core/interrupt.hpp"
#include "monitor/top_keys.hpp"
#include "monitor/top_model.hpp"

namespace gpuvet {

// The smallest terminal the monitor draws in; smaller shows a one-line message until it grows.
inline constexpr int kTopMinColumns = 60;
inline constexpr int kTopMinLines = 6;

class TopScreen {
public:
    // Takes the terminal (stdin/stdout must be a terminal); `color` false draws without colours.
    // A usage error (exit 2) when TERM is unknown or cannot move the cursor (dumb), with the fix.
    explicit TopScreen(bool color);
    ~TopScreen();
    TopScreen(const TopScreen&) = delete;
    TopScreen& operator=(const TopScreen&) = delete;

    void draw(const TopFrame& f, const ViewState& v);
    // The next key pressed before `until` (a terminal resize reads as KEY_RESIZE); -1 when none.
    int key_until(std::chrono::steady_clock::time_point until);
    static int resize_key();

private:
    std::unique_ptr<TerminalRestore> restore_;
    void* screen_ = nullptr;  // ncurses' SCREEN, kept opaque: curses.h's macros stay in the .cpp
    bool unicode_ = false;
};

}  // namespace gpuvet
