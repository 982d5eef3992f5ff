// The field table that top's screen, CSV log and JSON share.
#include <gtest/gtest.h>

#include <set>

#include "monitor/top_fields.hpp"
#include "monitor/top_output.hpp"

using namespace gpuvet;

TEST(TopFields, KeysAreUniqueAndNamedLikeNvidiaSmi) {
    std::set<std::string_view> seen;
    for (const auto& f : top_fields()) EXPECT_TRUE(seen.insert(f.key).second) << f.key;
    for (const char* k :
         {"index", "name", "uuid", "pci.bus_id", "utilization.gpu", "utilization.memory", "memory.total", "memory.used",
          "power.draw", "power.limit", "temperature.gpu", "temperature.memory", "clocks.sm", "clocks.mem",
          "pcie.link.gen.current", "clocks_event_reasons.active"})
        EXPECT_TRUE(seen.count(k)) << k;
    EXPECT_EQ(top_field("memory.used").unit, "MiB");
    EXPECT_THROW(top_field("no.such"), std::logic_error);
}

TEST(TopFields, AbsentIsEmptyNotZeroAndTheCsvHeaderNamesUnits) {
    MonitoredGpu g;
    g.index = 2;
    GpuReading r;
    r.sample.power_draw_w = 72.5;
    r.sample.temperature_c = Fact<int>::absent("GPU is lost");
    GpuView v{g, r};
    FieldValue t = top_field("temperature.gpu").get(v);
    EXPECT_FALSE(t.present());
    EXPECT_EQ(t.absent_reason, "GPU is lost");
    EXPECT_EQ(field_text(top_field("temperature.gpu"), t), "");
    EXPECT_EQ(field_text(top_field("power.draw"), top_field("power.draw").get(v)), "72.5");
    g.unopened_reason = "nvmlDeviceGetHandleByIndex failed: no permission";
    EXPECT_EQ(top_field("power.draw").get(v).absent_reason, g.unopened_reason);
    EXPECT_EQ(top_field("state").get(v).text.value_or(""), "unopened");
    std::string h = top_csv_header();
    EXPECT_EQ(h.rfind("timestamp,t_s,index,name,", 0), 0u) << h;
    EXPECT_NE(h.find(",power.draw [W],"), std::string::npos) << h;
    EXPECT_NE(h.find(",utilization.gpu [%],"), std::string::npos) << h;
}
