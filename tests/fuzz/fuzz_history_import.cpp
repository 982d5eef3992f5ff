// Fuzzes `gpuvet history import`: any text either yields a Report (the report reader) or raises
// gpuvet::Error; a Report it yields is recorded twice into an in-memory history, the second time
// as the same entry, and read back by the history's queries.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "history/queries.hpp"
#include "history/store.hpp"
#include "core/report_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        gpuvet::Report r = gpuvet::parse_report(text, "fuzz.json");
        gpuvet::history::Store store(":memory:", true);
        auto rec = gpuvet::history::record_of(r);
        if (!store.record(rec, "imported").added) std::abort();
        if (store.record(rec, "imported").added) std::abort();  // the same report twice is one entry
        (void)gpuvet::history::list_boxes(store.db());
        (void)gpuvet::history::list_gpus(store.db());
    } catch (const gpuvet::Error&) {}
    return 0;
}
