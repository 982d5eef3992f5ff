#include "ptx_lex.hpp"

#include <cctype>

namespace fake::ptx {

namespace {

bool word_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '%' || c == '$';
}
bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '%';
}

}  // namespace

std::vector<Token> lex(const std::string& s) {
    std::vector<Token> out;
    int line = 1;
    size_t i = 0;
    while (i < s.size()) {
        char c = s[i];
        if (c == '\n') {
            ++line, ++i;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
        } else if (s.compare(i, 2, "//") == 0) {
            while (i < s.size() && s[i] != '\n') ++i;
        } else if (s.compare(i, 2, "/*") == 0) {
            size_t end = s.find("*/", i + 2);
            if (end == std::string::npos) throw LoadError(line, "unterminated /* comment");
            for (size_t k = i; k < end; ++k) line += s[k] == '\n';
            i = end + 2;
        } else if (word_start(c) || std::isdigit(static_cast<unsigned char>(c))) {
            size_t j = i + 1;
            while (j < s.size() && word_char(s[j])) ++j;
            out.push_back({s.substr(i, j - i), line});
            i = j;
        } else if (std::string_view(",;()[]{}+-@!:<>|=").find(c) != std::string_view::npos) {
            out.push_back({std::string(1, c), line});
            ++i;
        } else {
            throw LoadError(line, std::string("unexpected character '") + c + "'");
        }
    }
    return out;
}

}  // namespace fake::ptx
