#include "host/persistent_ids.hpp"

#include <cstdlib>
#include <filesystem>

#include "core/strings.hpp"

namespace gpuvet {

std::optional<std::string> meaningful_firmware_id(const std::string& raw) {
    std::string s = trim(raw);
    std::string low = to_lower(s);
    bool filler = s.find_first_not_of("0-fF ") == std::string::npos;
    if (s.empty() || filler || low.find("filled") != std::string::npos || low.find("default") != std::string::npos ||
        low == "not specified" || low == "none" || low == "n/a" || low == "system serial number")
        return std::nullopt;
    return s;
}

namespace {

std::optional<std::string> dmi_field(const HostFs& fs, const char* file, std::string& why) {
    std::string at = std::string("/sys/class/dmi/id/") + file;
    auto raw = fs.read_line(at);
    if (raw) {
        auto id = meaningful_firmware_id(*raw);
        if (!id) why = "the firmware leaves it unset (\"" + trim(*raw) + "\")";
        return id;
    }
    std::error_code ec;
    why = std::filesystem::exists(fs.path(at), ec) ? "no permission: " + at + " is readable by root only"
                                                   : "no " + at + " (no SMBIOS: a container or virtual machine?)";
    return std::nullopt;
}

}  // namespace

PersistentIds read_persistent_ids(const HostFs& fs) {
    PersistentIds ids;
    ids.system_uuid = dmi_field(fs, "product_uuid", ids.system_uuid_absent);
    ids.board_serial = dmi_field(fs, "board_serial", ids.board_serial_absent);
    if (const char* node = std::getenv("SLURMD_NODENAME"); node && *node) ids.slurm_node = std::string(node);
    return ids;
}

}  // namespace gpuvet
