#include "history/identity.hpp"

namespace gpuvet::history {

namespace {

std::size_t shared(const std::set<std::string>& a, const std::set<std::string>& b) {
    std::size_t n = 0;
    for (const auto& k : a) n += b.count(k);
    return n;
}

std::optional<BoxMatch> by_gpus(const RunEvidence& run, const std::vector<BoxEvidence>& boxes) {
    const BoxEvidence* best = nullptr;
    std::size_t best_n = 0;
    for (const BoxEvidence& b : boxes) {
        std::size_t n = shared(run.gpu_keys, b.gpu_keys);
        if (n > best_n) best = &b, best_n = n;
    }
    if (!best || 2 * best_n < run.gpu_keys.size()) return std::nullopt;
    return BoxMatch{best->id, "GPUs"};
}

std::optional<BoxMatch> by_id(const std::optional<std::string>& v, const std::vector<BoxEvidence>& boxes,
                              std::set<std::string> BoxEvidence::*field, const char* name) {
    if (!v || v->empty()) return std::nullopt;
    for (const BoxEvidence& b : boxes)
        if ((b.*field).count(*v)) return BoxMatch{b.id, name};
    return std::nullopt;
}

bool anonymous(const BoxEvidence& b) { return b.gpu_keys.empty() && b.system_uuids.empty() && b.board_serials.empty(); }

}  // namespace

std::optional<BoxMatch> match_box(const RunEvidence& run, const std::vector<BoxEvidence>& boxes) {
    if (auto m = by_gpus(run, boxes)) return m;
    if (auto m = by_id(run.system_uuid, boxes, &BoxEvidence::system_uuids, "SMBIOS system UUID")) return m;
    if (auto m = by_id(run.board_serial, boxes, &BoxEvidence::board_serials, "SMBIOS board serial")) return m;
    if (auto m = by_id(run.slurm_node, boxes, &BoxEvidence::slurm_nodes, "Slurm node name")) return m;
    bool run_anonymous = run.gpu_keys.empty() && !run.system_uuid && !run.board_serial;
    if (!run_anonymous || !run.hostname) return std::nullopt;
    for (const BoxEvidence& b : boxes)
        if (anonymous(b) && b.hostnames.count(*run.hostname)) return BoxMatch{b.id, "hostname"};
    return std::nullopt;
}

}  // namespace gpuvet::history
