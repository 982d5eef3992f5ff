// The history schema: migration from the first schema, and a newer one refused.
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

TEST(HistorySchema, MigratesFromTheFirstSchema) {
    TempDb t;
    {
        Database db(t.file, true, kBusyTimeoutMs);
        migrate(db, 1);
        ASSERT_EQ(schema_version(db), 1);
        // A run as the first schema stored it.
        db.exec(
            "INSERT INTO boxes(id, name, first_seen, last_seen) VALUES(1, 'box-00000001', '2026-10-01T00:00:00Z', "
            "'2026-10-01T00:00:00Z');"
            "INSERT INTO box_ids VALUES(1, 'hostname', 'old-node');"
            "INSERT INTO gpus(id, key, uuid, serial, name, first_seen, last_seen) VALUES(1, 'GPU-1650000000001', "
            "'GPU-1650000000001', '1650000000001', 'H100', '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z');"
            "INSERT INTO runs VALUES(1, 'abcdef0123456789', 1, 'check', '2026-10-01T00:00:00Z', "
            "'2026-10-01T00:05:00Z', 'PASS', 0, 'old-node', '570.86.15', '0.1.0', 'recorded');"
            "INSERT INTO run_gpus VALUES(1, 1, 0, '00000000:0a:00.0', 'H100', NULL, 'h100-sxm-80gb', 'PASS');"
            "INSERT INTO figures VALUES(1, 1, 'gpu.memory_bandwidth.copy_gbps', 3005, 'GB/s', 3350, 2345, NULL);");
    }
    Store st(t.file, false);  // opening migrates
    EXPECT_EQ(schema_version(st.db()), kDatabaseVersion);
    EXPECT_EQ(count(st.db(), "findings"), 0);
    auto points = trend(st.db(), "gpu.memory_bandwidth.copy_gbps", find_gpu(st.db(), "1650000000001"), std::nullopt);
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].value, 3005);
    // The old run still anchors the box: the same GPU under a new hostname joins it.
    BoxSpec b;
    b.serials = {"1650000000001"};
    EXPECT_EQ(record(st, b).box, "box-00000001");
}

TEST(HistorySchema, RefusesASchemaFromANewerGpuvet) {
    TempDb t;
    {
        Database db(t.file, true, kBusyTimeoutMs);
        db.exec("PRAGMA user_version = 99");
    }
    try {
        Store st(t.file, false);
        FAIL() << "opened a schema 99 database";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("schema version 99, newer than this gpuvet's"), std::string::npos);
    }
}

}  // namespace
}  // namespace gpuvet
