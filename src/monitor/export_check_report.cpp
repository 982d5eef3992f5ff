#include "monitor/export_check_report.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace gpuvet {

namespace {

using Json = nlohmann::json;

constexpr const char* kAdvice = "give the file `gpuvet check --json > FILE.json` (or --report DIR) wrote";

// The GPU index of a check or measurement; as the report reader, an index no server has is an
// input error rather than a number cut to fit an int.
std::optional<int> gpu_of(const Json& j, const std::string& where) {
    if (!j.contains("gpu") || j["gpu"].is_null()) return std::nullopt;
    const Json& g = j["gpu"];
    if (!g.is_number_integer() || g.get<long long>() < 0 || g.get<long long>() > 1023)
        throw input_error(where + ": a \"gpu\" of " + g.dump() + " is out of range (0 to 1023)", kAdvice);
    return int(g.get<long long>());
}

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

std::optional<double> number_at(const Json& j, const char* key) {
    if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
    return std::nullopt;
}

std::string string_at(const Json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

}  // namespace

CheckReportSummary parse_check_report(const std::string& text, const std::string& where) {
    Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded()) throw input_error(where + ": not JSON", kAdvice);
    if (!doc.is_object() || string_at(doc, "tool") != "gpuvet" || !doc.contains("checks") || !doc["checks"].is_array())
        throw input_error(where + ": not a gpuvet report (no \"tool\": \"gpuvet\" with a \"checks\" list)", kAdvice);
    CheckReportSummary s;
    s.run_verdict = string_at(doc, "verdict");
    // One series per (check, gpu, measurement): a repeated key would make the page invalid.
    std::set<std::tuple<std::string, std::optional<int>, std::string>> seen;
    std::set<std::pair<std::string, std::optional<int>>> checks_seen;
    for (const Json& c : doc["checks"]) {
        ReportedCheck rc;
        rc.key = string_at(c, "key");
        rc.verdict = string_at(c, "verdict");
        rc.gpu = gpu_of(c, where);
        if (rc.key.empty() || rc.verdict.empty())
            throw input_error(where + ": a check without \"key\" or \"verdict\"", kAdvice);
        // gpuvet lists each check once per GPU: a repeat would be a second verdict series.
        if (!checks_seen.insert({rc.key, rc.gpu}).second)
            throw input_error(where + ": check " + rc.key + (rc.gpu ? " GPU " + std::to_string(*rc.gpu) : "") +
                                  " is listed twice: the file was edited or joined from two reports",
                              kAdvice);
        if (c.contains("measurements") && c["measurements"].is_array())
            for (const Json& m : c["measurements"]) {
                std::optional<double> v = number_at(m, "value");
                if (!v) continue;  // absent in the report: no series
                ReportedMeasurement rm;
                rm.key = string_at(m, "key");
                rm.unit = string_at(m, "unit");
                rm.gpu = gpu_of(m, where) ? gpu_of(m, where) : rc.gpu;
                rm.value = *v;
                if (m.contains("reference")) {
                    rm.spec = number_at(m["reference"], "spec");
                    rm.fail_below = number_at(m["reference"], "fail_below");
                }
                if (rm.key.empty() || !seen.insert({rc.key, rm.gpu, rm.key}).second) continue;
                rc.measurements.push_back(std::move(rm));
            }
        s.checks.push_back(std::move(rc));
    }
    return s;
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
