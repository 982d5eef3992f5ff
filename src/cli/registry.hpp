// The registry: every check gpuvet knows, in the order they run, each made from the options the
// commands parsed. `check`, `bench`, `burn` and `host` all select their checks through it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/check.hpp"
#include "gpu/burn.hpp"
#include "train/train_settings.hpp"

namespace gpuvet {

struct Order;

// What the commands parsed that single checks take through their constructors.
struct CheckSettings {
    std::filesystem::path data_dir = ".";        // host.storage, order.disk (--data-dir)
    std::optional<std::uint64_t> storage_bytes;  // host.storage (--storage-bytes)
    std::optional<std::string> net_server;       // host.network (--net-server / --server)
    double net_seconds = 3;                      // host.network, per direction (--seconds)
    int net_streams = 1;                         // host.network (--streams)
    std::optional<double> burn_s;                // gpu.burn within `gpuvet check` (--burn-duration)
    std::optional<BurnOptions> burn;             // gpu.burn as `gpuvet burn` runs it
    const Order* order = nullptr;                // order.*, and gpu.tenancy's MIG expectation
    TrainSettings train;                         // gpu.software, gpu.train (--python, bench train's options)
};

struct RegistryRow {
    std::string_view key;   // "gpu.p2p": what Check::key() returns
    std::string_view area;  // "host", "gpu", "order": what --only host. selects
    CheckPtr (*make)(const CheckSettings&);
};

// Every check, in the order they run (the second stage keeps its place: core/runner.hpp).
const std::vector<RegistryRow>& registry();

// The checks named by `keys` (exact keys, or areas ending in '.' such as "gpu."), in registry
// order; all of them when `keys` is empty. An unknown key is a usage error listing the keys.
CheckList select_checks(const std::vector<std::string>& keys, const CheckSettings& settings = {});
// The same usage error for an unknown key, without making any check (to fail before other input).
void require_known_checks(const std::vector<std::string>& keys);

// The checks a command makes from the finished report rather than through the registry
// (history.drift: this run against the box's history); their rows have no `make`.
const std::vector<RegistryRow>& report_checks();
// Whether `keys` (as for select_checks) selects the report check `key`.
bool selects_report_check(const std::vector<std::string>& keys, std::string_view key);

}  // namespace gpuvet
