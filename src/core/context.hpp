// What a check can see: the options of this run, the spec database and what has been
// learned about the machine so far. Checks append time series to the report through it.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

class SpecDb;
struct Order;
struct Inventory;

enum class Tier { Quick, Standard, Full };
const char* to_string(Tier t);

struct CheckOptions {
    Tier tier = Tier::Standard;
    std::filesystem::path root = "/";      // seam for /proc and /sys fixtures (GPUVET_ROOT)
    std::filesystem::path data_dir = ".";  // storage check target
    std::optional<std::string> net_server; // host.network target, HOST[:PORT]
    std::optional<std::uint64_t> storage_bytes;  // cap on bytes host.storage writes (default 1 GiB)
    std::optional<double> net_seconds;     // per direction (default 3 s)
    std::optional<int> net_streams;        // parallel TCP streams (default 1, as iperf3)
    std::vector<int> gpus;                 // empty = all
    std::optional<double> burn_s;          // gpu.burn duration (default by tier: 20 s / 60 s / 10 min)
};

// Progress of long work. TTY: a live line; otherwise a log line every few seconds.
class Progress {
public:
    virtual ~Progress() = default;
    virtual void begin(std::string_view key, std::string_view title) = 0;
    virtual void update(std::string_view line) = 0;  // rate-limited by the implementation
    // Several lines at once (one per GPU during a burn). Default: joined into one line.
    virtual void update_lines(const std::vector<std::string>& lines) {
        std::string joined;
        for (const auto& l : lines) joined += (joined.empty() ? "" : " | ") + l;
        update(joined);
    }
    virtual void end() = 0;
};

struct CheckContext {
    CheckOptions options;
    const SpecDb* specs = nullptr;
    const Order* order = nullptr;        // what was ordered, when --expect/--order was given
    Report* report = nullptr;            // machine, gpus and series live here
    const Inventory* inventory = nullptr;  // what the driver knows about the GPUs (gpu/inventory.hpp)
    Progress* progress = nullptr;
    const std::atomic<bool>* stop = nullptr;  // set on Ctrl-C / SIGTERM
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

    bool stop_requested() const { return stop && stop->load(); }
    // Polled between bounded pieces of work (a copy, a batch of kernels) so that a check stops
    // within a second of the signal: throws Interrupted (core/error.hpp) once a stop was asked.
    void throw_if_stopped() const;
    double elapsed_s() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
};

}  // namespace gpuvet
