// Tokens of PTX text, each with its source line (comments dropped).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace fake::ptx {

struct Token {
    std::string text;
    int line = 0;
};

// Why a module was refused: the line and what on it the interpreter cannot run.
struct LoadError : std::runtime_error {
    int line;
    LoadError(int l, const std::string& what)
        : std::runtime_error("line " + std::to_string(l) + ": " + what), line(l) {}
};

std::vector<Token> lex(const std::string& text);

}  // namespace fake::ptx
