// gpuvet's AMD SMI declarations against the facts recorded from amdsmi.h (amd_smi_facts.hpp,
// written by scripts/amd-smi-facts): every size, alignment, offset and constant at compile time,
// every function pointer's type at run time (GCC's spelling of both, our namespace dropped).
#include <cstddef>
#include <cstdio>
#include <string>

#include "gpu/bindings/amd_smi_api.hpp"

namespace {

namespace a = gpuvet::amdsmi;

template <class T>
std::string type_name() {
    std::string s = __PRETTY_FUNCTION__;
    auto b = s.find("T = ") + 4;
    return s.substr(b, s.find_first_of(";]", b) - b);
}

std::string without_namespace(std::string s) {
    const std::string ns = "gpuvet::amdsmi::";
    for (auto p = s.find(ns); p != std::string::npos; p = s.find(ns)) s.erase(p, ns.size());
    return s;
}

#define AMD_SMI_SIZE(T, v) static_assert(sizeof(a::T) == (v), "size of " #T);
#define AMD_SMI_ALIGN(T, v) static_assert(alignof(a::T) == (v), "alignment of " #T);
#define AMD_SMI_OFFSET(T, m, v) static_assert(offsetof(a::T, m) == (v), "offset of " #T "::" #m);
#define AMD_SMI_VALUE(e, v) static_assert(static_cast<unsigned long long>(a::e) == (v##ull), "value of " #e);
#define AMD_SMI_CONSTANT(k, v) static_assert(static_cast<unsigned long long>(a::k) == (v##ull), "constant " #k);
#define AMD_SMI_SIGNATURE(fn, spelled)
#include "amd_smi_facts.hpp"
#undef AMD_SMI_SIZE
#undef AMD_SMI_ALIGN
#undef AMD_SMI_OFFSET
#undef AMD_SMI_VALUE
#undef AMD_SMI_CONSTANT
#undef AMD_SMI_SIGNATURE

struct Signature {
    const char* function;
    std::string ours;
    const char* theirs;
};

}  // namespace

int check_amd_smi_runtime() {
#define AMD_SMI_SIZE(T, v)
#define AMD_SMI_ALIGN(T, v)
#define AMD_SMI_OFFSET(T, m, v)
#define AMD_SMI_VALUE(e, v)
#define AMD_SMI_CONSTANT(k, v)
#define AMD_SMI_SIGNATURE(fn, spelled) {#fn, without_namespace(type_name<decltype(gpuvet::AmdSmiApi::fn)>()), spelled},
    const Signature signatures[] = {
#include "amd_smi_facts.hpp"
    };
    int failures = 0;
    for (const auto& s : signatures) {
        if (s.ours == s.theirs) continue;
        std::fprintf(stderr, "AMD SMI %s: ours %s, amdsmi.h %s\n", s.function, s.ours.c_str(), s.theirs);
        ++failures;
    }
    // Every function the binding resolves has its recorded signature.
    if (std::size(signatures) != gpuvet::amd_smi_symbol_table().size()) {
        std::fprintf(stderr, "AMD SMI: %zu signatures recorded, %zu symbols bound\n", std::size(signatures),
                     gpuvet::amd_smi_symbol_table().size());
        ++failures;
    }
    return failures;
}
