// The firmware identifiers a box is known by: placeholders identify nothing.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "history/diff.hpp"
#include "history/drift_input.hpp"
#include "history/queries.hpp"
#include "history/schema.hpp"
#include "history/store.hpp"
#include "host/persistent_ids.hpp"
#include "support/history_fixtures.hpp"

namespace gpuvet {
namespace {

using namespace history;
using test::at_day;
using test::box_report;
using test::BoxSpec;
using test::count;
using test::integrity;
using test::record;
using test::TempDb;

TEST(PersistentIds, FirmwarePlaceholdersIdentifyNothing) {
    for (const char* filler : {"To be filled by O.E.M.", "Default string", "00000000-0000-0000-0000-000000000000",
                               "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "Not Specified", "  ", "System Serial Number"})
        EXPECT_FALSE(meaningful_firmware_id(filler)) << filler;
    EXPECT_EQ(meaningful_firmware_id(" 4c4c4544-0042-3510-8051-b3c04f4d4e32 ").value_or(""),
              "4c4c4544-0042-3510-8051-b3c04f4d4e32");
}

}  // namespace
}  // namespace gpuvet
