// `gpuvet export --check-report FILE.json`: the verdicts and figures of the last `gpuvet check
// --json` report, read again whenever the file changes (a new check run rewrote it; reports are
// written atomically, so a file that exists is complete).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct ReportedMeasurement {
    std::string key, unit;
    std::optional<int> gpu;
    double value = 0;  // only measured figures are kept: an absent one has no series
    std::optional<double> spec, fail_below;
};

struct ReportedCheck {
    std::string key;
    std::optional<int> gpu;  // none: a host or whole-box check
    std::string verdict;     // PASS, WARN, FAIL, SKIP, ERROR
    std::vector<ReportedMeasurement> measurements;
};

struct CheckReportSummary {
    std::string run_verdict;  // PASS, WARN, FAIL, INCOMPLETE, COULD_NOT_RUN
    std::vector<ReportedCheck> checks;
};

// The report's checks, read by the one report reader (core/report_reader); an input error naming
// `where` when the text is not a gpuvet report of a schema this build reads.
CheckReportSummary parse_check_report(const std::string& text, const std::string& where);
// The same from a report already read.
CheckReportSummary check_report_summary(const Report& r, const std::string& where);

// A check report read by the exporter is at most this big. gpuvet's own reports are tens of KB (an
// 8-GPU --full run is under 1 MB); the sampler thread parses the file whenever it changes, so a
// larger file would delay the GPU samples (gpuvet's own bound, not a standard's).
inline constexpr std::size_t kCheckReportLimitBytes = std::size_t(4) << 20;

// What identifies one version of a file: a replacement (rename over it, cp -p, rsync -t) changes
// the inode or the ctime even when it keeps the size and the modification time.
struct FileStamp {
    unsigned long long dev = 0, ino = 0, size = 0;
    long long mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileStamp&) const = default;
};

// Watches one report file: refresh() reads it again when its stamp (inode, size, mtime, ctime) changed.
class CheckReportWatch {
public:
    explicit CheckReportWatch(std::filesystem::path path) : path_(std::move(path)) {}
    // Throws the input error of an unreadable or invalid file (used once at start-up, exit 2).
    void load();
    // Re-reads a changed file. A file that became unreadable or invalid keeps the last good
    // summary and sets problem(); returns true when anything changed.
    bool refresh();
    const std::optional<CheckReportSummary>& summary() const { return summary_; }
    const std::string& problem() const { return problem_; }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    std::optional<CheckReportSummary> summary_;
    std::string problem_;
    FileStamp stamp_{};
};

}  // namespace gpuvet
