// The Prometheus text exposition format (version 0.0.4), as a small writer: metric families with
// their HELP and TYPE lines, then one line per series. Label values and HELP texts are escaped
// as the format requires (backslash, double quote, newline). A family with no series writes
// nothing at all, so an absent fact is simply omitted, never written as a sentinel value.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace gpuvet::prom {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Series {
    Labels labels;
    double value = 0;
};

struct Family {
    std::string name;
    std::string type;  // "gauge" or "counter"
    std::string help;
    std::vector<Series> series;

    void add(Labels labels, double value) { series.push_back({std::move(labels), value}); }
};

// `\` -> `\\`, `"` -> `\"`, newline -> `\n` (label values).
std::string escape_label_value(const std::string& v);
// `\` -> `\\`, newline -> `\n` (HELP text: quotes stay as they are).
std::string escape_help(const std::string& v);
// Shortest text that reads back as the same double; "NaN", "+Inf", "-Inf" as the format spells them.
std::string format_value(double v);

// Appends the family to `out`; nothing when it has no series.
void write_family(std::string& out, const Family& f);
// A comment line ("# text"), which scrapers ignore: notes for a person reading the page.
void write_comment(std::string& out, const std::string& text);

}  // namespace gpuvet::prom
