// The firmware identifiers a box is known by: placeholders identify nothing.
#include <gtest/gtest.h>

#include "host/persistent_ids.hpp"

namespace gpuvet {
namespace {

TEST(PersistentIds, FirmwarePlaceholdersIdentifyNothing) {
    for (const char* filler : {"To be filled by O.E.M.", "Default string", "00000000-0000-0000-0000-000000000000",
                               "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "Not Specified", "  ", "System Serial Number"})
        EXPECT_FALSE(meaningful_firmware_id(filler)) << filler;
    EXPECT_EQ(meaningful_firmware_id(" 4c4c4544-0042-3510-8051-b3c04f4d4e32 ").value_or(""),
              "4c4c4544-0042-3510-8051-b3c04f4d4e32");
}

}  // namespace
}  // namespace gpuvet
