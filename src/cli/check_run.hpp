// What a run of checks needs, set up one way for check, bench and burn: the spec database, the
// report with the machine and the GPU inventory read, and a CheckContext wired to them.
#pragma once
#include <memory>
#include <string>

#include "core/context.hpp"
#include "core/result.hpp"
#include "gpu/inventory.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

struct GlobalOptions;

struct CheckRun {
    SpecDb specs;
    Report report;
    Inventory inventory;
    CheckContext ctx;
    std::unique_ptr<Progress> progress;

    CheckRun() = default;
    CheckRun(const CheckRun&) = delete;  // ctx points into this object
    CheckRun& operator=(const CheckRun&) = delete;
};

// Reads the machine (through GPUVET_ROOT when set) and the GPU inventory; `gpus` is the --gpus text
// (empty: all), checked against the GPUs found.
std::unique_ptr<CheckRun> start_check_run(const GlobalOptions& g, SpecDb specs, Tier tier, const std::string& gpus);

}  // namespace gpuvet
