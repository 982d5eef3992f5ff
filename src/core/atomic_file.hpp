// Every file gpuvet writes (`-o`, `--report`, `--record`, `--log`) goes through here, so what an
// output path may name is decided in one place (docs/reports.md, "Output files"):
// - a regular file, or a name that does not exist yet: written to a temporary file in its folder and
//   renamed over it, so a report that exists is complete;
// - a symbolic link is followed: the file it points to is replaced (atomically, as above) and the
//   link stays; a link to nothing is refused;
// - the process's own descriptors (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`)
//   and a character device or FIFO are written through, never replaced (a FIFO nobody reads is
//   refused rather than waited on);
// - a directory, a block device, a socket or anything else is refused with a usage error (exit 2).
// Every descriptor opened here is close-on-exec, so a child process never inherits one.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace gpuvet {

enum class OutputKind {
    NewFile,       // nothing there yet
    Regular,       // an existing regular file: replaced atomically
    WriteThrough,  // a character device or FIFO: opened and written, never replaced
    Descriptor,    // one of gpuvet's own descriptors (/dev/stdout...)
};

struct OutputTarget {
    OutputKind kind = OutputKind::NewFile;
    std::filesystem::path path;  // after following symbolic links
    int fd = -1;                 // Descriptor: the descriptor number
};

// What `path` names, its links followed. Throws a usage error (exit 2) naming the path and the
// fix for a directory, a block device, a socket, a dangling link or a loop of links.
OutputTarget resolve_output_path(const std::filesystem::path& path);

// Writes `content` to `path` as the rules above say. Throws gpuvet::Error: Usage for a path that
// may not be written (see above), Runtime naming the path and the OS reason when writing fails.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Opens `path` for a file written as it goes (a record, a log), by the same rules, and returns a
// close-on-exec descriptor. A regular file is truncated and locked (flock, exclusive): a second
// writer is refused with a usage error instead of interleaving lines. `option` names the flag in
// messages ("--record").
int open_output_stream(const std::filesystem::path& path, std::string_view option);

}  // namespace gpuvet
