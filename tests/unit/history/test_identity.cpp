// Which box a run belongs to: the identity rules in their order.
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

TEST(HistoryIdentity, MatchesByHalfTheGpusThenFirmwareIdsButNeverByHostnameAlone) {
    BoxEvidence a{1, {"GPU-1", "GPU-2", "GPU-3", "GPU-4"}, {"uuid-a"}, {}, {}, {"a"}};
    BoxEvidence b{2, {"GPU-5"}, {"uuid-b"}, {}, {"node17"}, {"b"}};
    // Half the GPUs are enough; fewer are not.
    EXPECT_EQ(match_box({{"GPU-1", "GPU-2", "GPU-8", "GPU-9"}, {}, {}, {}, {}}, {a, b})->by, "GPUs");
    EXPECT_FALSE(match_box({{"GPU-1", "GPU-7", "GPU-8", "GPU-9"}, {}, {}, {}, {}}, {a, b}));
    // Every GPU replaced in the same chassis: the firmware says which.
    auto m = match_box({{"GPU-7"}, std::string("uuid-a"), {}, {}, {}}, {a, b});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->id, 1);
    EXPECT_EQ(m->by, "SMBIOS system UUID");
    EXPECT_EQ(match_box({{"GPU-7"}, {}, {}, std::string("node17"), {}}, {a, b})->id, 2);
    // A hostname alone speaks only for host-only runs.
    EXPECT_FALSE(match_box({{"GPU-7"}, {}, {}, {}, std::string("a")}, {a, b}));
}

}  // namespace
}  // namespace gpuvet
