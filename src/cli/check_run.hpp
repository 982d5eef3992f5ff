// What a run of checks needs, set up one way for check, bench, burn and host: the spec database,
// the report, the facts read once before any check (machine, driver, GPU inventory, selection,
// identification) and a CheckContext wired to them.
#pragma once
#include <memory>
#include <string>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/result.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

struct GlobalOptions;

struct CheckRun {
    SpecDb specs;
    Report report;
    std::unique_ptr<const RunFacts> facts;
    CheckContext ctx;
    std::unique_ptr<Progress> progress;

    CheckRun() = default;
    CheckRun(const CheckRun&) = delete;  // ctx points into this object
    CheckRun& operator=(const CheckRun&) = delete;
};

enum class GpuScope { Inventory, HostOnly };

// Reads the machine (through GPUVET_ROOT when set) and, unless `scope` is HostOnly, the GPU
// inventory; `gpus` is the --gpus text (empty: all), checked against the GPUs found.
std::unique_ptr<CheckRun> start_check_run(const GlobalOptions& g, SpecDb specs, Tier tier, const std::string& gpus,
                                          GpuScope scope = GpuScope::Inventory);

// The fixture root for /proc and /sys (GPUVET_ROOT), or "/".
std::filesystem::path host_root();

}  // namespace gpuvet
