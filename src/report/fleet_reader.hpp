// Node reports read into fleet summaries one at a time, each released before the next is read, so a
// fleet of ten thousand nodes costs ten thousand summaries, not ten thousand reports. A report that
// cannot be used becomes that node's ERROR line; it never stops the fleet.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "compare/fleet_analysis.hpp"

namespace gpuvet {

// `text` as node `name`'s check report (from `path`, for messages): its summary, or a failed node
// that says what is wrong with the text.
// `amend`, when given, sees the parsed report before it is summarised (the fleet check adds each
// node's drift against its own history there, and records it).
FleetNodeInput read_fleet_node(const std::string& name, const std::string& path, const std::string& text,
                               const std::function<void(Report&)>& amend = {});

// Every file, read and summarised in turn (the node is the file's stem, or its folder's name for a
// gpuvet-report.json that --report wrote into a node's folder). A file that cannot be read,
// a duplicate of another, or a document that is not a check report is that node's ERROR.
std::vector<FleetNodeInput> read_fleet_files(const std::vector<std::string>& files);

}  // namespace gpuvet
