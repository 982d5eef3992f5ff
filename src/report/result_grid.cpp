#include "report/result_grid.hpp"

#include <algorithm>
#include <cmath>

#include "core/strings.hpp"

namespace gpuvet {

ResultGrid build_grid(const Report& r) {
    ResultGrid g;
    for (auto& gpu : r.gpus) g.gpus.push_back(gpu.index);
    for (auto& c : r.checks) {
        if (!c.gpu) {
            g.box.push_back(&c);
            continue;
        }
        if (std::find(g.gpus.begin(), g.gpus.end(), *c.gpu) == g.gpus.end()) g.gpus.push_back(*c.gpu);
        auto row = std::find_if(g.rows.begin(), g.rows.end(), [&](const GridRow& x) { return x.key == c.key; });
        if (row == g.rows.end()) {
            g.rows.push_back({c.key, c.title, {}});
            row = g.rows.end() - 1;
        }
        row->per_gpu.emplace(*c.gpu, &c);
    }
    std::sort(g.gpus.begin(), g.gpus.end());
    return g;
}

namespace {
bool graded(const Measurement& m) {
    if (!m.value || !m.reference) return false;
    const Reference& r = *m.reference;
    return r.spec || r.warn_below || r.fail_below || r.warn_above || r.fail_above;
}
double share_of_spec(const Measurement& m) {
    return m.reference && m.reference->spec && *m.reference->spec > 0 ? *m.value / *m.reference->spec : 1e300;
}
}  // namespace

const Measurement* key_figure(const CheckResult& c) {
    const Measurement* best = nullptr;
    for (auto& m : c.measurements) {
        if (!graded(m)) continue;
        if (!best) {
            best = &m;
            continue;
        }
        int a = severity(grade(*m.value, *m.reference)), b = severity(grade(*best->value, *best->reference));
        if (a > b || (a == b && share_of_spec(m) < share_of_spec(*best))) best = &m;
    }
    if (best) return best;
    for (auto& m : c.measurements)
        if (m.value) return &m;
    return nullptr;
}

std::string short_figure(const CheckResult& c, std::size_t max_chars) {
    const Measurement* m = key_figure(c);
    if (!m) return {};
    std::string s;
    if (m->reference && m->reference->spec && *m->reference->spec > 0) {
        double pct = 100.0 * *m->value / *m->reference->spec;
        s = pct < 9.95 ? format_fixed(pct, 1) : format_fixed(pct, 0);
        s += '%';  // appended: `std::string&& + "%"` draws a false -Wrestrict from GCC 12
    } else if (m->unit == "bytes") {
        s = format_number(*m->value / double(1ULL << 30), 3);
        s += 'G';
    } else {
        s = format_number(*m->value, 3);
        if (m->unit == "C") s += "°C";
        else if (m->unit != "count") s += m->unit;
    }
    // Columns, not bytes: "°" takes two bytes and one column.
    std::size_t cols = 0;
    for (unsigned char ch : s) cols += (ch & 0xC0) != 0x80;
    return cols <= max_chars ? s : std::string();
}

const char* verdict_mark(Verdict v) {
    switch (v) {
        case Verdict::Pass: return "✓";
        case Verdict::Warn: return "!";
        case Verdict::Fail: return "✗";
        case Verdict::Skip: return "–";
        case Verdict::Error: return "E";
    }
    return "?";
}

}  // namespace gpuvet
