// Small string helpers shared by parsers and printers.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gpuvet {

std::string to_lower(std::string_view s);
std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
bool starts_with(std::string_view s, std::string_view prefix);
// "1.43", "312", "0.0123": a number for people, not for machines. Magnitudes of 10^15 and more
// (or below 10^-6) print in scientific notation, "1.23e+20", never as dozens of digits.
std::string format_number(double v, int significant = 3);
// "%.{decimals}f" for table cells, with format_number's scientific notation from 10^15 on.
std::string format_fixed(double v, int decimals);
// The same, "n/a" for a figure not measured (NaN): the one word the run's printers use for it.
std::string format_fixed_or_na(double v, int decimals);
// 85899345920 -> "80.0 GiB"
std::string format_bytes(double bytes);
// "12.8" from the driver's CUDA version number 12080 (cuDriverGetVersion, NVML), the one spelling.
std::string cuda_version_text(long v);
// Levenshtein distance, for "did you mean"; texts beyond 256 characters count their excess as edits.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace gpuvet
