#include "report/run_compare_view.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "report/json.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {

Json exit_json(const std::optional<int>& code) { return code ? Json(*code) : Json(nullptr); }

std::string pad(std::string s, std::size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
}

}  // namespace

std::string render_run_comparison(const RunComparison& c, const Style& st) {
    std::ostringstream o;
    if (!c.not_comparable.empty()) {
        o << st.bold("Not compared: a run whose job failed or was stopped is no measure of its machine") << "\n";
        for (const std::string& why : c.not_comparable) o << "  - " << why << "\n";
    } else if (c.faster) {
        const bool a_fast = *c.faster == 0;
        const std::string& fast = a_fast ? c.label_a : c.label_b;
        const std::string& slow = a_fast ? c.label_b : c.label_a;
        // The times in the sentence's order: the faster run's first.
        o << st.bold(fast + " was " + format_fixed_or_na(c.speedup, 2) + "x faster than " + slow) << " ("
          << format_fixed_or_na(a_fast ? c.wall_a_s : c.wall_b_s, 1) << " s vs "
          << format_fixed_or_na(a_fast ? c.wall_b_s : c.wall_a_s, 1) << " s)\n";
    } else if (measured(c.speedup)) {
        o << st.bold("About the same speed") << " (" << format_fixed_or_na(c.wall_a_s, 1) << " s vs "
          << format_fixed_or_na(c.wall_b_s, 1) << " s, within 3 %)\n";
    } else {
        o << st.bold("Wall times unknown: cannot say which was faster") << "\n";
    }
    for (const std::string& r : c.reasons) o << "  - " << r << "\n";
    o << "\n  " << pad("", 26) << pad(c.label_a, 16) << c.label_b << "\n";
    o << "  " << pad("job end", 26) << pad(c.end_a, 16) << c.end_b << "\n";
    for (const RunComparison::Row& r : c.rows)
        o << "  " << pad(r.metric + " (" + r.unit + ")", 26) << pad(format_fixed_or_na(r.a, 1), 16)
          << format_fixed_or_na(r.b, 1) << "\n";
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
                 {"exit_codes", {exit_json(c.exit_a), exit_json(c.exit_b)}},
                 {"job_ends", {c.end_a, c.end_b}},
                 {"comparable", c.not_comparable.empty()},
                 {"not_comparable", c.not_comparable},
                 {"faster", faster},
                 {"speedup", num(c.speedup)},
                 {"reasons", c.reasons},
                 {"rows", rows}};
    return render_document(env, body);
}

}  // namespace gpuvet
