// Printers of an offer comparison: terminal table, JSON document, Markdown, HTML page.
#pragma once
#include <string>

#include "core/result.hpp"
#include "report/json.hpp"
#include "compare/offers.hpp"
#include "report/style.hpp"

namespace gpuvet {

std::string render_offers_terminal(const OfferComparison& c, const Style& st);
// `workload`: the --workload section (workload_to_json), or null.
std::string render_offers_json(const OfferComparison& c, const Envelope& e, const Json& workload = Json());
std::string render_offers_markdown(const OfferComparison& c);
std::string render_offers_html(const OfferComparison& c);

}  // namespace gpuvet
