#include "report/terminal.hpp"

#include <algorithm>
#include <sstream>

#include "report/matrix_view.hpp"
#include "report/terminal_parts.hpp"

namespace gpuvet {

std::string render_scorecard(const Report& r, const Style& st) {
    std::ostringstream o;
    render_header(o, r, st, false);
    render_column_heads(o, st);
    for (auto& c : r.checks) render_result(o, c, st);
    render_errors(o, r, st);
    o << "\n";
    render_verdict(o, r, st);
    return o.str();
}

std::string render_terminal(const Report& r, const Style& st) {
    bool per_gpu =
        std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) { return c.gpu.has_value(); });
    return per_gpu && !st.verbose ? render_compact_scorecard(r, st) : render_scorecard(r, st);
}

}  // namespace gpuvet
