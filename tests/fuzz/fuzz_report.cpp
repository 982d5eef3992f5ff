// Fuzzes the report reader (gpuvet report, compare): any text either yields a Report or raises
// gpuvet::Error; a Report it yields goes through every printer without crashing.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "report/html_report.hpp"
#include "report/markdown.hpp"
#include "core/report_reader.hpp"
#include "report/terminal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        gpuvet::Report r = gpuvet::parse_report(text, "fuzz.json");
        (void)gpuvet::render_terminal(r, gpuvet::Style{false, 60, false});
        (void)gpuvet::render_markdown(r);
        (void)gpuvet::render_html(r);
    } catch (const gpuvet::Error&) {}
    return 0;
}
