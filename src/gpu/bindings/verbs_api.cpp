#include "gpu/bindings/verbs_api.hpp"

#include "gpu/bindings/dynlib.hpp"

namespace gpuvet {

namespace {

using A = VerbsApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <auto M>
constexpr void (*set)(VerbsApi&, void*, const char*, DriverLib*) = &assign_member<M, VerbsApi>;

// Freeing the device list is the library's free() of its own memory, which never waits on a device:
// stored unwrapped (the deadline's wrapper holds a status to return, and this returns nothing).
void set_free_list(VerbsApi& api, void* p, const char*, DriverLib*) {
    api.ibv_free_device_list = reinterpret_cast<ibv::free_device_list_fn>(p);
}

// The exported names (IBVERBS_1.1); verbs.h's macros of the same names call these.
const SymbolEntry<VerbsApi> kTable[] = {
    {{"ibv_get_device_list"}, R, set<&A::ibv_get_device_list>},
    {{"ibv_free_device_list"}, R, set_free_list},
    {{"ibv_get_device_name"}, R, set<&A::ibv_get_device_name>},
    {{"ibv_open_device"}, R, set<&A::ibv_open_device>},
    {{"ibv_close_device"}, R, set<&A::ibv_close_device>},
    {{"ibv_alloc_pd"}, R, set<&A::ibv_alloc_pd>},
    {{"ibv_dealloc_pd"}, R, set<&A::ibv_dealloc_pd>},
    {{"ibv_reg_mr"}, R, set<&A::ibv_reg_mr>},
    {{"ibv_reg_dmabuf_mr"}, O, set<&A::ibv_reg_dmabuf_mr>},
    {{"ibv_dereg_mr"}, R, set<&A::ibv_dereg_mr>},
    {{"ibv_create_cq"}, R, set<&A::ibv_create_cq>},
    {{"ibv_destroy_cq"}, R, set<&A::ibv_destroy_cq>},
    {{"ibv_create_qp"}, R, set<&A::ibv_create_qp>},
    {{"ibv_modify_qp"}, R, set<&A::ibv_modify_qp>},
    {{"ibv_destroy_qp"}, R, set<&A::ibv_destroy_qp>},
    {{"ibv_query_port"}, R, set<&A::ibv_query_port>},
    {{"ibv_query_gid"}, R, set<&A::ibv_query_gid>},
};

}  // namespace

std::span<const SymbolEntry<VerbsApi>> verbs_symbol_table() { return kTable; }

VerbsApi VerbsApi::load() {
    VerbsApi api;
    DynLib lib = DynLib::open(kEnvLibVerbs, {"libibverbs.so.1"});
    if (!lib) {
        api.error = "no libibverbs (" + lib.error() + "): install libibverbs1 and ibverbs-providers (rdma-core)";
        return api;
    }
    api.path = lib.path();
    api.symbols = resolve_symbols<VerbsApi>(
        verbs_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); },
        &driver_lib("libibverbs", GpuFrom::CurrentCtx));
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = api.path + " lacks " + names;
    }
    return api;
}

}  // namespace gpuvet
