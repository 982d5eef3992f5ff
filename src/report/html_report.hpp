// The self-contained HTML report: one file, no network, inline CSS and SVG, readable on a phone,
// prints well. Reads only the results model.
#pragma once
#include <string>

#include "core/result.hpp"

namespace gpuvet {

namespace history {
struct BoxHistory;
}

// `history`: the box's earlier runs and key figures over time, a section of its own when given.
std::string render_html(const Report& r, const history::BoxHistory* history = nullptr);

}  // namespace gpuvet
