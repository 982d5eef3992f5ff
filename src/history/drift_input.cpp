#include "history/drift_input.hpp"

#include <map>

#include "history/identity.hpp"
#include "history/queries.hpp"
#include "history/store.hpp"

namespace gpuvet::history {

namespace {

// The GPU's earlier values of `metric`, from runs where the driver gave it the same name: a GPU
// that now reports another product (a re-flashed VBIOS, gpu.identity's business) has no baseline.
std::vector<Dated> earlier(Database& db, std::int64_t gpu, const GpuRecord& g, const std::string& metric,
                           const std::string& before) {
    std::vector<Dated> out;
    Statement s = db.prepare(
        "SELECT r.started_at, f.value FROM figures f JOIN runs r ON r.id = f.run_id JOIN run_gpus rg ON "
        "rg.run_id = f.run_id AND rg.gpu_id = f.gpu_id WHERE f.metric = ?1 AND f.gpu_id = ?2 AND "
        "r.started_at <= ?3 AND rg.name IS ?4 ORDER BY r.started_at, r.id");
    s.bind(1, metric).bind(2, gpu).bind(3, before).bind(4, g.name);
    while (s.step()) out.push_back({s.text(0), s.real(1)});
    return out;
}

std::string label_of(const GpuRecord& g) {
    return "GPU " + std::to_string(g.index) + (g.serial ? " (serial " + *g.serial + ")" : "");
}

std::optional<std::int64_t> previous_run(Database& db, std::int64_t box, const std::string& before) {
    Statement s = db.prepare(
        "SELECT id FROM runs WHERE box_id = ?1 AND started_at <= ?2 AND EXISTS (SELECT 1 FROM run_gpus WHERE "
        "run_id = runs.id) ORDER BY started_at DESC, id DESC LIMIT 1");
    s.bind(1, box).bind(2, before);
    if (!s.step()) return std::nullopt;
    return s.int64(0);
}

void add_swaps(Database& db, const RunRecord& now, std::int64_t box, DriftInput& in) {
    auto prev = previous_run(db, box, now.started_at);
    if (!prev) return;
    in.any_history = true;
    Snapshot before = snapshot(db, *prev);
    for (const GpuRecord& g : now.gpus) {
        if (g.key().empty()) continue;
        for (const SnapshotGpu& b : before.gpus)
            if (b.slot == g.slot && b.key && *b.key != g.key()) {
                std::string was = b.serial ? "serial " + *b.serial : *b.key;
                std::string is = g.serial ? "serial " + *g.serial : g.key();
                in.swaps.push_back({g.slot, g.index, was, is, before.run.started_at});
            }
    }
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
    for (const GpuRecord& g : now.gpus) {
        auto id = g.key().empty() ? std::nullopt : find_gpu(db, g.key());
        if (!id) continue;
        GpuHistory h{g.index, label_of(g), {}};
        for (const FigureRecord& f : now.figures) {
            if (f.gpu != g.index) continue;
            FigureHistory fh{f.metric, f.unit, f.value, (f.fail_below || f.spec) && !f.fail_above,
                             earlier(db, *id, g, f.metric, now.started_at)};
            if (!fh.earlier.empty()) in.any_history = true;
            h.figures.push_back(std::move(fh));
        }
        in.gpus.push_back(std::move(h));
    }
    return in;
}

}  // namespace gpuvet::history
