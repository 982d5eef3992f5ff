// Text on a terminal: widths that skip colour escapes, padding, and word wrapping. Every terminal
// view lays its text out with these.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuvet {

// `s` padded with spaces to `n` bytes (left as it is when longer).
std::string pad(std::string s, std::size_t n);
// Columns a string takes on a terminal (UTF-8, colour escapes skipped).
std::size_t visible_width(std::string_view s);
// `prefix` then `text` word-wrapped to `width` columns, continuation lines indented by `indent`.
std::string wrap(const std::string& prefix, const std::string& text, int width, int indent);

}  // namespace gpuvet
