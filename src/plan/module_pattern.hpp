// Module-name patterns of quantization configs (modules_to_not_convert, compressed-tensors'
// "re:" entries, GPTQ's dynamic keys): the part of Python's `re` those configs use, matched the way
// re.match and re.fullmatch do. A Thompson NFA runs it, so no pattern in a config can make matching
// slower than name length × pattern size (a backtracking engine can take exponential time).
#pragma once
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvet {

class NamePattern {
public:
    // Literals, '.', classes ([a-z], [^0-9], \d \w \s and their negations), groups ((...), (?:...)),
    // alternation, the quantifiers * + ? {m} {m,} {m,n} (lazy forms too), ^ and $. Anything else
    // (back-references, look-around, \b) throws std::invalid_argument saying what.
    static NamePattern compile(std::string_view regex);

    // re.match: a match that starts at the name's first character and may end anywhere.
    bool match_start(std::string_view name) const { return run(name, false); }
    // re.fullmatch: the whole name.
    bool match_whole(std::string_view name) const { return run(name, true); }

    std::size_t instructions() const { return prog_.size(); }

    struct Inst {
        enum Op : std::uint8_t { Set, Split, Jump, Begin, End, Match } op = Match;
        std::int32_t x = 0, y = 0;  // Set: the class index; Split: both targets; Jump: the target
    };

private:
    bool run(std::string_view s, bool whole) const;
    std::vector<Inst> prog_;
    std::vector<std::bitset<256>> sets_;
};

// Whether a pattern reads the same as a literal name: no metacharacter but '.', which in a module
// name stands for the dot itself (matching any character there finds no other real name).
bool is_literal_name(std::string_view pattern);

}  // namespace gpuvet
