// Reading the TOML files gpuvet takes from its data folder and from users (spec overrides, orders,
// prices, the model catalog, the training baselines) one way: nesting bounded before parsing, and
// every error placed at file:line:column with the file's own advice.
#pragma once
#include <string>
#include <string_view>
#include <toml++/toml.h>

namespace gpuvet {

// "origin:line:column" of a place in a parsed file.
std::string toml_where(const std::string& origin, const toml::source_region& src);
// The parsed document; a syntax error is an input_error at its place with `advice`.
toml::table parse_toml_document(std::string_view text, const std::string& origin, const std::string& advice);

}  // namespace gpuvet
