// Maps a type spelled with gpuvet's declarations to the same type spelled with NVIDIA's, through
// pointers, const and function signatures, so that whole function-pointer types can be compared
// with std::is_same. A type we do not redeclare (int, char, size_t, global opaque structs) maps
// to itself.
#pragma once
#include <type_traits>

namespace abi {

template <class T>
struct official {
    using type = T;
};
template <class T>
using official_t = typename official<T>::type;

template <class T>
struct official<T*> {
    using type = official_t<T>*;
};
template <class T>
struct official<const T> {
    using type = const official_t<T>;
};
template <class R, class... A>
struct official<R (*)(A...)> {
    using type = official_t<R> (*)(official_t<A>...);
};

// Our type Ours and NVIDIA's Theirs must agree in size and alignment, and are mapped.
#define ABI_MAP(Ours, Theirs)                                          \
    template <>                                                        \
    struct official<Ours> {                                            \
        using type = Theirs;                                           \
    };                                                                 \
    static_assert(sizeof(Ours) == sizeof(Theirs), "size of " #Theirs); \
    static_assert(alignof(Ours) == alignof(Theirs), "alignment of " #Theirs)

#define ABI_ENUM(Ours, Theirs)                                                                  \
    ABI_MAP(Ours, Theirs);                                                                      \
    static_assert(std::is_same_v<std::underlying_type_t<Ours>, std::underlying_type_t<Theirs>>, \
                  "underlying type of " #Theirs)

}  // namespace abi

// The signature we hold for a symbol equals the one the vendor header declares for it.
#define ABI_SAME_FN(OurFnType, official_function)                                           \
    static_assert(std::is_same_v<abi::official_t<OurFnType>, decltype(&official_function)>, \
                  "signature of " #official_function)

#define ABI_SAME_VALUE(ours, theirs) \
    static_assert(static_cast<unsigned long long>(ours) == static_cast<unsigned long long>(theirs), #theirs)

#define ABI_SAME_OFFSET(OurStruct, TheirStruct, member) \
    static_assert(offsetof(OurStruct, member) == offsetof(TheirStruct, member), #TheirStruct "::" #member)
