// Fuzzes the run-report reader (the comparison of two runs reads the user's files): any text either
// yields a run report (summary and series) or raises gpuvet::Error.
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "report/run_report_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)gpuvet::read_run_report_doc(text, "fuzz.json");
    } catch (const gpuvet::Error&) {}
    return 0;
}
