#include "report/wording.hpp"

#include <cmath>

#include "core/strings.hpp"

namespace gpuvet {

// A reference with a threshold the verdict was decided by, not only a spec or a note on the method.
bool has_threshold(const std::optional<Reference>& r) {
    return r && (r->warn_below || r->fail_below || r->warn_above || r->fail_above || !r->expected_text.empty());
}

namespace {

// Rates in the millions read better with a prefix: 217.9 Mops/s. The value decides the prefix, and
// the reference's thresholds use the same one so that the two can be compared at a glance.
struct Scale {
    double divisor = 1;
    const char* prefix = "";
};
Scale scale_of(const Measurement& m) {
    std::optional<double> v = m.value ? m.value : m.reference ? m.reference->spec : std::nullopt;
    if (!v || m.unit == "%" || m.unit == "count" || m.unit.empty() || m.unit == "bytes") return {};
    if (std::fabs(*v) >= 1e9) return {1e9, "G"};
    if (std::fabs(*v) >= 1e6) return {1e6, "M"};
    return {};
}

}  // namespace

std::string render_measurement_value(const Measurement& m) {
    if (m.text) return *m.text;
    if (!m.value) return "— (" + m.absent_reason + ")";
    double v = *m.value;
    if (m.unit == "bytes") return format_bytes(v);
    if (Scale sc = scale_of(m); *sc.prefix) return format_number(v / sc.divisor, 4) + " " + sc.prefix + m.unit;
    std::string num = format_number(v, 4);
    if (m.unit.empty() || m.unit == "count") return num;
    if (m.unit == "%") return num + "%";
    if (m.unit == "C") return num + " °C";  // the JSON keeps the plain "C"
    return num + " " + m.unit;
}

std::string render_reference(const Measurement& m) {
    if (!m.reference) return {};
    const Reference& r = *m.reference;
    std::vector<std::string> parts;
    const Scale sc = scale_of(m);
    auto fmt = [&](double x) {
        return m.unit == "bytes" ? format_bytes(x) : format_number(x / sc.divisor, 4) + sc.prefix;
    };
    if (!r.expected_text.empty()) parts.push_back("expected " + r.expected_text);
    if (r.spec) {
        std::string s = "spec " + fmt(*r.spec);
        if (m.value && *r.spec > 0) s = format_number(100.0 * *m.value / *r.spec, 3) + "% of " + s;
        parts.push_back(s);
    }
    if (r.expected_fraction) parts.push_back("healthy ≈" + format_number(100 * *r.expected_fraction, 3) + "%");
    if (r.warn_below) parts.push_back("warn < " + fmt(*r.warn_below));
    if (r.fail_below) parts.push_back("floor " + fmt(*r.fail_below));
    if (r.warn_above) parts.push_back("warn > " + fmt(*r.warn_above));
    if (r.fail_above) parts.push_back("fail > " + fmt(*r.fail_above));
    std::string out;
    for (auto& p : parts) out += (out.empty() ? "" : " · ") + p;
    if (!r.source.empty()) out += (out.empty() ? "" : "  ") + std::string("[") + r.source + "]";
    return out;
}

std::string verdict_tally(const Report& r) {
    int counts[5] = {0, 0, 0, 0, 0};
    for (auto& c : r.checks) counts[int(c.verdict)]++;
    return std::to_string(counts[int(Verdict::Pass)]) + " passed, " + std::to_string(counts[int(Verdict::Warn)]) +
           " warned, " + std::to_string(counts[int(Verdict::Fail)]) + " failed, " +
           std::to_string(counts[int(Verdict::Skip)]) + " skipped, " + std::to_string(counts[int(Verdict::Error)]) +
           (counts[int(Verdict::Error)] == 1 ? " error" : " errors");
}

std::vector<std::pair<std::string, std::string>> not_run_checks(const Report& r) {
    std::vector<std::pair<std::string, std::string>> not_run;  // key, GPU list
    for (auto& c : r.checks) {
        if (c.verdict != Verdict::Skip || c.summary != kNotRunInterrupted) continue;
        std::string g = c.gpu ? std::to_string(*c.gpu) : "";
        if (!not_run.empty() && not_run.back().first == c.key && !g.empty() && !not_run.back().second.empty())
            not_run.back().second += ", " + g;
        else not_run.emplace_back(c.key, g);
    }
    return not_run;
}

namespace {

// A GPU server on which no GPU was measured is not a plain GO: say what the verdict covers.
std::string go_word(const Report& r) {
    bool gpu_judged = false, gpus_held_to_order = false;
    for (auto& c : r.checks) {
        bool judged = c.verdict != Verdict::Skip && c.verdict != Verdict::Error;
        gpu_judged = gpu_judged || (starts_with(c.key, "gpu.") && judged);
        // order.gpu_count, order.gpu_model, order.gpu_memory, order.nvlink, order.mig read the GPUs.
        gpus_held_to_order =
            gpus_held_to_order ||
            (judged && (starts_with(c.key, "order.gpu_") || c.key == "order.nvlink" || c.key == "order.mig"));
    }
    return !gpu_judged && gpus_held_to_order && r.command == "check"
               ? "GO (the GPUs were held to the order, none was measured)"
           : !gpu_judged && r.command == "check"     ? "GO for the host only (no GPU was checked)"
           : r.verdict == RunVerdict::GoWithWarnings ? "GO (with warnings)"
                                                     : "GO";
}

}  // namespace

std::string verdict_word(const Report& r, const std::string& stopped) {
    switch (r.verdict) {
        case RunVerdict::Go:
        case RunVerdict::GoWithWarnings: return go_word(r);
        case RunVerdict::NoGo: return "NO-GO" + (stopped.empty() ? "" : " (" + stopped + ")");
        case RunVerdict::Incomplete:
            return "INCOMPLETE (" + (stopped.empty() ? std::string("a check could not run") : stopped) + ")";
        case RunVerdict::CouldNotRun:
            return "COULD NOT RUN (" +
                   (r.fatal         ? std::string("fatal error")
                    : r.interrupted ? stopped + " before anything was checked"
                                    : std::string("nothing was checked")) +
                   ")";
    }
    return {};
}

std::string verdict_headline(const Report& r) {
    std::string stopped;
    if (r.interrupted) {
        stopped = "interrupted";
        if (!r.interrupted_during.empty()) stopped += " during " + r.interrupted_during;
    }
    return verdict_word(r, stopped);
}

}  // namespace gpuvet
