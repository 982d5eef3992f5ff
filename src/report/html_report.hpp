// The self-contained HTML report: one file, no network, inline CSS and SVG, readable on a phone,
// prints well. Reads only the results model.
#pragma once
#include <string>

#include "core/result.hpp"

namespace gpuvet {

std::string render_html(const Report& r);

}  // namespace gpuvet
