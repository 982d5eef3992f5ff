// Order parsing (--expect and order files) and the order.* checks.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/runner.hpp"
#include "support/inventory_fixtures.hpp"
#include "checks/order.hpp"
#include "order/order.hpp"
#include "checks/order_verify.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

namespace {

std::string expect_error(const std::string& text) {
    try {
        parse_expect(text, spec_db());
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        EXPECT_EQ(exit_code_for(e.kind()), 2);
        EXPECT_NE(e.advice().find("8x H100-SXM-80GB"), std::string::npos) << "the accepted forms are shown";
        return e.what();
    }
    ADD_FAILURE() << "no error for: " << text;
    return {};
}

std::string toml_error(const std::string& text) {
    try {
        parse_order_toml(text, "order.toml", spec_db());
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return {};
}

const CheckResult* result(const Report& r, const std::string& key) {
    for (auto& c : r.checks)
        if (c.key == key) return &c;
    return nullptr;
}

Fact<std::uint64_t> tb4(const std::string&) { return std::uint64_t(3'900'000'000'000ull); }

}  // namespace

// --- --expect -------------------------------------------------------------------------------

TEST(ExpectParse, CountAndModelForms) {
    for (const char* text :
         {"8x H100-SXM-80GB", "8 x h100 sxm 80g", "8xH100 SXM", "8 H100 SXM5", "8*h100-sxm", "8× H100 SXM"}) {
        Order o = parse_expect(text, spec_db());
        EXPECT_EQ(o.gpu_count, 8) << text;
        ASSERT_FALSE(o.gpu_skus.empty()) << text;
        EXPECT_EQ(o.gpu_skus.front(), "h100-sxm5-80gb") << text;
    }
}

TEST(ExpectParse, ModelAloneMeansAnyCountAndShortNamesFitSeveralSkus) {
    Order o = parse_expect("H100", spec_db());
    EXPECT_FALSE(o.gpu_count.has_value());
    EXPECT_GT(o.gpu_skus.size(), 1u);  // SXM5, PCIe, NVL...
    EXPECT_EQ(o.gpu_skus.front(), "h100-sxm5-80gb");
    // A model name that starts with digits is not a count.
    Order g = parse_expect("4090", spec_db());
    EXPECT_FALSE(g.gpu_count.has_value());
    EXPECT_EQ(g.gpu_skus.front(), "rtx-4090");
    EXPECT_EQ(parse_expect("2x 4090", spec_db()).gpu_count, 2);
}

TEST(ExpectParse, EveryItemOfAnOrderIsReadWithMemoryTbAsTibAndDiskTbAsDecimal) {
    Order o = parse_expect("8xH100, nvlink, 64 cores, 1TB RAM, 80GB VRAM, 4TB disk, 100G network", spec_db());
    EXPECT_EQ(o.gpu_count, 8);
    EXPECT_EQ(o.nvlink_required, true);
    EXPECT_EQ(o.cpu_cores, 64);
    EXPECT_DOUBLE_EQ(*o.ram_gib, 1024);  // memory TB are TiB
    EXPECT_DOUBLE_EQ(*o.gpu_memory_gib, 80);
    EXPECT_DOUBLE_EQ(*o.disk_gb, 4000);  // disk TB are decimal
    EXPECT_DOUBLE_EQ(*o.network_gbitps, 100);
    EXPECT_FALSE(o.mig_expected.has_value());
    Order p = parse_expect("512GiB memory; 25GbE; 1.92TB ssd; mig", spec_db());
    EXPECT_DOUBLE_EQ(*p.ram_gib, 512);
    EXPECT_DOUBLE_EQ(*p.network_gbitps, 25);
    EXPECT_DOUBLE_EQ(*p.disk_gb, 1920);
    EXPECT_EQ(p.mig_expected, true);
    EXPECT_FALSE(p.gpu_model.has_value());
}

TEST(ExpectParse, BadFormsAreInputErrorsWithTheAcceptedForms) {
    EXPECT_NE(expect_error("").find("nothing to expect"), std::string::npos);
    EXPECT_NE(expect_error("8x").find("which GPU"), std::string::npos);
    EXPECT_NE(expect_error("0x H100").find("between 1 and 1024"), std::string::npos);
    EXPECT_NE(expect_error("99999x H100").find("between 1 and 1024"), std::string::npos);
    EXPECT_NE(expect_error("8x H1OO-ZXM").find("unknown GPU model"), std::string::npos);
    EXPECT_NE(expect_error("1024 RAM").find("give a unit"), std::string::npos);
    EXPECT_NE(expect_error("1 PB RAM").find("unknown size unit"), std::string::npos);
    EXPECT_NE(expect_error("8x H100, 8x A100").find("already given"), std::string::npos);
    EXPECT_NE(expect_error("64 cores, 32 cores").find("already given"), std::string::npos);
    EXPECT_NE(expect_error("6.5 cores").find("whole number"), std::string::npos);
}

// --- order file -----------------------------------------------------------------------------

TEST(OrderToml, EveryKeyIsReadIntoTheOrderWithItsOrigin) {
    Order o = parse_order_toml(
        "gpu_model = \"H100 SXM5 80GB\"\ngpu_count = 8\ngpu_memory_gib = 80\nnvlink_required = true\n"
        "mig_expected = false\ncpu_cores = 64\nram_gib = 1024\ndisk_gb = 3840\nnetwork_gbitps = 100.0\n",
        "order.toml", spec_db());
    EXPECT_EQ(o.gpu_skus, std::vector<std::string>{"h100-sxm5-80gb"});
    EXPECT_EQ(o.gpu_count, 8);
    EXPECT_EQ(o.nvlink_required, true);
    EXPECT_EQ(o.mig_expected, false);
    EXPECT_DOUBLE_EQ(*o.disk_gb, 3840);
    EXPECT_EQ(o.origin, "order.toml");
}

TEST(OrderToml, ErrorsNameFileLineAndColumn) {
    EXPECT_NE(toml_error("gpu_count = 8\ngpu_modle = \"H100\"\n").find("order.toml:2:13: unknown key 'gpu_modle'"),
              std::string::npos);
    EXPECT_NE(toml_error("gpu_count = \"eight\"\n").find("order.toml:1:13: 'gpu_count' must be a whole number"),
              std::string::npos);
    EXPECT_NE(toml_error("gpu_count = 0\n").find("between 1 and 1024"), std::string::npos);
    EXPECT_NE(toml_error("ram_gib = -1\n").find("greater than 0"), std::string::npos);
    EXPECT_NE(toml_error("nvlink_required = 1\n").find("true or false"), std::string::npos);
    EXPECT_NE(toml_error("gpu_model = \"Z9000\"\n").find("order.toml:1:13: unknown GPU model"), std::string::npos);
    EXPECT_NE(toml_error("gpu_count = \n").find("order.toml:1:"), std::string::npos);
    EXPECT_NE(toml_error("").find("no item"), std::string::npos);
    EXPECT_NE(toml_error("[gpu]\ncount = 8\n").find("unknown key 'gpu'"), std::string::npos);
}

// --- order.* checks -------------------------------------------------------------------------

TEST(OrderChecks, NoOrderGivesOneSkipLine) {
    Fixture f;
    CheckList list;
    list.push_back(std::make_unique<OrderCheck>(nullptr, ".", tb4));
    run_checks(list, f.ctx());
    ASSERT_EQ(f.report.checks.size(), 1u);
    EXPECT_EQ(f.report.checks[0].verdict, Verdict::Skip);
    EXPECT_EQ(f.report.checks[0].summary, "no order given: use --expect or --order");
}

TEST(OrderChecks, MatchingOrderPasses) {
    Fixture f;
    Order o = parse_expect("8x H100-SXM-80GB, nvlink, 64 cores, 2TB RAM, 4TB disk", spec_db());
    CheckList list;
    list.push_back(std::make_unique<OrderCheck>(&o, ".", tb4));
    run_checks(list, f.ctx());
    for (const char* k : {"order.gpu_count", "order.gpu_model", "order.gpu_memory", "order.nvlink", "order.cpu_cores",
                          "order.ram", "order.disk"}) {
        const CheckResult* r = result(f.report, k);
        ASSERT_NE(r, nullptr) << k;
        EXPECT_EQ(r->verdict, Verdict::Pass) << k << ": " << r->summary;
        ASSERT_FALSE(r->measurements.empty()) << k;
        ASSERT_TRUE(r->measurements[0].reference.has_value()) << k << " shows what was expected";
    }
    EXPECT_EQ(result(f.report, "order.network"), nullptr) << "items not ordered do not appear";
    f.report.finalize();
    EXPECT_EQ(f.report.exit_code, 0);
}

TEST(OrderChecks, CountMismatchFailsWithExitCode1) {
    Fixture f(healthy_box(7));
    Order o = parse_expect("8x H100", spec_db());
    CheckList list;
    list.push_back(std::make_unique<OrderCheck>(&o, ".", tb4));
    run_checks(list, f.ctx());
    const CheckResult* r = result(f.report, "order.gpu_count");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->verdict, Verdict::Fail);
    EXPECT_EQ(r->summary, "7 GPUs where 8 were ordered.");
    EXPECT_EQ(r->measurements[0].value, 7);
    EXPECT_EQ(r->measurements[0].reference->spec, 8);
    EXPECT_EQ(result(f.report, "order.gpu_model")->verdict, Verdict::Pass);
    f.report.finalize();
    EXPECT_EQ(f.report.exit_code, 1);
}

TEST(OrderChecks, WrongModelAndMemoryFail) {
    Fixture f(healthy_box(2));
    f.gpu(1).name = std::string("NVIDIA H100 PCIe");
    f.gpu(1).pci_device_id = 0x2331u;
    Order strict = parse_expect("2x H100 SXM5 80GB", spec_db());
    auto rs = verify_gpu_items(strict, f.ctx());
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs[1].key, "order.gpu_model");
    EXPECT_EQ(rs[1].verdict, Verdict::Fail);
    EXPECT_NE(rs[1].summary.find("GPU 1 is an H100 PCIe 80GB"), std::string::npos) << rs[1].summary;
    // "H100" alone accepts any H100.
    Order loose = parse_expect("2x H100", spec_db());
    EXPECT_EQ(verify_gpu_items(loose, f.ctx())[1].verdict, Verdict::Pass);
    // Memory per GPU: 94 GiB ordered, 79.6 found.
    Order mem = parse_expect("94GB VRAM", spec_db());
    auto m = verify_gpu_items(mem, f.ctx());
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].key, "order.gpu_memory");
    EXPECT_EQ(m[0].verdict, Verdict::Fail);
}

TEST(OrderChecks, NoDriverButGpusOrderedFails) {
    Fixture f;
    f.report.machine.driver.present = false;
    f.report.machine.driver.absent_reason = "libcuda.so.1 could not be loaded";
    f.inventory = Inventory{};
    Order o = parse_expect("8x H100, 64 cores", spec_db());
    CheckList list;
    list.push_back(std::make_unique<OrderCheck>(&o, ".", tb4));
    run_checks(list, f.ctx());
    const CheckResult* r = result(f.report, "order.gpu_count");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->verdict, Verdict::Fail);
    EXPECT_NE(r->summary.find("no NVIDIA driver found (libcuda.so.1 could not be loaded)"), std::string::npos);
    EXPECT_FALSE(r->measurements[0].present());
    EXPECT_EQ(result(f.report, "order.gpu_model")->verdict, Verdict::Fail);
    EXPECT_EQ(result(f.report, "order.cpu_cores")->verdict, Verdict::Pass);
}

TEST(OrderChecks, NvlinkRequiredButAbsentFails) {
    Fixture f(healthy_box(2));
    for (auto& l : f.gpu(1).nvlinks) l.active = false;
    Order o = parse_expect("nvlink", spec_db());
    auto rs = verify_gpu_items(o, f.ctx());
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].key, "order.nvlink");
    EXPECT_EQ(rs[0].verdict, Verdict::Fail);
    EXPECT_NE(rs[0].summary.find("GPU 1"), std::string::npos);
}

TEST(OrderChecks, HostItemsShortOfTheOrderWarnOrFail) {
    Fixture f;
    Order o = parse_expect("128 cores, 4TB RAM, 8TB disk", spec_db());
    auto rs = verify_host_items(o, f.ctx(), tb4(""), ".");
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs[0].verdict, Verdict::Warn);  // 112 cores, 224 threads: threads sold as cores?
    EXPECT_EQ(rs[1].verdict, Verdict::Fail);  // 2015 GiB of 4096
    EXPECT_EQ(rs[2].verdict, Verdict::Fail);  // 3.9 TB of 8
}

TEST(OrderChecks, ACgroupLimitNarrowerThanTheOrderedCoresFails) {
    Fixture f;
    f.report.machine.cpu_quota = 16;
    EXPECT_EQ(verify_host_items(parse_expect("64 cores", spec_db()), f.ctx(), tb4(""), ".")[0].verdict, Verdict::Fail);
}

// Capacity not readable: a warning with the reason, never a made-up size.
TEST(OrderChecks, UnreadableDiskCapacityWarnsAndIsAbsent) {
    Fixture f;
    auto d = verify_host_items(parse_expect("1TB disk", spec_db()), f.ctx(),
                               Fact<std::uint64_t>::absent("statvfs: No such file"), ".");
    EXPECT_EQ(d[0].verdict, Verdict::Warn);
    EXPECT_FALSE(d[0].measurements[0].present());
}

TEST(OrderChecks, DiskCapacityFromStatvfs) {
    auto cap = filesystem_capacity_bytes(".");
    ASSERT_TRUE(cap.has_value()) << cap.absent_reason;
    EXPECT_GT(*cap, 0u);
    auto none = filesystem_capacity_bytes("/no/such/path/here");
    EXPECT_FALSE(none.has_value());
    EXPECT_NE(none.absent_reason.find("No such file"), std::string::npos);
}

TEST(OrderChecks, NetworkNeedsAMeasurement) {
    Fixture f;
    Order o = parse_expect("100G network", spec_db());
    std::vector<CheckResult> earlier;  // what the runner lets the order check read
    f.context.prior = PriorResults(&earlier, {"host.network"});
    auto rs = verify_host_items(o, f.ctx(), tb4(""), ".");
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].verdict, Verdict::Skip);
    EXPECT_EQ(rs[0].summary.rfind("needs --net-server", 0), 0u);
    CheckResult net;
    net.key = "host.network";
    net.measurements.push_back(Measurement::number("upload_gbitps", "Upload", 94.1, "Gbit/s"));
    net.measurements.push_back(Measurement::number("download_gbitps", "Download", 92.0, "Gbit/s"));
    earlier.push_back(net);
    EXPECT_EQ(verify_host_items(o, f.ctx(), tb4(""), ".")[0].verdict, Verdict::Pass);
    earlier.back().measurements[1].value = 60.0;
    EXPECT_EQ(verify_host_items(o, f.ctx(), tb4(""), ".")[0].verdict, Verdict::Warn);
    earlier.back().measurements[1].value = 9.4;
    EXPECT_EQ(verify_host_items(o, f.ctx(), tb4(""), ".")[0].verdict, Verdict::Fail);
}
