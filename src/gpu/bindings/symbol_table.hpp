// One declarative table per vendor library: for each function pointer we hold, the symbol names
// to try (newest first, e.g. {"nvmlInit_v2", "nvmlInit"}), whether the library is unusable
// without it, and where to store it. Only names whose C signature is identical may share an
// entry; versions that changed a struct get their own entry.
#pragma once
#include <array>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/bindings/driver_deadline.hpp"

namespace gpuvet {

enum class Need { Required, Optional };

template <class Api>
struct SymbolEntry {
    std::array<const char*, 3> names;  // newest first; unused slots are nullptr
    Need need;
    // stores the address found under a name into its typed member; wrapped in the library's
    // deadline (driver_deadline.hpp) when a DriverLib is given
    void (*assign)(Api&, void*, const char*, DriverLib*);
};

// Stores a dlsym() address into the function-pointer member `M`.
template <auto M, class Api>
void assign_member(Api& api, void* p, const char* symbol, DriverLib* lib) {
    store_member<M, Api>(api, p, symbol, lib);
}

struct SymbolResolution {
    std::map<std::string, std::string> used;    // first (newest) name -> the name found
    std::vector<std::string> missing_required;  // newest names of required entries not found
    std::vector<std::string> missing_optional;  // newest names of optional entries not found
    bool complete() const { return missing_required.empty(); }
};

// Looks every entry up through `lookup` (dlsym on the loaded library), newest name first. With
// `lib`, every call through the stored pointers runs under that library's deadline.
template <class Api>
SymbolResolution resolve_symbols(std::span<const SymbolEntry<Api>> table, Api& api,
                                 const std::function<void*(const char*)>& lookup, DriverLib* lib = nullptr) {
    SymbolResolution r;
    for (const auto& e : table) {
        void* found = nullptr;
        const char* used = e.names[0];
        for (const char* name : e.names) {
            if (!name) break;
            if ((found = lookup(name))) {
                r.used[e.names[0]] = name;
                used = name;
                break;
            }
        }
        e.assign(api, found, used, lib);
        if (!found) (e.need == Need::Required ? r.missing_required : r.missing_optional).push_back(e.names[0]);
    }
    return r;
}

// The absent reason of a metric whose optional symbol the installed driver does not export.
inline std::string driver_lacks(std::string_view symbol) { return "driver lacks " + std::string(symbol); }

}  // namespace gpuvet
