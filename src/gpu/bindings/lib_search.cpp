#include "gpu/bindings/lib_search.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

namespace gpuvet {

namespace fs = std::filesystem;

namespace {

// Numbers inside a name, for "newest first" ordering: "cuda-12.10" -> {12, 10}.
std::vector<long> numbers_in(const std::string& s) {
    std::vector<long> v;
    long cur = -1;
    for (char c : s) {
        if (c >= '0' && c <= '9') cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
        else if (cur >= 0) v.push_back(cur), cur = -1;
    }
    if (cur >= 0) v.push_back(cur);
    return v;
}

// Entries of `dir` whose name starts with `prefix`, newest version first.
std::vector<fs::path> entries_newest_first(const fs::path& dir, const std::string& prefix) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) == 0) out.push_back(it->path());
    }
    std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
        return numbers_in(a.filename().string()) > numbers_in(b.filename().string());
    });
    return out;
}

fs::path under(const fs::path& root, const fs::path& abs) { return root == "/" ? abs : root / abs.relative_path(); }

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

}  // namespace

std::vector<fs::path> python_package_dirs(const EnvLookup& env, const fs::path& root) {
    std::vector<fs::path> dirs;
    auto add_lib_dirs = [&](const fs::path& prefix) {  // prefix/lib/python3*/{site,dist}-packages
        for (const auto& py : entries_newest_first(prefix / "lib", "python3"))
            for (const char* leaf : {"site-packages", "dist-packages"})
                if (is_dir(py / leaf)) dirs.push_back(py / leaf);
    };
    if (const char* v = env("VIRTUAL_ENV"); v && *v) add_lib_dirs(under(root, v));
    if (const char* v = env("CONDA_PREFIX"); v && *v) add_lib_dirs(under(root, v));
    if (const char* v = env("PYTHONPATH"); v && *v) {
        std::stringstream ss(v);
        for (std::string item; std::getline(ss, item, ':');)
            if (!item.empty() && is_dir(under(root, item))) dirs.push_back(under(root, item));
    }
    if (const char* home = env("HOME"); home && *home) add_lib_dirs(under(root, fs::path(home) / ".local"));
    add_lib_dirs(under(root, "/usr/local"));
    add_lib_dirs(under(root, "/usr"));
    return dirs;
}

std::vector<LibraryCandidate> library_candidates(const LibrarySearch& search, const EnvLookup& env_in,
                                                 const fs::path& root) {
    EnvLookup env = env_in ? env_in : EnvLookup([](const char* n) { return std::getenv(n); });
    std::vector<LibraryCandidate> out;
    if (const char* forced = env(search.env_var.c_str()); forced && *forced) {
        out.push_back({forced, search.env_var});
        return out;
    }
    std::set<std::string> seen;
    auto add = [&](const std::string& path, const char* origin) {
        if (seen.insert(path).second) out.push_back({path, origin});
    };
    auto add_files_in = [&](const fs::path& dir, const char* origin) {
        for (const auto& so : search.sonames) {
            std::error_code ec;
            fs::path f = dir / so;
            if (fs::exists(f, ec)) add(f.string(), origin);
        }
    };
    for (const auto& so : search.sonames) add(so, "loader");
    std::vector<fs::path> cuda_dirs{under(root, "/usr/local/cuda/lib64")};
    for (const auto& d : entries_newest_first(under(root, "/usr/local"), "cuda-")) cuda_dirs.push_back(d / "lib64");
    cuda_dirs.push_back(under(root, "/usr/lib/x86_64-linux-gnu"));
    for (const auto& d : cuda_dirs) add_files_in(d, "CUDA install");
    for (const auto& site : python_package_dirs(env, root))
        for (const auto& sub : search.site_subdirs) add_files_in(site / sub, "site-packages");
    return out;
}

}  // namespace gpuvet
