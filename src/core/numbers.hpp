// The one way numbers are read: from options ("--sample-hz 2", "--storage-bytes 1G",
// "--duration 10m") and from fields of input files. Strict: the whole text is consumed, NaN and
// infinities are refused, hex is refused, whole numbers must be whole, and every value must lie in
// the range its rule declares. Errors name the option or field, the value, the range and an example.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuvet {

// What may follow the number.
enum class NumberUnit {
    None,     // a plain number: "0.2", "8"
    Bytes,    // binary multiples: "1G", "512M", "1GiB", "4096" (bytes)
    Seconds,  // "90s", "10m", "1.5h", "45" (seconds)
    Count,    // decimal multiples of a count: "7B", "350M", "70e9"
};

struct NumberRule {
    double min = 0;
    double max = 0;
    bool min_open = false;  // min itself is not allowed: (min, max]
    bool max_open = false;
    bool whole = false;  // integers only (after the unit is applied)
    NumberUnit unit = NumberUnit::None;
    std::string_view what = "a number";  // "give <what> from 1 to 20 Hz"
    std::string_view suffix = "";        // printed after the bounds: "Hz", "GiB"
    std::string_view example = "";       // a good value as written: "2", "1G"
};

// "between 1 and 20 Hz", "greater than 0 and at most 1", "between 1 MiB and 16 TiB".
std::string describe_range(const NumberRule& r);

// Why `v` breaks the rule ("not a number", "below the minimum"...), or nullopt when it is allowed.
std::optional<std::string> number_problem(double v, const NumberRule& r);

// Reads `text` under the rule: the value, or the reason it is refused.
struct NumberRead {
    double value = 0;
    std::optional<std::string> problem;
};
NumberRead read_number(std::string_view text, const NumberRule& r);

// For options: throws a usage error (exit 2) such as
//   "--sample-hz nan: not a number; give a rate between 1 and 20 Hz, e.g. --sample-hz 2".
double parse_number_option(std::string_view option, std::string_view text, const NumberRule& r);
std::int64_t parse_whole_option(std::string_view option, std::string_view text, const NumberRule& r);

// For fields of input files: `where` is "file:line:column" (or "file"), `field` the key. Throws an
// input error (exit 2) with the same wording elements; `advice` says where the field is documented.
double check_number_field(std::string_view where, std::string_view field, double v, const NumberRule& r,
                          std::string_view advice);
std::int64_t check_whole_field(std::string_view where, std::string_view field, double v, const NumberRule& r,
                               std::string_view advice);

}  // namespace gpuvet
