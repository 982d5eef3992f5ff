#include "core/numbers.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {

constexpr double kKiB = 1024.0;

// A bound as people write it: 1 MiB rather than 1048576, 24 h rather than 86400.
std::string bound_text(double v, NumberUnit unit) {
    char buf[64];
    if (unit == NumberUnit::Bytes) {
        static const char* names[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int u = 0;
        while (u < 5 && v >= kKiB && std::fmod(v, kKiB) == 0) {
            v /= kKiB;
            ++u;
        }
        std::snprintf(buf, sizeof buf, "%.15g %s", v, names[u]);
        return buf;
    }
    if (unit == NumberUnit::Seconds) {
        const char* name = "s";
        if (v >= 3600 && std::fmod(v, 3600) == 0) v /= 3600, name = "h";
        else if (v >= 60 && std::fmod(v, 60) == 0) v /= 60, name = "min";
        std::snprintf(buf, sizeof buf, "%.15g %s", v, name);
        return buf;
    }
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

// What the user typed, short enough for one line.
std::string shown(std::string_view text) {
    std::string s(text.substr(0, 40));
    for (char& c : s)  // a control or non-ASCII byte is not echoed to the terminal as is
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    if (text.size() > 40) s += "...";
    if (s.empty() || s.find_first_of(" \t") != std::string::npos) s = "'" + s + "'";
    return s;
}

struct Multiplier {
    double factor;
    bool known;
};

Multiplier unit_factor(std::string_view raw, NumberUnit unit) {
    std::string u = to_lower(raw);
    auto is = [&](std::initializer_list<const char*> names) {
        for (auto* n : names)
            if (u == n) return true;
        return false;
    };
    if (u.empty()) return {1, true};
    switch (unit) {
        case NumberUnit::None: return {1, false};
        case NumberUnit::Bytes:
            if (is({"b"})) return {1, true};
            if (is({"k", "kib"})) return {kKiB, true};
            if (is({"m", "mib"})) return {kKiB * kKiB, true};
            if (is({"g", "gib"})) return {kKiB * kKiB * kKiB, true};
            if (is({"t", "tib"})) return {kKiB * kKiB * kKiB * kKiB, true};
            return {1, false};
        case NumberUnit::Seconds:
            if (is({"s"})) return {1, true};
            if (is({"m", "min"})) return {60, true};
            if (is({"h"})) return {3600, true};
            return {1, false};
        case NumberUnit::Count:
            if (is({"k"})) return {1e3, true};
            if (is({"m"})) return {1e6, true};
            if (is({"b"})) return {1e9, true};
            if (is({"t"})) return {1e12, true};
            return {1, false};
    }
    return {1, false};
}

const char* units_allowed(NumberUnit unit) {
    switch (unit) {
        case NumberUnit::None: return "nothing may follow the number";
        case NumberUnit::Bytes: return "use K, M, G or T (binary multiples) or a number of bytes";
        case NumberUnit::Seconds: return "use s, m or h (a plain number is seconds)";
        case NumberUnit::Count: return "use K, M, B or T (thousand, million, billion, trillion)";
    }
    return "";
}

std::string value_text(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

std::string describe_range(const NumberRule& r) {
    std::string lo = bound_text(r.min, r.unit), hi = bound_text(r.max, r.unit);
    std::string s;
    if (!r.min_open && !r.max_open) s = "between " + lo + " and " + hi;
    else if (r.min_open && !r.max_open) s = "greater than " + lo + " and at most " + hi;
    else if (!r.min_open) s = "at least " + lo + " and less than " + hi;
    else s = "greater than " + lo + " and less than " + hi;
    if (!r.suffix.empty()) {
        s += ' ';
        s += r.suffix;
    }
    if (r.whole && r.unit == NumberUnit::None) s += ", a whole number";
    return s;
}

std::optional<std::string> number_problem(double v, const NumberRule& r) {
    if (std::isnan(v)) return "not a number";
    if (std::isinf(v)) return "not a finite number";
    if (r.whole && v != std::floor(v)) return "not a whole number";
    if (v < r.min || (r.min_open && v == r.min)) return "too small";
    if (v > r.max || (r.max_open && v == r.max)) return "too large";
    return std::nullopt;
}

NumberRead read_number(std::string_view text, const NumberRule& r) {
    std::string t = trim(text);
    if (t.empty()) return {0, "no number given"};
    std::string_view s = t;
    if (s.front() == '+') s.remove_prefix(1);
    if (s.empty()) return {0, "not a number"};
    std::string_view body = s.substr(s.front() == '-' ? 1 : 0);
    std::string low = to_lower(body.substr(0, 3));
    if (low == "nan") return {0, "not a number"};
    if (low == "inf") return {0, "not a finite number"};
    if (body.size() >= 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X'))
        return {0, "hexadecimal is not accepted; write the value in decimal"};
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
    if (ec == std::errc::result_out_of_range) return {0, "out of any usable range"};
    if (ec != std::errc()) return {0, "not a number"};
    // The unit follows the number directly: "10m", not "10 m".
    std::string rest(end, std::size_t(s.data() + s.size() - end));
    Multiplier m = unit_factor(rest, r.unit);
    if (!m.known) return {0, "unknown unit '" + rest.substr(0, 16) + "'; " + units_allowed(r.unit)};
    v *= m.factor;
    if (auto p = number_problem(v, r)) return {v, p};
    return {v, std::nullopt};
}

double parse_number_option(std::string_view option, std::string_view text, const NumberRule& r) {
    NumberRead n = read_number(text, r);
    if (!n.problem) return n.value;
    std::string opt(option);
    std::string msg =
        opt + " " + shown(text) + ": " + *n.problem + "; give " + std::string(r.what) + " " + describe_range(r);
    if (!r.example.empty()) msg += ", e.g. " + opt + " " + std::string(r.example);
    throw usage_error(msg, "'--help' lists each option with its range");
}

std::int64_t parse_whole_option(std::string_view option, std::string_view text, const NumberRule& r) {
    NumberRule w = r;
    w.whole = true;
    return std::int64_t(parse_number_option(option, text, w));
}

double check_number_field(std::string_view where, std::string_view field, double v, const NumberRule& r,
                          std::string_view advice) {
    auto p = number_problem(v, r);
    if (!p) return v;
    std::string f(field);
    std::string msg = std::string(where) + ": " + f + " = " + value_text(v) + ": " + *p + "; give " +
                      std::string(r.what) + " " + describe_range(r);
    if (!r.example.empty()) msg += ", e.g. " + f + " = " + std::string(r.example);
    throw input_error(msg, std::string(advice));
}

std::int64_t check_whole_field(std::string_view where, std::string_view field, double v, const NumberRule& r,
                               std::string_view advice) {
    NumberRule w = r;
    w.whole = true;
    return std::int64_t(check_number_field(where, field, v, w, advice));
}

}  // namespace gpuvet
