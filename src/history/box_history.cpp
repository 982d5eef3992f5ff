#include "history/box_history.hpp"

#include <map>

#include "history/identity.hpp"
#include "history/store.hpp"

namespace gpuvet::history {

namespace {

bool key_figure(const FigureRecord& f) { return f.spec || f.fail_below || f.fail_above; }

// This run's value as the chart's last point.
TrendPoint point_now(const RunRecord& now, const FigureRecord& f, const GpuRecord* g) {
    return {now.started_at,
            g ? g->key() : "",
            g ? g->serial : std::nullopt,
            f.value,
            f.unit,
            f.spec,
            f.fail_below,
            f.fail_above,
            kind_of(now),
            0};
}

// The run's own row when it is already recorded (a report shown again): not its own history.
std::int64_t recorded_id(Database& db, const RunRecord& now) {
    Statement s = db.prepare("SELECT id FROM runs WHERE digest = ?1");
    s.bind(1, now.digest);
    return s.step() ? s.int64(0) : 0;
}

// Earlier comparable values of one figure on the box: one GPU's (by its id), or the box's own.
std::vector<TrendPoint> earlier_points(Database& db, const RunRecord& now, std::int64_t self, const FigureRecord& f,
                                       std::int64_t box, std::optional<std::int64_t> gpu) {
    std::vector<TrendPoint> out;
    for (TrendPoint& p : trend(db, f.metric, gpu, box))
        if (p.run_id != self && p.at <= now.started_at && (gpu || p.gpu.empty()) &&
            comparable(kind_of(now), p.kind, f.metric))
            out.push_back(std::move(p));
    return out;
}

}  // namespace

std::optional<BoxHistory> box_history(Database& db, const RunRecord& now) {
    RunEvidence ev{{}, now.system_uuid, now.board_serial, now.slurm_node, now.hostname};
    for (const GpuRecord& g : now.gpus)
        if (!g.key().empty()) ev.gpu_keys.insert(g.key());
    auto match = match_box(ev, box_evidence(db));
    if (!match) return std::nullopt;
    BoxHistory h;
    h.matched_by = match->by;
    h.now_at = now.started_at;
    h.now = kind_of(now);
    const std::int64_t self = recorded_id(db, now);
    for (RunRow& r : runs_of_box(db, match->id))
        if (r.id != self && r.started_at <= now.started_at) h.runs.push_back(std::move(r));
    if (h.runs.empty()) return std::nullopt;
    h.box = h.runs.front().box;
    std::map<int, std::pair<const GpuRecord*, std::optional<std::int64_t>>> gpus;
    for (const GpuRecord& g : now.gpus) gpus[g.index] = {&g, g.key().empty() ? std::nullopt : find_gpu(db, g.key())};
    std::map<std::string, FigureTrend> trends;
    for (const FigureRecord& f : now.figures) {
        if (!key_figure(f)) continue;
        const GpuRecord* g = nullptr;
        std::optional<std::int64_t> gpu;
        if (f.gpu) {
            auto it = gpus.find(*f.gpu);
            if (it == gpus.end() || !it->second.second) continue;  // an unidentified GPU has no past
            g = it->second.first, gpu = it->second.second;
        }
        auto past = earlier_points(db, now, self, f, match->id, gpu);
        if (past.empty()) continue;
        FigureTrend& t = trends[f.metric];
        t.metric = f.metric, t.unit = f.unit;
        t.points.insert(t.points.end(), past.begin(), past.end());
        t.points.push_back(point_now(now, f, g));
    }
    for (auto& [metric, t] : trends) h.trends.push_back(std::move(t));
    return h;
}

}  // namespace gpuvet::history
