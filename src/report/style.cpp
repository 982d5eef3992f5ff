#include "report/style.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace gpuvet {

std::string Style::paint(std::string_view text, const char* sgr) const {
    if (!color) return std::string(text);
    return std::string("\x1b[") + sgr + "m" + std::string(text) + "\x1b[0m";
}

std::string Style::verdict(Verdict v) const {
    const char* sgr = "0";
    switch (v) {
        case Verdict::Pass: sgr = "32"; break;
        case Verdict::Warn: sgr = "33"; break;
        case Verdict::Fail: sgr = "1;31"; break;
        case Verdict::Error: sgr = "1;35"; break;
        case Verdict::Skip: sgr = "2"; break;
    }
    std::string t = to_string(v);
    t.resize(5, ' ');
    return paint(t, sgr);
}

namespace {

bool no_color_env() {
    const char* v = std::getenv("NO_COLOR");
    return v && *v;  // no-color.org: set to any non-empty value; an empty one does not count
}

}  // namespace

bool escape_capable_terminal(int fd) {
    const char* term = std::getenv("TERM");
    return ::isatty(fd) && term && *term && std::string_view(term) != "dumb";
}

Style detect_style(bool no_color_flag) {
    Style s;
    s.color = !no_color_flag && escape_capable_terminal(STDOUT_FILENO) && !no_color_env();
    struct winsize ws {};
    if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 60)
        s.width = ws.ws_col < 140 ? ws.ws_col : 140;
    return s;
}

}  // namespace gpuvet
