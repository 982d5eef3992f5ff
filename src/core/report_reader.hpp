// Reads a gpuvet JSON document (docs/report-schema.md) back into the results model, so that the
// printers (HTML, Markdown, the matrix) and `compare` work on reports written earlier or elsewhere.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpuvet {

// The oldest schema whose check reports this reader understands: 2 and 3 share the report's keys.
inline constexpr int kOldestReadableSchema = 2;

// The envelope's `command`: what kind of document it is ("check", "burn", "run", "plan", ...).
std::string document_kind(std::string_view json_text, const std::string& origin);

// A document read once: its kind, and the Report when it is a report of checks.
struct ReportDocument {
    std::string kind;
    std::optional<Report> report;
};
ReportDocument read_document(std::string_view text, const std::string& origin);

// A report document (check, burn, bench, host) into a Report. Throws gpuvet::Error (Input) naming
// `origin` and the key at fault: not JSON (truncated), another schema version (saying which ones
// this build reads), a document without checks, a key of the wrong type.
Report parse_report(std::string_view json_text, const std::string& origin);
// The same from a file, bounded by kReportFileLimitBytes.
Report read_report_file(const std::string& path);

}  // namespace gpuvet
