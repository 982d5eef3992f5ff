// Where a run-time library (cuBLASLt, NCCL) may be installed, in the order gpuvet tries them:
// the environment override (a file: only that), the dynamic loader's own search by name, the
// CUDA install folders and the Python wheels' lib folders (pip nvidia-* packages and PyTorch).
// Python itself is never run: site-packages folders are found by their usual paths.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace gpuvet {

struct LibrarySearch {
    std::string env_var;                  // "GPUVET_CUBLASLT"
    std::vector<std::string> sonames;     // newest first: "libcublasLt.so.13", ".12", ".11"
    std::vector<std::string> site_subdirs;  // under each site-packages: "nvidia/cublas/lib", "torch/lib"
};

struct LibraryCandidate {
    std::string path;    // a bare soname for the loader's search, else a file path
    std::string origin;  // "GPUVET_CUBLASLT", "loader", "CUDA install", "site-packages"
};

using EnvLookup = std::function<const char*(const char*)>;

// The candidates in order, without duplicates. `root` replaces "/" for the folder scans (tests);
// `env` reads the environment (std::getenv by default). Files under folders are listed only if
// they exist; loader names are always listed.
std::vector<LibraryCandidate> library_candidates(const LibrarySearch& search, const EnvLookup& env = {},
                                                 const std::filesystem::path& root = "/");

// Site-packages (and dist-packages) folders found from the usual prefixes, $VIRTUAL_ENV,
// $CONDA_PREFIX, ~/.local and $PYTHONPATH, newest Python first.
std::vector<std::filesystem::path> python_package_dirs(const EnvLookup& env, const std::filesystem::path& root);

// CUDA's major version from a CUDA version number (12080 -> 12).
inline int cuda_major(long v) { return static_cast<int>(v / 1000); }
// "12.8" from 12080.
std::string cuda_version_text(long v);

}  // namespace gpuvet
