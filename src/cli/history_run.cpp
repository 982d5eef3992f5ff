// `gpuvet run` in the history: the trial run's record (outcome, the job's exit code, per-GPU
// utilization, power and temperature, the diagnosis' primary finding) and the box's identity,
// read after the job ended.
#include <iostream>

#include "cli/history_record.hpp"
#include "core/strings.hpp"
#include "gpu/device/backend.hpp"
#include "history/store.hpp"
#include "host/identity.hpp"
#include "host/persistent_ids.hpp"
#include "cli/check_run.hpp"
#include "core/run_result.hpp"
#include "monitor/run_verdict.hpp"

namespace gpuvet {

namespace {

// The command line as one string; a word with a space or a quote is quoted, so it reads back.
std::string command_line(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) {
        bool plain = !w.empty() && w.find_first_of(" \t'\"\\$") == std::string::npos;
        std::string q = "'";
        for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += (out.empty() ? "" : " ") + (plain ? w : q + "'");
    }
    return out;
}

void add_figure(history::RunRecord& rec, std::optional<int> gpu, const char* metric, double v, const char* unit) {
    if (!measured(v)) return;  // absent: no figure
    history::FigureRecord f;
    f.gpu = gpu;
    f.metric = metric;
    f.value = v;
    f.unit = unit;
    rec.figures.push_back(std::move(f));
}

void add_gpu(history::RunRecord& rec, const GpuRunSummary& s, const RunIdentity& id) {
    int i = s.facts.index;
    history::GpuRecord g;
    g.index = i;
    auto it = id.gpus.find(i);
    const RunIdentity::Gpu none;
    const RunIdentity::Gpu& d = it == id.gpus.end() ? none : it->second;
    g.slot = d.pci_bus_id && !d.pci_bus_id->empty() ? to_lower(*d.pci_bus_id) : "index " + std::to_string(i);
    g.uuid = d.uuid, g.serial = d.serial, g.vbios_version = d.vbios_version, g.inforom_version = d.inforom_version;
    g.name = !s.facts.name.empty() ? std::optional<std::string>(s.facts.name) : d.name;
    rec.gpus.push_back(std::move(g));
    add_figure(rec, i, "run.utilization_mean_percent", s.utilization_percent.mean, "%");
    add_figure(rec, i, "run.utilization_peak_percent", s.utilization_peak_percent, "%");
    add_figure(rec, i, "run.power_mean_w", s.power_w.mean, "W");
    add_figure(rec, i, "run.power_peak_w", s.power_w.max, "W");
    add_figure(rec, i, "run.temperature_mean_c", s.temperature_c.mean, "C");
    add_figure(rec, i, "run.temperature_peak_c", s.temperature_c.max, "C");
}

}  // namespace

history::RunRecord run_record_of(const Envelope& env, const RunResult& r, const RunIdentity& id) {
    history::RunRecord rec;
    rec.command = env.command;
    rec.started_at = env.started_at;
    rec.finished_at = env.finished_at;
    rec.tool_version = env.tool_version;
    rec.verdict = to_string(run_outcome(r));
    rec.exit_code = r.exit_code;
    rec.hostname = id.hostname;
    rec.system_uuid = id.system_uuid;
    rec.board_serial = id.board_serial;
    rec.slurm_node = id.slurm_node;
    rec.driver_version = id.driver_version;
    rec.cuda_driver_version = id.cuda_driver_version;
    rec.job = command_line(r.command);
    std::vector<std::string> uuids;
    for (const GpuRunSummary& g : r.gpus) {
        add_gpu(rec, g, id);
        uuids.push_back(rec.gpus.back().uuid.value_or(""));
    }
    add_figure(rec, std::nullopt, "run.wall_s", r.wall_s, "s");
    if (const auto& p = r.diagnosis.primary)
        rec.findings.push_back(
            {std::nullopt, "run.diagnosis", to_string(p->severity), p->id + " " + p->title + ": " + p->message});
    rec.digest = history::digest_of(env, rec.hostname, uuids);
    return rec;
}

RunIdentity read_run_identity(const DeviceBackend* backend, const std::vector<int>& gpu_indexes) {
    RunIdentity id;
    HostFs fs(host_root());
    id.hostname = read_machine_info(fs).hostname;
    PersistentIds ids = read_persistent_ids(fs);
    id.system_uuid = ids.system_uuid, id.board_serial = ids.board_serial, id.slurm_node = ids.slurm_node;
    if (!backend || !backend->usable()) return id;
    SystemFacts sys = backend->system();
    id.driver_version = sys.driver_version.value;
    id.cuda_driver_version = sys.cuda_driver_version.value;
    for (int i : gpu_indexes) {
        DeviceFacts f = backend->open(i)->describe();
        id.gpus[i] = {f.uuid.value, f.serial.value,        f.pci_bus_id.value,
                      f.name.value, f.vbios_version.value, f.inforom_image_version.value};
    }
    return id;
}

void record_run_in_history(const Envelope& env, const RunResult& r, const HistoryOptions& o,
                           const DeviceBackend* backend) {
    if (o.off) return;
    std::vector<int> indexes;
    for (const GpuRunSummary& g : r.gpus) indexes.push_back(g.facts.index);
    record_in_history(run_record_of(env, r, read_run_identity(backend, indexes)), o);
}

}  // namespace gpuvet
