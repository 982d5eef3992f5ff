// Fuzzes the planned-job reader (`gpuvet compare --workload` reads the user's plan document): any
// text either yields a PlannedJob or raises gpuvet::Error.
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "plan/planned_job.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)gpuvet::parse_planned_job(text, "fuzz.json");
    } catch (const gpuvet::Error&) {}
    return 0;
}
