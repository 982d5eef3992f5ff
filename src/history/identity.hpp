// Which box a run belongs to, decided from what cannot be renamed. Pure: the store hands in what
// it knows of each box, the run its own ids; nothing here reads the database.
//
// The rule, strongest evidence first:
//   1. the GPUs: the box whose last run shares the most GPUs (UUID or serial) with this one, when
//      they are at least half of this run's GPUs: a card or a few swapped keep the box;
//   2. the firmware: the same SMBIOS system UUID or board serial (every GPU replaced in the same
//      chassis is still that chassis);
//   3. the Slurm node name, the name a cluster's scheduler holds the machine by;
//   4. the hostname, only when neither this run nor that box has any GPU or firmware id to tell
//      them apart (a host-only report).
// Otherwise the run is a new box: a hostname that now has other GPUs is another machine.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuvet::history {

struct BoxEvidence {
    std::int64_t id = 0;
    std::set<std::string> gpu_keys;  // the GPUs of its last run
    std::set<std::string> system_uuids, board_serials, slurm_nodes, hostnames;
};

struct RunEvidence {
    std::set<std::string> gpu_keys;
    std::optional<std::string> system_uuid, board_serial, slurm_node, hostname;
};

struct BoxMatch {
    std::int64_t id = 0;
    std::string by;  // "GPUs", "SMBIOS system UUID", "SMBIOS board serial", "Slurm node name", "hostname"
};

std::optional<BoxMatch> match_box(const RunEvidence& run, const std::vector<BoxEvidence>& boxes);

}  // namespace gpuvet::history
