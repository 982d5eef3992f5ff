#include "core/text_safety.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>

namespace gpuvet {

namespace {

// Length of the valid UTF-8 sequence at s[i] and its code point; 0 when the bytes there are not one
// (overlong forms, surrogates and code points past U+10FFFF are not valid).
std::size_t utf8_at(std::string_view s, std::size_t i, std::uint32_t& cp) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    unsigned char c = b(0);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(k) & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

bool hidden(std::uint32_t cp, bool keep_newlines) {
    if (cp == '\t' || (cp == '\n' && keep_newlines)) return false;
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) return true;
    // Bidirectional embeddings, overrides and isolates reorder what the reader sees.
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void escape(std::string& out, std::uint32_t cp, bool byte) {
    char buf[16];
    if (byte || cp < 0x80) std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
    else std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    out += buf;
}

// The attributes gpuvet's own styles set (report/style.cpp, top): reset, bold, dim, and the
// foreground colours red, green, yellow, magenta, cyan. Never conceal (8), blink, reverse,
// backgrounds or the extended colours, which a crafted string could use to hide or forge text.
bool own_attribute(int a) {
    switch (a) {
        case 0:
        case 1:
        case 2:
        case 22:
        case 31:
        case 32:
        case 33:
        case 35:
        case 36:
        case 39: return true;
        default: return false;
    }
}

// Length of the style sequence ESC [ <attributes> m at s[i] whose every attribute is one of
// gpuvet's own; 0 when it is not one.
std::size_t sgr_at(std::string_view s, std::size_t i) {
    if (i + 2 >= s.size() || s[i] != '\x1b' || s[i + 1] != '[') return 0;
    std::size_t k = i + 2;
    int attribute = 0, digits = 0;
    for (; k < s.size() && k - i < 16; ++k) {
        if (s[k] >= '0' && s[k] <= '9') {
            attribute = attribute * 10 + (s[k] - '0');
            if (++digits > 2) return 0;
        } else if (s[k] == ';' || s[k] == 'm') {
            if (!own_attribute(attribute)) return 0;
            if (s[k] == 'm') return k + 1 - i;
            attribute = digits = 0;
        } else {
            return 0;
        }
    }
    return 0;
}

std::string neutralise(std::string_view s, bool keep_newlines, bool keep_sgr) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (keep_sgr) {
            if (std::size_t n = sgr_at(s, i)) {
                out.append(s.substr(i, n));
                i += n;
                continue;
            }
        }
        std::uint32_t cp = 0;
        std::size_t n = utf8_at(s, i, cp);
        if (n == 0) {
            escape(out, static_cast<unsigned char>(s[i]), true);
            ++i;
            continue;
        }
        if (hidden(cp, keep_newlines)) escape(out, cp, false);
        else out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

}  // namespace

std::string visible_text(std::string_view s, bool keep_newlines) { return neutralise(s, keep_newlines, false); }

std::string terminal_safe(std::string_view rendered) { return neutralise(rendered, true, true); }

std::string markdown_text(std::string_view s) {
    const std::string v = visible_text(s, true);
    std::string out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        const char c = v[i], next = i + 1 < v.size() ? v[i + 1] : '\0';
        const bool tag_start =
            std::isalpha(static_cast<unsigned char>(next)) || next == '/' || next == '!' || next == '?';
        if (c == '\n') out += ' ';
        else if (c == '|') out += "\\|";
        else if (c == '<' && tag_start) out += "&lt;";   // an HTML tag, comment or autolink; "warn < 5" stays
        else if (c == ']' && next == '(') out += "\\]";  // the end of a link's text; "[note]" stays
        else out += c;
    }
    return out;
}

}  // namespace gpuvet
