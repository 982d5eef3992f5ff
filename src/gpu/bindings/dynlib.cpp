#include "gpu/bindings/dynlib.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

namespace gpuvet {

DynLib DynLib::open(const std::string& env_var, const std::vector<std::string>& candidates) {
    DynLib lib;
    std::vector<std::string> names = candidates;
    if (const char* forced = std::getenv(env_var.c_str()); forced && *forced) names = {forced};
    for (const auto& n : names) {
        dlerror();
        void* h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h) {
            lib.handle_ = h;
            lib.error_.clear();
            char origin[4096] = {0};
            if (::dlinfo(h, RTLD_DI_ORIGIN, origin) == 0 && origin[0]) {
                auto slash = n.rfind('/');
                lib.path_ = std::string(origin) + "/" + (slash == std::string::npos ? n : n.substr(slash + 1));
            } else {
                lib.path_ = n;
            }
            return lib;
        }
        // The first candidate's reason is the telling one; the fallbacks only repeat it.
        const char* e = dlerror();
        if (lib.error_.empty()) lib.error_ = e ? e : (n + ": cannot be loaded");
    }
    return lib;
}

void* DynLib::symbol(const char* name) const {
    if (!handle_) return nullptr;
    return ::dlsym(handle_, name);
}

}  // namespace gpuvet
