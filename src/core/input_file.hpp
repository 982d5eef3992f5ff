// Reading an input file (--specs, --order, --prices, --config, --measured, fixtures): bounded in
// size and interruptible, so /dev/zero or a stalled pipe cannot exhaust memory or hang gpuvet.
#pragma once
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace gpuvet {

// Some hundred times any real config.json, spec, order or price file (a few KiB each).
inline constexpr std::size_t kInputFileLimitBytes = std::size_t(4) << 20;
// A gpuvet JSON report (plan --measured) carries the telemetry series of its burn: a day-long
// burn of eight GPUs at 1 Hz is some tens of MiB.
inline constexpr std::size_t kReportFileLimitBytes = std::size_t(64) << 20;

// Where reads poll for Ctrl-C / SIGTERM. The composition root points it at its stop flag; the core
// does not know where that flag lives.
void set_input_stop_flag(const std::atomic<bool>* stop);

// The whole file, or an Input error (unreadable, a folder, over `limit` bytes) that names `option`
// ("--specs") and the limit. An interrupt ends the read with a Runtime error.
std::string read_input_file(const std::filesystem::path& path, std::string_view option,
                            std::size_t limit = kInputFileLimitBytes);

}  // namespace gpuvet
