// Where a run-time library (cuBLASLt, NCCL) may be installed, in the order gpuvet tries them:
// the environment override (a file: only that), the dynamic loader's own search by name, the
// CUDA install folders and the Python wheels' lib folders (pip nvidia-* packages and PyTorch).
// Python itself is never run: site-packages folders are found by their usual paths.
#pragma once
#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace gpuvet {

struct LibrarySearch {
    std::string env_var;                    // "GPUVET_CUBLASLT"
    std::vector<std::string> sonames;       // newest first: "libcublasLt.so.13", ".12", ".11"
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

// Walks the candidates and returns the first library `load_file(path)` accepts (api.ok()), with
// the reasons the others were passed over in api.tried (each reason once: the loader name and a
// CUDA folder often reach the same file). When none works, api.error is `none_error`.
template <class Api, class LoadFile>
Api load_first_usable(const LibrarySearch& search, LoadFile&& load_file, const std::string& none_error) {
    std::vector<std::string> tried;
    for (const auto& c : library_candidates(search)) {
        Api api = load_file(c.path);
        if (api.ok()) {
            api.tried = std::move(tried);
            return api;
        }
        if (std::find(tried.begin(), tried.end(), api.error) == tried.end()) tried.push_back(api.error);
    }
    Api none;
    none.tried = std::move(tried);
    none.error = none_error;
    return none;
}

// CUDA's major version from a CUDA version number (12080 -> 12).
inline int cuda_major(long v) { return static_cast<int>(v / 1000); }

}  // namespace gpuvet
