// The machine-readable report (docs/report-schema.md documents every key).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.hpp"

namespace gpuvet {

using Json = nlohmann::ordered_json;

// The envelope every document starts with (schema version, tool, command, times), then its body.
Json to_json(const Envelope& e);
// `body`'s members after the envelope's, pretty-printed and newline-terminated.
std::string render_document(const Envelope& e, const Json& body);
Json to_json(const Report& r);
Json to_json(const CheckResult& c);
Json to_json(const Measurement& m);
Json to_json(const MachineInfo& m);
std::string render_json(const Report& r);  // pretty-printed, newline-terminated

}  // namespace gpuvet
