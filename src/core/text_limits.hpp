// Structural limits checked on the raw text before a parser sees it. nlohmann::json and toml++
// recurse per nesting level (and a config's wrappers are followed per level), so a small crafted
// file can exhaust the stack; no real input comes near these bounds.
#pragma once
#include <string>
#include <string_view>

namespace gpuvet {

inline constexpr int kMaxJsonDepth = 64;     // objects and arrays inside each other
inline constexpr int kMaxTomlKeyParts = 64;  // a.b.c: parts of one dotted key or [table.header]
inline constexpr int kMaxTomlNesting = 32;   // arrays and inline tables inside each other

// Throws an Input error "origin:line:column: ..." when the JSON text nests deeper than kMaxJsonDepth.
void check_json_nesting(std::string_view text, const std::string& origin);
// Throws an Input error "origin:line:column: ..." for a dotted key longer than kMaxTomlKeyParts
// parts or values nested deeper than kMaxTomlNesting.
void check_toml_nesting(std::string_view text, const std::string& origin);

}  // namespace gpuvet
