// Runs one .entry of a decoded module over a whole grid on host memory, thread after thread.
// Exact, not approximate: the only shortcut is that the instructions every thread executes
// identically before its first use of %tid/%ctaid or its first global store (no thread has written
// anything yet, so all threads see the same memory) run once and their state is copied per thread.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ptx_thread.hpp"

namespace fake::ptx {

struct LaunchConfig {
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    void* const* params = nullptr;  // kernelParams: params[i] points at parameter i's bytes
    Resolver resolve;               // device address -> host region
    uint64_t budget = 0;            // branches and calls the launch may take in all
    std::vector<std::pair<uint64_t, unsigned>>* watched = nullptr;  // stores into watched regions
};

struct LaunchResult {
    Fault fault = Fault::none;
    std::string message;  // what went wrong, naming the instruction's line
};

// `entry` must be an .entry of `m` (checked by the caller when the function handle was made).
LaunchResult launch(const Module& m, uint32_t entry, const LaunchConfig& c);

}  // namespace fake::ptx
