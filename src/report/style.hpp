// Terminal styling: colour only on a TTY (and never with --no-color or NO_COLOR).
#pragma once
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpuvet {

struct Style {
    bool color = false;
    int width = 100;
    bool verbose = false;  // every measurement of every result, not only those that explain a verdict
    // A result that did not pass shows only the figures and findings behind its verdict (the
    // compact scorecard); its details (advice, tables) stay.
    bool focus = false;

    std::string paint(std::string_view text, const char* sgr) const;
    std::string verdict(Verdict v) const;  // "PASS" in green, "FAIL" in red...
    std::string bold(std::string_view t) const { return paint(t, "1"); }
    std::string dim(std::string_view t) const { return paint(t, "2"); }
};

// Colour when stdout is a terminal that understands escape sequences, NO_COLOR is unset and
// --no-color was not given.
Style detect_style(bool no_color_flag);

// Whether `fd` is a terminal that takes ANSI escape sequences: TERM=dumb (Emacs shells, some CI
// consoles) and an unset TERM do not, so they get plain text and progress as log lines.
bool escape_capable_terminal(int fd);

}  // namespace gpuvet
