#include "core/result.hpp"

#include "core/error.hpp"

namespace gpuvet {

Verdict grade(double v, const Reference& r) {
    if ((r.fail_below && v < *r.fail_below) || (r.fail_above && v > *r.fail_above)) return Verdict::Fail;
    if ((r.warn_below && v < *r.warn_below) || (r.warn_above && v > *r.warn_above)) return Verdict::Warn;
    return Verdict::Pass;
}

void grade_into(CheckResult& r, const Measurement& m) {
    if (m.value && m.reference) r.verdict = worst(r.verdict, grade(*m.value, *m.reference));
}

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::Pass: return "PASS";
        case Verdict::Warn: return "WARN";
        case Verdict::Fail: return "FAIL";
        case Verdict::Skip: return "SKIP";
        case Verdict::Error: return "ERROR";
    }
    return "?";
}

int severity(Verdict v) {
    switch (v) {
        case Verdict::Skip: return 0;
        case Verdict::Pass: return 1;
        case Verdict::Warn: return 2;
        case Verdict::Fail: return 3;
        case Verdict::Error: return 4;
    }
    return 0;
}

const char* to_string(RunVerdict v) {
    switch (v) {
        case RunVerdict::Go: return "PASS";
        case RunVerdict::GoWithWarnings: return "WARN";
        case RunVerdict::NoGo: return "FAIL";
        case RunVerdict::Incomplete: return "INCOMPLETE";
        case RunVerdict::CouldNotRun: return "COULD_NOT_RUN";
    }
    return "?";
}

std::string no_gpu_driver_text(const DriverInfo& d) {
    if (!d.amd_looked_for()) return "no NVIDIA driver found (" + d.absent_reason + ")";
    return "no GPU driver found: NVIDIA (" + d.absent_reason + "), AMD (" + d.amd_absent_reason + ")";
}

Verdict worst(Verdict a, Verdict b) { return severity(a) >= severity(b) ? a : b; }

const char* to_string(ErrorKind k) {
    switch (k) {
        case ErrorKind::Usage: return "usage";
        case ErrorKind::Input: return "input";
        case ErrorKind::Driver: return "driver";
        case ErrorKind::Runtime: return "runtime";
        case ErrorKind::Internal: return "internal";
    }
    return "?";
}

Measurement Measurement::number(std::string key, std::string label, double v, std::string unit) {
    Measurement m;
    m.key = std::move(key);
    m.label = std::move(label);
    m.value = v;
    m.unit = std::move(unit);
    return m;
}

Measurement Measurement::textual(std::string key, std::string label, std::string t) {
    Measurement m;
    m.key = std::move(key);
    m.label = std::move(label);
    m.text = std::move(t);
    return m;
}

Measurement Measurement::absent(std::string key, std::string label, std::string unit, std::string reason) {
    Measurement m;
    m.key = std::move(key);
    m.label = std::move(label);
    m.unit = std::move(unit);
    m.absent_reason = std::move(reason);
    return m;
}

void Report::finalize() {
    Verdict w = Verdict::Skip;
    bool any_fail = false, any_error = false, any_judged = false;
    for (const auto& c : checks) {
        w = worst(w, c.verdict);
        any_fail = any_fail || c.verdict == Verdict::Fail;
        any_error = any_error || c.verdict == Verdict::Error;
        any_judged = any_judged || c.verdict == Verdict::Pass || c.verdict == Verdict::Warn;
    }
    worst_check = w;
    // A fatal error leaves nothing to trust; otherwise a hardware finding outranks an interruption
    // or a check that errored: the box is NO-GO either way.
    if (fatal) verdict = RunVerdict::CouldNotRun;
    else if (any_fail) verdict = RunVerdict::NoGo;
    else if (!any_judged) verdict = RunVerdict::CouldNotRun;  // nothing checked is not a pass
    else if (interrupted || any_error) verdict = RunVerdict::Incomplete;
    else verdict = w == Verdict::Warn ? RunVerdict::GoWithWarnings : RunVerdict::Go;
    switch (verdict) {
        case RunVerdict::Go:
        case RunVerdict::GoWithWarnings: exit_code = exit_code::ok; break;
        case RunVerdict::NoGo: exit_code = exit_code::check_failed; break;
        case RunVerdict::Incomplete:
        case RunVerdict::CouldNotRun: exit_code = exit_code::could_not_run; break;
    }
}

}  // namespace gpuvet
