// What a renamed host keeps, for the history's box identity: the SMBIOS system UUID and board
// serial as the kernel exposes them (/sys/class/dmi/id; DMTF DSP0134 7.2 and 7.3, root-only on
// most distributions) and the Slurm node name (SLURMD_NODENAME, set in every Slurm job step).
#pragma once
#include <optional>
#include <string>

#include "core/host_fs.hpp"

namespace gpuvet {

struct PersistentIds {
    std::optional<std::string> system_uuid, board_serial, slurm_node;
    std::string system_uuid_absent, board_serial_absent;  // why each is absent, when it is
};

PersistentIds read_persistent_ids(const HostFs& fs);

// A firmware id as given, or nullopt for the placeholders boards ship unset ("To be filled by
// O.E.M.", "Default string", all zeros or all F's): they would make unrelated boxes one.
std::optional<std::string> meaningful_firmware_id(const std::string& raw);

}  // namespace gpuvet
