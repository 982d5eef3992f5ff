#include "core/result.hpp"

#include "core/error.hpp"

namespace gpuvet {

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

Measurement Measurement::absent(std::string key, std::string label, std::string unit,
                                std::string reason) {
    Measurement m;
    m.key = std::move(key);
    m.label = std::move(label);
    m.unit = std::move(unit);
    m.absent_reason = std::move(reason);
    return m;
}

void Report::finalize() {
    Verdict v = Verdict::Skip;
    for (const auto& c : checks) v = worst(v, c.verdict);
    verdict = v;
    bool any_fail = false;
    for (const auto& c : checks) any_fail = any_fail || c.verdict == Verdict::Fail;
    if (fatal) {
        exit_code = exit_code::could_not_run;
    } else if (any_fail) {
        exit_code = exit_code::check_failed;  // a hardware finding outranks a check that errored
    } else if (v == Verdict::Error) {
        exit_code = exit_code::could_not_run;
    } else {
        exit_code = exit_code::ok;
    }
}

}  // namespace gpuvet
