#include "monitor/export_check_report.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/report_reader.hpp"

namespace gpuvet {

namespace {

constexpr const char* kAdvice = "give the file `gpuvet check --json > FILE.json` (or --report DIR) wrote";

FileStamp stamp_of(const std::filesystem::path& p, std::string& problem) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
        problem = std::strerror(errno);
        return {};
    }
    auto ns = [](const timespec& t) { return (long long)t.tv_sec * 1000000000LL + t.tv_nsec; };
    return {(unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
            ns(st.st_mtim), ns(st.st_ctim)};
}

}  // namespace

// The exporter's view of a report read by the one reader (core/report_reader: schema version,
// types and ranges checked there), with the exporter's own rule on top: one series per check,
// GPU and figure.
CheckReportSummary check_report_summary(const Report& r, const std::string& where) {
    CheckReportSummary s;
    s.run_verdict = to_string(r.verdict);
    std::set<std::tuple<std::string, std::optional<int>, std::string>> seen;
    std::set<std::pair<std::string, std::optional<int>>> checks_seen;
    for (const CheckResult& c : r.checks) {
        ReportedCheck rc;
        rc.key = c.key;
        rc.verdict = to_string(c.verdict);
        rc.gpu = c.gpu;
        // gpuvet lists each check once per GPU: a repeat would be a second verdict series.
        if (!checks_seen.insert({rc.key, rc.gpu}).second)
            throw input_error(where + ": check " + rc.key + (rc.gpu ? " GPU " + std::to_string(*rc.gpu) : "") +
                                  " is listed twice: the file was edited or joined from two reports",
                              kAdvice);
        for (const Measurement& m : c.measurements) {
            if (!m.value) continue;  // absent in the report: no series
            ReportedMeasurement rm;
            rm.key = m.key;
            rm.unit = m.unit;
            rm.gpu = m.gpu ? m.gpu : rc.gpu;
            rm.value = *m.value;
            if (m.reference) {
                rm.spec = m.reference->spec;
                rm.fail_below = m.reference->fail_below;
            }
            if (rm.key.empty() || !seen.insert({rc.key, rm.gpu, rm.key}).second) continue;
            rc.measurements.push_back(std::move(rm));
        }
        s.checks.push_back(std::move(rc));
    }
    return s;
}

CheckReportSummary parse_check_report(const std::string& text, const std::string& where) {
    return check_report_summary(parse_report(text, where), where);
}

void CheckReportWatch::load() {
    std::string ignored;
    stamp_ = stamp_of(path_, ignored);
    summary_ = parse_check_report(read_input_file(path_, "--check-report", kCheckReportLimitBytes),
                                  "--check-report " + path_.string());
    problem_.clear();
}

bool CheckReportWatch::refresh() {
    std::string why;
    FileStamp now = stamp_of(path_, why);
    if (!why.empty()) {
        std::string p =
            "cannot read " + path_.string() + ": " + why + "; the figures shown are from the last good read";
        bool changed = p != problem_;
        problem_ = p;
        return changed;
    }
    if (now == stamp_ && problem_.empty()) return false;
    stamp_ = now;
    try {
        load();
    } catch (const Error& e) {
        problem_ = std::string(e.what()) + "; the figures shown are from the last good read";
    }
    return true;
}

}  // namespace gpuvet
