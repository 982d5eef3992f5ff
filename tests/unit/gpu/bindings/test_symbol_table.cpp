// Resolving a vendor library's symbols: the newest name wins, optional symbols may be missing.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/bindings/cuda_api.hpp"
#include "gpu/bindings/nvml_api.hpp"
#include "gpu/inventory.hpp"

using namespace gpuvet;

namespace {
struct MiniApi {
    int (*a)() = nullptr;
    int (*b)() = nullptr;
};
int fn_new() { return 2; }
int fn_old() { return 1; }
const SymbolEntry<MiniApi> kMini[] = {
    {{"a_v2", "a"}, Need::Required, &assign_member<&MiniApi::a, MiniApi>},
    {{"b"}, Need::Optional, &assign_member<&MiniApi::b, MiniApi>},
};
}  // namespace

TEST(SymbolTable, NewestNameWinsAndOptionalMayBeMissing) {
    MiniApi api;
    auto both = [](const char* n) -> void* {
        if (std::string(n) == "a_v2") return reinterpret_cast<void*>(&fn_new);
        if (std::string(n) == "a") return reinterpret_cast<void*>(&fn_old);
        return nullptr;
    };
    auto r = resolve_symbols<MiniApi>(kMini, api, both);
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(api.a(), 2);
    EXPECT_EQ(r.used.at("a_v2"), "a_v2");
    EXPECT_EQ(api.b, nullptr);
    EXPECT_EQ(r.missing_optional, std::vector<std::string>{"b"});

    auto old_only = [](const char* n) -> void* {
        return std::string(n) == "a" ? reinterpret_cast<void*>(&fn_old) : nullptr;
    };
    r = resolve_symbols<MiniApi>(kMini, api, old_only);
    EXPECT_EQ(api.a(), 1);
    EXPECT_EQ(r.used.at("a_v2"), "a");

    r = resolve_symbols<MiniApi>(kMini, api, [](const char*) -> void* { return nullptr; });
    EXPECT_FALSE(r.complete());
    EXPECT_EQ(r.missing_required, std::vector<std::string>{"a_v2"});
    EXPECT_EQ(driver_lacks("nvmlDeviceGetNumaNodeId"), "driver lacks nvmlDeviceGetNumaNodeId");
}
