// The HTML report's stylesheet: light and dark (prefers-color-scheme), phone widths, print.
#pragma once

namespace gpuvet {

extern const char* const kHtmlStyle;

}  // namespace gpuvet
