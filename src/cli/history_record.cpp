#include "cli/history_record.hpp"

#include <filesystem>
#include <iostream>

#include "checks/run_facts.hpp"
#include "cli/check_run.hpp"
#include "core/error.hpp"
#include "gpu/inventory.hpp"
#include "history/drift_input.hpp"
#include "history/store.hpp"
#include "host/persistent_ids.hpp"

namespace gpuvet {

void add_history_flags(CLI::App& sub, HistoryOptions& o) {
    sub.add_flag("--no-history", o.off, "do not record this run in the history database (docs/history.md)");
    sub.add_option("--history-db", o.db,
                   "the history database file (default: $GPUVET_HISTORY_DB, else "
                   "$XDG_DATA_HOME/gpuvet/history.sqlite, else ~/.local/share/gpuvet/history.sqlite)");
}

void require_usable_history(const HistoryOptions& o) {
    if (o.off) return;
    if (auto path = history::history_path(o.db)) history::require_database_file(*path);
}

history::LiveIdentity live_identity(const RunFacts& facts) {
    history::LiveIdentity live;
    PersistentIds ids = read_persistent_ids(HostFs(host_root()));
    live.system_uuid = ids.system_uuid;
    live.board_serial = ids.board_serial;
    live.slurm_node = ids.slurm_node;
    for (const GpuInfo& g : facts.inventory().gpus) {
        if (g.serial) live.serials[g.index] = *g.serial;
        if (g.vbios_version) live.vbios_versions[g.index] = *g.vbios_version;
        if (g.inforom_image_version) live.inforom_versions[g.index] = *g.inforom_image_version;
    }
    return live;
}

std::optional<CheckResult> history_drift(const Report& r, const HistoryOptions& o, const history::LiveIdentity& live) {
    if (o.off) return std::nullopt;
    auto path = history::history_path(o.db);
    std::error_code ec;
    if (!path || !std::filesystem::exists(*path, ec)) return std::nullopt;
    try {
        history::Store store(*path, false);
        history::RunRecord rec = history::record_of(r, &live);
        return history::judge_drift(history::drift_input(store.db(), rec));
    } catch (const Error& e) {
        CheckResult c;
        c.key = "history.drift";
        c.title = "Drift and swaps against this box's history";
        // Skipped, not an ERROR: the history must never change the run's verdict by failing.
        c.verdict = Verdict::Skip;
        c.summary = std::string("the history could not be read: ") + e.what();
        if (!e.advice().empty()) c.details.push_back(e.advice());
        return c;
    }
}

std::optional<history::BoxHistory> box_history_for(const Report& r, const HistoryOptions& o,
                                                   const history::LiveIdentity& live) {
    if (o.off) return std::nullopt;
    auto path = history::history_path(o.db);
    std::error_code ec;
    if (!path || !std::filesystem::exists(*path, ec)) return std::nullopt;
    try {
        history::Store store(*path, false);
        return history::box_history(store.db(), history::record_of(r, &live));
    } catch (const Error&) {
        return std::nullopt;  // history.drift says why the history could not be read
    }
}

void record_in_history(const history::RunRecord& rec, const HistoryOptions& o) {
    if (o.off) return;
    std::string why;
    auto path = history::history_path(o.db, &why);
    if (!path) {
        std::cerr << "gpuvet: warning: this run is not in the history: " << why
                  << " (set GPUVET_HISTORY_DB, or pass --no-history)\n";
        return;
    }
    try {
        history::Store store(*path, true);
        store.record(rec, "recorded");
    } catch (const std::exception& e) {
        std::cerr << "gpuvet: warning: this run is not in the history: " << e.what() << "\n";
        if (auto* ge = dynamic_cast<const Error*>(&e); ge && !ge->advice().empty())
            std::cerr << "  → " << ge->advice() << "\n";
    }
}

void record_in_history(const Report& r, const HistoryOptions& o, const history::LiveIdentity& live) {
    if (!o.off) record_in_history(history::record_of(r, &live), o);
}

}  // namespace gpuvet
