// How the fake libcuda loads and launches PTX: the module is decoded by the interpreter
// (ptx_parse), every launch runs the real kernel over the whole grid (ptx_exec) on the host memory
// behind the fake device allocations, and the scenario's faults then corrupt that memory.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ptx_exec.hpp"
#include "ptx_module.hpp"
#include "scenario.hpp"

namespace fake {

// Decodes `image`, or with GPUVET_FAKE_PTX_DIR set (tests only) the .ptx file in that folder that
// defines the same .entry names, so a test can run edited kernels without rebuilding gpuvet.
// nullptr with `error` set ("line N: ...") when the interpreter cannot run the text.
std::shared_ptr<const ptx::Module> load_module(const std::string& image, std::string& error);

struct DeviceMemory {
    ptx::Resolver resolve;  // device address -> its whole allocation (watch: it has bad cells)
    // Bad cells of the allocation holding `addr`: device address of each 64-bit word -> bits it flips.
    std::function<std::map<uint64_t, uint64_t>(uint64_t addr)> bad_cells;
};

enum class LaunchStatus { ok, too_big, illegal_address, misaligned_address, timeout, invalid };
struct LaunchOutcome {
    LaunchStatus status = LaunchStatus::ok;
    std::string message;  // why it failed, for stderr
    double ns = 0;        // simulated duration
};

LaunchOutcome run_kernel(const ptx::Module& m, uint32_t entry, const unsigned grid[3], const unsigned block[3],
                         void* const* params, const Gpu& gpu, const DeviceMemory& mem);

}  // namespace fake
