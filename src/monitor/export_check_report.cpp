#include "monitor/export_check_report.hpp"

#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace gpuvet {

namespace {

using Json = nlohmann::json;

constexpr const char* kAdvice = "give the file `gpuvet check --json > FILE.json` (or --report DIR) wrote";

std::optional<int> gpu_of(const Json& j) {
    if (j.contains("gpu") && j["gpu"].is_number_integer()) return j["gpu"].get<int>();
    return std::nullopt;
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
    for (const Json& c : doc["checks"]) {
        ReportedCheck rc;
        rc.key = string_at(c, "key");
        rc.verdict = string_at(c, "verdict");
        rc.gpu = gpu_of(c);
        if (rc.key.empty() || rc.verdict.empty())
            throw input_error(where + ": a check without \"key\" or \"verdict\"", kAdvice);
        if (c.contains("measurements") && c["measurements"].is_array())
            for (const Json& m : c["measurements"]) {
                std::optional<double> v = number_at(m, "value");
                if (!v) continue;  // absent in the report: no series
                ReportedMeasurement rm;
                rm.key = string_at(m, "key");
                rm.unit = string_at(m, "unit");
                rm.gpu = gpu_of(m) ? gpu_of(m) : rc.gpu;
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
    std::error_code ec;
    mtime_ = std::filesystem::last_write_time(path_, ec);
    size_ = std::filesystem::file_size(path_, ec);
    summary_ = parse_check_report(read_input_file(path_, "--check-report", kReportFileLimitBytes),
                                  "--check-report " + path_.string());
    problem_.clear();
}

bool CheckReportWatch::refresh() {
    std::error_code e1, e2;
    auto mtime = std::filesystem::last_write_time(path_, e1);
    auto size = std::filesystem::file_size(path_, e2);
    if (e1 || e2) {
        std::string p = "cannot read " + path_.string() + ": " + (e1 ? e1 : e2).message() +
                        "; the figures shown are from the last good read";
        bool changed = p != problem_;
        problem_ = p;
        return changed;
    }
    if (mtime == mtime_ && size == size_ && problem_.empty()) return false;
    mtime_ = mtime;
    size_ = size;
    try {
        load();
    } catch (const Error& e) {
        problem_ = std::string(e.what()) + "; the figures shown are from the last good read";
    }
    return true;
}

}  // namespace gpuvet
