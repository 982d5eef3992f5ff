// Run-time loading of vendor libraries (never linked): dlopen with a list of candidate names,
// an environment variable that overrides them, and the reason when nothing loads.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

// A library loaded for the rest of the process: a plain value, not an owning handle. Vendor
// libraries start threads and register atexit handlers, and unloading them while those may still
// run is a known source of crashes at exit, so nothing ever dlclose()s them.
class DynLib {
public:
    DynLib() = default;

    // Tries the file named by `env_var` (if set: only that), else each candidate in turn.
    // On failure returns an empty DynLib whose error() says what was tried and why it failed.
    static DynLib open(const std::string& env_var, const std::vector<std::string>& candidates);

    bool loaded() const { return handle_ != nullptr; }
    explicit operator bool() const { return loaded(); }
    void* symbol(const char* name) const;                // nullptr when absent
    const std::string& path() const { return path_; }    // resolved file, when loaded
    const std::string& error() const { return error_; }  // why it did not load

private:
    void* handle_ = nullptr;
    std::string path_;
    std::string error_;
};

}  // namespace gpuvet
