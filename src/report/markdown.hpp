// Markdown for a ticket or chat: the verdict, the check x GPU matrix and what did not pass, with
// its numbers, references and advice. Reads only the results model.
#pragma once
#include <string>

#include "core/result.hpp"

namespace gpuvet {

std::string render_markdown(const Report& r);

}  // namespace gpuvet
