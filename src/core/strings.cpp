#include "core/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace gpuvet {

std::string to_lower(std::string_view s) {
    std::string o(s);
    for (auto& c : o) c = char(std::tolower(static_cast<unsigned char>(c)));
    return o;
}

std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        auto p = s.find(sep, start);
        out.emplace_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
        if (p == std::string_view::npos) break;
        start = p + 1;
    }
    return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

namespace {
// 1.23e+20: for magnitudes fixed notation would print as dozens of digits (or as 0).
std::string scientific(double v, int significant) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", std::max(0, significant - 1), v);
    std::string s = buf;
    auto e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e);
    if (mant.find('.') != std::string::npos) {
        while (mant.back() == '0') mant.pop_back();
        if (mant.back() == '.') mant.pop_back();
    }
    return mant + exp;
}
constexpr double kFixedMax = 1e15;  // beyond this, digits are noise to a reader
}  // namespace

std::string format_number(double v, int significant) {
    if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    if (v == 0) return "0";
    double a = std::fabs(v);
    if (a >= kFixedMax || a < 1e-6) return scientific(v, significant);
    int digits_before = a >= 1 ? int(std::floor(std::log10(a))) + 1 : 0;
    int decimals = std::max(0, significant - digits_before);
    if (a < 1) decimals = std::min(6, significant + int(-std::floor(std::log10(a))) - 1);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
        while (!s.empty() && s.back() == '0') s.pop_back();
        if (!s.empty() && s.back() == '.') s.pop_back();
    }
    return s;
}

std::string format_fixed(double v, int decimals) {
    if (!std::isfinite(v) || std::fabs(v) >= kFixedMax) return format_number(v, 3);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string format_fixed_or_na(double v, int decimals) { return std::isnan(v) ? "n/a" : format_fixed(v, decimals); }

std::string format_bytes(double bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (std::fabs(bytes) >= 1024 && u < 5) {
        bytes /= 1024;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Names are short; a longer text is compared by its first characters plus the excess, so a
    // crafted name (a 4 MiB key of a price file) cannot make "did you mean" quadratic.
    constexpr std::size_t kMax = 256;
    if (a.size() > kMax || b.size() > kMax)
        return edit_distance(a.substr(0, kMax), b.substr(0, kMax)) + (a.size() - std::min(a.size(), kMax)) +
               (b.size() - std::min(b.size(), kMax));
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string cuda_version_text(long v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace gpuvet
