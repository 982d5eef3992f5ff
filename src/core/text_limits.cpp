#include "core/text_limits.hpp"

#include <cctype>

#include "core/error.hpp"

namespace gpuvet {

namespace {

// Line and column of offset `at`, counted as the parsers count them (from 1).
std::string position(std::string_view text, const std::string& origin, std::size_t at) {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < at && i < text.size(); ++i) {
        if (text[i] == '\n') ++line, col = 1;
        else ++col;
    }
    return origin + ":" + std::to_string(line) + ":" + std::to_string(col);
}

bool bare_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

}  // namespace

void check_json_nesting(std::string_view text, const std::string& origin) {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > kMaxJsonDepth)
                throw input_error(position(text, origin, i) + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                                      " levels of objects and arrays",
                                  "pass the file as published; no config.json or report nests this deep");
        } else if (c == '}' || c == ']') {
            if (depth > 0) --depth;
        }
    }
}

void check_toml_nesting(std::string_view t, const std::string& origin) {
    int parts = 0, nesting = 0;
    bool after_part = false, after_dot = false;
    auto reset = [&] { parts = 0, after_part = after_dot = false; };
    auto part = [&](std::size_t at) {
        parts = after_dot ? parts + 1 : 1;
        after_dot = false;
        after_part = true;
        if (parts > kMaxTomlKeyParts)
            throw input_error(
                position(t, origin, at) + ": a dotted key of more than " + std::to_string(kMaxTomlKeyParts) + " parts",
                "write keys and [table] names with a few parts, as the documented examples do");
    };
    std::size_t i = 0;
    while (i < t.size()) {
        char c = t[i];
        if (c == '\n') {  // a key never spans lines
            reset();
            ++i;
        } else if (c == ' ' || c == '\t' || c == '\r') {  // allowed around the dots of a key
            ++i;
        } else if (c == '#') {
            while (i < t.size() && t[i] != '\n') ++i;
        } else if (c == '"' || c == '\'') {
            const bool basic = c == '"';
            const std::size_t start = i;
            if (t.substr(i, 3) == std::string(3, c)) {  // multi-line string: a value, never a key
                i += 3;
                while (i < t.size() && t.substr(i, 3) != std::string(3, c)) i += (basic && t[i] == '\\') ? 2 : 1;
                i += 3;
                reset();
                continue;
            }
            ++i;
            while (i < t.size() && t[i] != c && t[i] != '\n') i += (basic && t[i] == '\\') ? 2 : 1;
            if (i < t.size() && t[i] == c) ++i;
            part(start);
        } else if (bare_key_char(c)) {
            const std::size_t start = i;
            while (i < t.size() && bare_key_char(t[i])) ++i;
            part(start);
        } else if (c == '.') {
            if (after_part) after_dot = true, after_part = false;
            else reset();
            ++i;
        } else {
            if (c == '[' || c == '{') {
                if (++nesting > kMaxTomlNesting + 1)  // +1: the [[table]] header's own pair
                    throw input_error(position(t, origin, i) + ": arrays or inline tables nested deeper than " +
                                          std::to_string(kMaxTomlNesting) + " levels",
                                      "write the values flat, as the documented examples do");
            } else if ((c == ']' || c == '}') && nesting > 0) {
                --nesting;
            }
            reset();
            ++i;
        }
    }
}

}  // namespace gpuvet
