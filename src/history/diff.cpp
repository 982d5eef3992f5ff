#include "history/diff.hpp"

#include <cmath>
#include <map>

#include "history/drift.hpp"

namespace gpuvet::history {

namespace {

std::string gpu_name(const SnapshotGpu& g) {
    std::string who = g.serial ? "serial " + *g.serial : g.key.value_or("unidentified GPU");
    return who + (g.name ? " (" + *g.name + ")" : "");
}

// 12080 -> "12.8", as cuDriverGetVersion encodes it (1000 x major + 10 x minor).
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// A firmware version of one GPU that both runs read and that differs.
void firmware(const char* what, const std::optional<std::string>& was, const std::optional<std::string>& is,
              const SnapshotGpu& g, const std::string& slot, RunDiff& d) {
    if (was && is && *was != *is)
        d.hardware.push_back(std::string(what) + " of " + gpu_name(g) + " in slot " + slot + ": " + *was + " -> " +
                             *is);
}

void hardware_changes(const Snapshot& a, const Snapshot& b, RunDiff& d) {
    std::map<std::string, const SnapshotGpu*> before, after;
    for (const auto& g : a.gpus) before[g.slot] = &g;
    for (const auto& g : b.gpus) after[g.slot] = &g;
    for (const auto& [slot, g] : after) {
        auto it = before.find(slot);
        if (it == before.end()) {
            d.hardware.push_back("added in slot " + slot + ": " + gpu_name(*g));
        } else if (it->second->key != g->key) {
            d.hardware.push_back("replaced in slot " + slot + ": " + gpu_name(*it->second) + " -> " + gpu_name(*g));
        } else {
            firmware("VBIOS", it->second->vbios_version, g->vbios_version, *g, slot, d);
            firmware("InfoROM", it->second->inforom_version, g->inforom_version, *g, slot, d);
        }
    }
    for (const auto& [slot, g] : before)
        if (!after.count(slot)) d.hardware.push_back("removed from slot " + slot + ": " + gpu_name(*g));
    if (a.gpus.size() != b.gpus.size())
        d.hardware.push_back("GPU count: " + std::to_string(a.gpus.size()) + " -> " + std::to_string(b.gpus.size()));
    if (a.run.driver_version != b.run.driver_version)
        d.hardware.push_back("driver: " + a.run.driver_version.value_or("none") + " -> " +
                             b.run.driver_version.value_or("none"));
    // Only when both runs read it: a run recorded before the history kept it is no change.
    if (a.run.cuda_driver_version && b.run.cuda_driver_version &&
        a.run.cuda_driver_version != b.run.cuda_driver_version)
        d.hardware.push_back("CUDA driver version: " + cuda_version(*a.run.cuda_driver_version) + " -> " +
                             cuda_version(*b.run.cuda_driver_version));
}

std::optional<FigureChange> moved(const FigureRow& x, const FigureRow& y, const std::string& who,
                                  const HistoryOf& history_of) {
    if (x.value == y.value) return std::nullopt;
    FigureChange c{who, y.metric, y.unit, x.value, y.value, 0, 0, false};
    bool floor = y.fail_below || (y.spec && !y.fail_above);
    c.worse = floor ? y.value < x.value : (y.fail_above || is_counter(y.metric)) ? y.value > x.value : false;
    if (x.value == 0) return c;  // from zero: any change is beyond noise (counters)
    c.change_percent = 100 * (y.value - x.value) / std::fabs(x.value);
    std::vector<double> h = y.gpu ? history_of(*y.gpu, y.metric) : std::vector<double>{};
    c.noise_percent = 100 * drift_margin(h);
    if (std::fabs(c.change_percent) <= c.noise_percent) return std::nullopt;
    return c;
}

}  // namespace

RunDiff diff_runs(const Snapshot& a, const Snapshot& b, const HistoryOf& history_of) {
    RunDiff d;
    d.base = a.run;
    d.now = b.run;
    hardware_changes(a, b, d);
    std::map<std::pair<std::string, std::string>, const FigureRow*> before;
    for (const auto& f : a.figures) before.emplace(std::pair{f.gpu.value_or(""), f.metric}, &f);
    std::map<std::string, int> index;
    for (const auto& g : b.gpus)
        if (g.key) index[*g.key] = g.index;
    for (const auto& f : b.figures) {
        auto it = before.find({f.gpu.value_or(""), f.metric});
        if (it == before.end()) continue;
        ++d.compared;
        std::string who = f.gpu ? "GPU " + std::to_string(index[*f.gpu]) : "box";
        if (auto c = moved(*it->second, f, who, history_of)) d.figures.push_back(*c);
    }
    return d;
}

}  // namespace gpuvet::history
