// Reports are written atomically: a report that exists is complete.
#pragma once
#include <filesystem>
#include <string_view>

namespace gpuvet {

// Writes `content` to a temporary file next to `path`, fsyncs it and renames it over `path`.
// Throws gpuvet::Error (Runtime) naming the path and the OS reason.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace gpuvet
