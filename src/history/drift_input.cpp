#include "history/drift_input.hpp"

#include <map>

#include "history/identity.hpp"
#include "history/queries.hpp"
#include "history/store.hpp"

namespace gpuvet::history {

namespace {

// The GPU's earlier values of `metric`, from runs where the driver gave it the same name: a GPU
// that now reports another product (a re-flashed VBIOS, gpu.identity's business) has no baseline.
// Only runs comparable with this one count (comparable.hpp): a quick check's short burn is no
// baseline for a full one's.
std::vector<Dated> earlier(Database& db, std::int64_t gpu, const GpuRecord& g, const std::string& metric,
                           const RunKind& now_kind, const std::string& before) {
    std::vector<Dated> out;
    Statement s = db.prepare(
        "SELECT r.started_at, f.value, r.command, r.tier, r.burn_duration_s FROM figures f JOIN runs r ON "
        "r.id = f.run_id JOIN run_gpus rg ON rg.run_id = f.run_id AND rg.gpu_id = f.gpu_id WHERE f.metric = ?1 "
        "AND f.gpu_id = ?2 AND r.started_at <= ?3 AND rg.name IS ?4 ORDER BY r.started_at, r.id");
    s.bind(1, metric).bind(2, gpu).bind(3, before).bind(4, g.name);
    while (s.step())
        if (comparable(now_kind, RunKind{s.text(2), s.opt_text(3), s.opt_real(4)}, metric))
            out.push_back({s.text(0), s.real(1)});
    return out;
}

std::string label_of(const GpuRecord& g) {
    return "GPU " + std::to_string(g.index) + (g.serial ? " (serial " + *g.serial + ")" : "");
}

// The GPU each slot of the box held last before `before`, with when (a run of some GPUs only
// leaves the other slots as they were).
struct SlotHeld {
    std::string key;
    std::optional<std::string> serial;
    std::string at;
};
std::map<std::string, SlotHeld> slots_held(Database& db, std::int64_t box, const std::string& before) {
    std::map<std::string, SlotHeld> out;
    Statement s = db.prepare(
        "SELECT slot, key, serial, started_at FROM (SELECT rg.slot, g.key, g.serial, r.started_at, row_number() "
        "OVER (PARTITION BY rg.slot ORDER BY r.started_at DESC, r.id DESC) AS n FROM run_gpus rg JOIN runs r ON "
        "r.id = rg.run_id JOIN gpus g ON g.id = rg.gpu_id WHERE r.box_id = ?1 AND r.started_at <= ?2) WHERE n = 1");
    s.bind(1, box).bind(2, before);
    while (s.step()) out[s.text(0)] = {s.text(1), s.opt_text(2), s.text(3)};
    return out;
}

void add_swaps(Database& db, const RunRecord& now, std::int64_t box, DriftInput& in) {
    auto held = slots_held(db, box, now.started_at);
    if (held.empty()) return;
    in.any_history = true;
    for (const GpuRecord& g : now.gpus) {
        auto it = held.find(g.slot);
        if (g.key().empty() || it == held.end() || it->second.key == g.key()) continue;
        std::string was = it->second.serial ? "serial " + *it->second.serial : it->second.key;
        std::string is = g.serial ? "serial " + *g.serial : g.key();
        in.swaps.push_back({g.slot, g.index, was, is, it->second.at});
    }
}

// A new box under a hostname that a box with other GPUs had: said, not silently a new box.
void add_hostname_reuse(Database& db, const RunRecord& now, DriftInput& in) {
    if (!now.hostname || now.hostname->empty()) return;
    bool identified = false;
    for (const GpuRecord& g : now.gpus) identified = identified || !g.key().empty();
    if (!identified) return;
    if (auto was = last_box_named(db, *now.hostname, now.started_at, std::nullopt))
        in.hostname_reused = HostnameReuse{*now.hostname, was->first, was->second};
}

}  // namespace

std::optional<std::int64_t> box_of(Database& db, const RunRecord& run) {
    RunEvidence ev{{}, run.system_uuid, run.board_serial, run.slurm_node, run.hostname};
    for (const GpuRecord& g : run.gpus)
        if (!g.key().empty()) ev.gpu_keys.insert(g.key());
    auto m = match_box(ev, box_evidence(db));
    if (!m) return std::nullopt;
    return m->id;
}

DriftInput drift_input(Database& db, const RunRecord& now) {
    DriftInput in;
    in.now_at = now.started_at;
    if (auto box = box_of(db, now)) add_swaps(db, now, *box, in);
    else add_hostname_reuse(db, now, in);
    RunKind kind = kind_of(now);
    for (const GpuRecord& g : now.gpus) {
        auto id = g.key().empty() ? std::nullopt : find_gpu(db, g.key());
        if (!id) continue;
        GpuHistory h{g.index, label_of(g), {}};
        for (const FigureRecord& f : now.figures) {
            if (f.gpu != g.index) continue;
            FigureHistory fh{f.metric, f.unit, f.value, (f.fail_below || f.spec) && !f.fail_above,
                             earlier(db, *id, g, f.metric, kind, now.started_at)};
            if (!fh.earlier.empty()) in.any_history = true;
            h.figures.push_back(std::move(fh));
        }
        in.gpus.push_back(std::move(h));
    }
    return in;
}

}  // namespace gpuvet::history
