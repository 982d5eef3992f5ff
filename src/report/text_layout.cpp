#include "report/text_layout.hpp"

#include <sstream>

namespace gpuvet {

std::string pad(std::string s, std::size_t n) {
    if (s.size() < n) s.resize(n, ' ');
    return s;
}

std::size_t visible_width(std::string_view s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == 0x1b) {  // skip an SGR escape
            while (i < s.size() && s[i] != 'm') ++i;
            continue;
        }
        n += (c & 0xC0) != 0x80;
    }
    return n;
}

std::string wrap(const std::string& prefix, const std::string& text, int width, int indent) {
    std::istringstream in(text);
    std::string word, out = prefix;
    int col = int(visible_width(prefix));
    bool first_word = true;
    while (in >> word) {
        int w = int(visible_width(word));
        if (!first_word && col + 1 + w > width) {
            out += '\n';  // appended: `"\n" + std::string&&` draws a false -Wrestrict from GCC 12
            out.append(std::size_t(indent), ' ');
            out += word;
            col = indent + w;
        } else {
            out += (first_word ? "" : " ") + word;
            col += (first_word ? 0 : 1) + w;
        }
        first_word = false;
    }
    return out;
}

}  // namespace gpuvet
