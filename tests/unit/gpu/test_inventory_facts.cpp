// The inventory reaches the printers as plain facts: typed values, driver codes in words.
#include <gtest/gtest.h>

#include "gpu/inventory.hpp"
#include "gpu/inventory_facts.hpp"
#include "support/inventory_fixtures.hpp"
#include "report/inventory_view.hpp"

using namespace gpuvet;

namespace {

const InventoryFact& fact(const InventoryGpu& g, const std::string& key) {
    for (const auto& f : g.facts)
        if (f.key == key) return f;
    throw std::runtime_error("no fact " + key);
}

Inventory one_gpu(GpuInfo g) {
    Inventory inv;
    inv.cuda_present = inv.nvml_present = true;
    inv.gpus.push_back(std::move(g));
    return inv;
}

}  // namespace

TEST(NvLinkVersion, CodesAreNamedUnknownCodesShown) {
    EXPECT_EQ(nvlink_version_name(1), "1.0");
    EXPECT_EQ(nvlink_version_name(4), "3.0");
    EXPECT_EQ(nvlink_version_name(6), "4.0");
    EXPECT_EQ(nvlink_version_name(8), "6.0");
    EXPECT_EQ(nvlink_version_name(0), "code 0");
    EXPECT_EQ(nvlink_version_name(9), "code 9");
}

TEST(InventoryFacts, ClockEventReasonsArriveInWords) {
    GpuInfo g = gpuvet::testing::healthy_h100(0);
    g.clock_event_reasons = std::uint64_t(0x4 | 0x8);
    const InventoryFacts set = inventory_facts_of(one_gpu(g));
    const InventoryFact& f = fact(set.gpus[0], "clock_event_reasons");
    ASSERT_TRUE(f.value);
    EXPECT_EQ(std::get<std::uint64_t>(*f.value), 0xCu);  // the JSON keeps the mask
    ASSERT_TRUE(f.decoded);
    EXPECT_EQ(*f.decoded, (std::vector<std::string>{"SW_POWER_CAP", "HW_SLOWDOWN"}));

    g.clock_event_reasons = Fact<std::uint64_t>::absent("GPU is lost");
    const InventoryFacts unread = inventory_facts_of(one_gpu(g));
    const InventoryFact& absent = fact(unread.gpus[0], "clock_event_reasons");
    EXPECT_FALSE(absent.value);
    EXPECT_EQ(absent.value.absent_reason, "GPU is lost");
    ASSERT_TRUE(absent.decoded);  // still a bit set: the JSON writes an empty "decoded"
    EXPECT_TRUE(absent.decoded->empty());
    EXPECT_FALSE(fact(unread.gpus[0], "sm_count").decoded);
}

TEST(InventoryFacts, ValuesKeepTheirTypesAndOrder) {
    GpuInfo g = gpuvet::testing::healthy_h100(3);
    g.power_limit_w = 700.0;
    InventoryGpu ig = inventory_facts_of(one_gpu(g)).gpus[0];
    EXPECT_EQ(ig.index, 3);
    EXPECT_EQ(ig.facts.front().key, "cuda_ordinal");
    EXPECT_EQ(std::get<std::string>(*fact(ig, "name").value), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(std::get<std::uint64_t>(*fact(ig, "pci_device_id").value), 0x2330u);
    EXPECT_EQ(std::get<std::int64_t>(*fact(ig, "sm_count").value), 132);
    EXPECT_TRUE(std::get<bool>(*fact(ig, "ecc_enabled").value));
    EXPECT_DOUBLE_EQ(std::get<double>(*fact(ig, "power_limit_w").value), 700.0);
    EXPECT_EQ(fact(ig, "power_limit_w").label, "Power limit");
}

TEST(InventoryFacts, NvLinkVersionsArriveInWords) {
    GpuInfo g = gpuvet::testing::healthy_h100(0);
    NvLinkInfo known;
    known.link = 0;
    known.active = true;
    known.version = 6;
    NvLinkInfo unread;
    unread.link = 1;
    unread.active = true;
    g.nvlinks = {known, unread};
    InventoryGpu ig = inventory_facts_of(one_gpu(g)).gpus[0];
    ASSERT_EQ(ig.nvlinks.size(), 2u);
    EXPECT_EQ(ig.nvlinks[0].version_name, "4.0");
    EXPECT_EQ(*ig.nvlinks[0].version, 6);  // the JSON keeps the code
    EXPECT_EQ(ig.nvlinks[1].version_name, "?");
}

TEST(InventoryView, PrintsTheDecodedWordsNotTheMask) {
    InventoryFacts inv;
    inv.cuda_present = true;
    InventoryGpu g;
    g.facts.push_back({"clock_event_reasons", "Clock event reasons", FactValue(std::uint64_t(0xC)),
                       std::vector<std::string>{"SW_POWER_CAP", "HW_SLOWDOWN"}});
    g.facts.push_back({"clock_sm_mhz", "SM clock", FactValue(std::int64_t(1980)), std::nullopt});
    g.facts.push_back({"fan_percent", "Fan", Fact<FactValue>::absent("not supported"), std::nullopt});
    inv.gpus.push_back(g);
    inv.gpus.push_back(g);
    inv.gpus[1].facts[0].decoded->clear();
    std::string out = render_inventory(inv, MachineInfo{}, Style{false, 100});
    EXPECT_NE(out.find("Clock event reasons            SW_POWER_CAP, HW_SLOWDOWN\n"), std::string::npos) << out;
    EXPECT_NE(out.find("Clock event reasons            none\n"), std::string::npos) << out;
    EXPECT_NE(out.find("SM clock                       1980 MHz\n"), std::string::npos) << out;
    EXPECT_NE(out.find("Fan                            — (not supported)\n"), std::string::npos) << out;

    Json j = inventory_to_json(inv, MachineInfo{});
    EXPECT_EQ(j["gpus"][0]["clock_event_reasons"]["value"], 12);
    EXPECT_EQ(j["gpus"][0]["clock_event_reasons"]["decoded"], Json::array({"SW_POWER_CAP", "HW_SLOWDOWN"}));
    EXPECT_FALSE(j["gpus"][0]["clock_sm_mhz"].contains("decoded"));
}
