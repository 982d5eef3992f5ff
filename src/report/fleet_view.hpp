// Printers of a fleet analysis: terminal (NHC-style lines first), JSON, Markdown, HTML.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.hpp"
#include "compare/fleet_analysis.hpp"
#include "report/style.hpp"

namespace gpuvet {

std::string render_fleet_terminal(const Fleet& f, const Style& st);
// Only the NHC-style lines, one per node: what a scheduler's health check reads.
std::string render_fleet_nhc(const Fleet& f);
std::string render_fleet_json(const Fleet& f, const Envelope& e);
// The fleet body (verdict, nodes, figures, outliers) without the envelope.
nlohmann::ordered_json fleet_to_json(const Fleet& f);
std::string render_fleet_markdown(const Fleet& f);
std::string render_fleet_html(const Fleet& f);

}  // namespace gpuvet
