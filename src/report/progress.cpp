#include "report/progress.hpp"

#include "core/text_safety.hpp"
#include "report/style.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace gpuvet {

namespace {

class StderrProgress final : public Progress {
public:
    StderrProgress(bool tty, bool quiet) : tty_(tty), quiet_(quiet) {}
    void begin(std::string_view key, std::string_view title) override {
        key_ = std::string(key);
        t0_ = last_ = std::chrono::steady_clock::now();
        if (quiet_) return;
        if (tty_) std::fprintf(stderr, "\r\x1b[2K  %s: %.*s…", key_.c_str(), int(title.size()), title.data());
        std::fflush(stderr);
    }
    void update(std::string_view raw) override {
        if (quiet_) return;
        const std::string line = terminal_safe(raw);  // a benchmark's own text may carry escapes
        auto now = std::chrono::steady_clock::now();
        double since = std::chrono::duration<double>(now - last_).count();
        if (tty_) {
            if (since < 0.2) return;
            std::fprintf(stderr, "\r\x1b[2K  %s: %.*s", key_.c_str(), int(line.size()), line.data());
        } else {
            if (since < 10) return;  // a log line every 10 s when not on a terminal
            double t = std::chrono::duration<double>(now - t0_).count();
            std::fprintf(stderr, "[%6.0fs] %s: %.*s\n", t, key_.c_str(), int(line.size()), line.data());
        }
        last_ = now;
        std::fflush(stderr);
    }
    // TTY: the block is redrawn in place (cursor moved up over the previous block);
    // otherwise every line is logged every 10 s.
    void update_lines(const std::vector<std::string>& lines) override {
        if (quiet_) return;
        auto now = std::chrono::steady_clock::now();
        double since = std::chrono::duration<double>(now - last_).count();
        if (since < (tty_ ? 0.5 : 10.0)) return;
        if (tty_) {
            std::string out = "\r";
            if (block_lines_ > 0) out += "\x1b[" + std::to_string(block_lines_) + "A";
            for (const auto& l : lines) out += "\x1b[2K  " + terminal_safe(l) + "\n";
            std::fputs(out.c_str(), stderr);
            block_lines_ = int(lines.size());
        } else {
            double t = std::chrono::duration<double>(now - t0_).count();
            for (const auto& l : lines)
                std::fprintf(stderr, "[%6.0fs] %s: %s\n", t, key_.c_str(), terminal_safe(l).c_str());
        }
        last_ = now;
        std::fflush(stderr);
    }
    void end() override {
        if (!quiet_ && tty_ && block_lines_ > 0) {  // clear the block so the scorecard follows cleanly
            std::fprintf(stderr, "\r\x1b[%dA\x1b[J", block_lines_);
            block_lines_ = 0;
        }
        if (!quiet_ && tty_) std::fprintf(stderr, "\r\x1b[2K");
        std::fflush(stderr);
    }

private:
    bool tty_, quiet_;
    std::string key_;
    std::chrono::steady_clock::time_point t0_, last_;
    int block_lines_ = 0;  // lines of the multi-line block on screen
};

}  // namespace

std::unique_ptr<Progress> make_progress(bool quiet_unless_tty) {
    // A terminal that cannot redraw a line gets the log lines a pipe gets.
    bool tty = escape_capable_terminal(STDERR_FILENO);
    return std::make_unique<StderrProgress>(tty, quiet_unless_tty && !::isatty(STDERR_FILENO));
}

}  // namespace gpuvet
