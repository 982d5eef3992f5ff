#include "monitor/prometheus_text.hpp"

#include <charconv>
#include <cmath>

namespace gpuvet::prom {

namespace {

std::string escape(const std::string& v, bool quote) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (quote && c == '"') out += "\\\"";
        else out += c;
    }
    return out;
}

}  // namespace

std::string escape_label_value(const std::string& v) { return escape(v, true); }
std::string escape_help(const std::string& v) { return escape(v, false); }

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

void write_family(std::string& out, const Family& f) {
    if (f.series.empty()) return;
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + f.type + "\n";
    for (const Series& s : f.series) {
        out += f.name;
        if (!s.labels.empty()) {
            out += '{';
            bool first = true;
            for (const auto& [k, v] : s.labels) {
                if (!first) out += ',';
                first = false;
                out += k + "=\"" + escape_label_value(v) + "\"";
            }
            out += '}';
        }
        out += ' ' + format_value(s.value) + '\n';
    }
}

void write_comment(std::string& out, const std::string& text) {
    std::string one_line = text;
    for (char& c : one_line)
        if (c == '\n') c = ' ';
    out += "# " + one_line + "\n";
}

}  // namespace gpuvet::prom
