// gpuvet's hipBLASLt declarations against the facts recorded from hipblaslt.h, hipblas-common.h and
// HIP's library_types.h (hipblaslt_facts.hpp; no Debian package ships them): every constant, size and
// offset at compile time, every function pointer's type at run time (GCC's spelling, our namespaces
// dropped).
#include <cstddef>
#include <cstdio>
#include <string>

#include "gpu/bindings/hipblaslt_api.hpp"

namespace {

namespace h = gpuvet::hiplt;

template <class T>
std::string type_name() {
    std::string s = __PRETTY_FUNCTION__;
    auto b = s.find("T = ") + 4;
    return s.substr(b, s.find_first_of(";]", b) - b);
}

std::string without_namespaces(std::string s) {
    for (const std::string ns : {"gpuvet::hiplt::", "gpuvet::hip::"})
        for (auto p = s.find(ns); p != std::string::npos; p = s.find(ns)) s.erase(p, ns.size());
    return s;
}

#define HIPBLASLT_SIZE(T, v) static_assert(sizeof(h::T) == (v), "size of " #T);
#define HIPBLASLT_OFFSET(T, m, v) static_assert(offsetof(h::T, m) == (v), "offset of " #T "::" #m);
#define HIPBLASLT_VALUE(e, v) static_assert(static_cast<long long>(h::e) == (v), "value of " #e);
#define HIPBLASLT_SIGNATURE(fn, spelled)
#include "hipblaslt_facts.hpp"
#undef HIPBLASLT_SIZE
#undef HIPBLASLT_OFFSET
#undef HIPBLASLT_VALUE
#undef HIPBLASLT_SIGNATURE

struct Signature {
    const char* function;
    std::string ours;
    const char* theirs;
};

}  // namespace

int check_hipblaslt_runtime() {
#define HIPBLASLT_SIZE(T, v)
#define HIPBLASLT_OFFSET(T, m, v)
#define HIPBLASLT_VALUE(e, v)
#define HIPBLASLT_SIGNATURE(fn, spelled) \
    {#fn, without_namespaces(type_name<decltype(gpuvet::HipblasLtApi::fn)>()), spelled},
    const Signature signatures[] = {
#include "hipblaslt_facts.hpp"
    };
    int failures = 0;
    for (const auto& s : signatures) {
        if (s.ours == s.theirs) continue;
        std::fprintf(stderr, "hipBLASLt %s: ours %s, hipblaslt.h %s\n", s.function, s.ours.c_str(), s.theirs);
        ++failures;
    }
    // Every function the binding resolves has its recorded signature.
    if (std::size(signatures) != gpuvet::hipblaslt_symbol_table().size()) {
        std::fprintf(stderr, "hipBLASLt: %zu signatures recorded, %zu symbols bound\n", std::size(signatures),
                     gpuvet::hipblaslt_symbol_table().size());
        ++failures;
    }
    return failures;
}
