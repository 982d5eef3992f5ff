#include "report/run_compare_view.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "report/json.hpp"

namespace gpuvet {

namespace {

std::string f(double v, int digits = 1) {
    if (!measured(v)) return "n/a";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string pad(std::string s, std::size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
}

}  // namespace

std::string render_run_comparison(const RunComparison& c, const Style& st) {
    std::ostringstream o;
    if (c.faster) {
        const std::string& fast = *c.faster == 0 ? c.label_a : c.label_b;
        const std::string& slow = *c.faster == 0 ? c.label_b : c.label_a;
        o << st.bold(fast + " was " + f(c.speedup, 2) + "x faster than " + slow) << " (" << f(c.wall_a_s) << " s vs "
          << f(c.wall_b_s) << " s)\n";
    } else if (measured(c.speedup)) {
        o << st.bold("About the same speed") << " (" << f(c.wall_a_s) << " s vs " << f(c.wall_b_s)
          << " s, within 3 %)\n";
    } else {
        o << st.bold("Wall times unknown: cannot say which was faster") << "\n";
    }
    for (const std::string& r : c.reasons) o << "  - " << r << "\n";
    o << "\n  " << pad("", 26) << pad(c.label_a, 16) << c.label_b << "\n";
    for (const RunComparison::Row& r : c.rows)
        o << "  " << pad(r.metric + " (" + r.unit + ")", 26) << pad(f(r.a), 16) << f(r.b) << "\n";
    return o.str();
}

std::string render_run_comparison_json(const RunComparison& c, const Envelope& env) {
    auto num = [](double v) { return std::isnan(v) ? Json(nullptr) : Json(v); };
    Json rows = Json::array();
    for (auto& r : c.rows) rows.push_back({{"metric", r.metric}, {"unit", r.unit}, {"a", num(r.a)}, {"b", num(r.b)}});
    Json faster = c.faster ? Json(*c.faster == 0 ? c.label_a : c.label_b) : Json(nullptr);
    Json body = {{"runs", {c.label_a, c.label_b}},
                 {"same_command", c.same_command},
                 {"wall_s", {num(c.wall_a_s), num(c.wall_b_s)}},
                 {"faster", faster},
                 {"speedup", num(c.speedup)},
                 {"reasons", c.reasons},
                 {"rows", rows}};
    return render_document(env, body);
}

}  // namespace gpuvet
