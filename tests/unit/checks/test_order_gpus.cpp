// The order's GPU items judged from GPU lists directly (order_gpus.hpp).
#include <gtest/gtest.h>

#include "checks/order_gpus.hpp"
#include "support/inventory_fixtures.hpp"
#include "order/order.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

namespace {

std::vector<GpuInfo> h100s(int n) {
    std::vector<GpuInfo> v;
    for (int i = 0; i < n; ++i) v.push_back(healthy_h100(i));
    return v;
}

}  // namespace

TEST(OrderGpuItems, CountPassesOnlyWhenExact) {
    EXPECT_EQ(verify_gpu_count(2, h100s(2), std::nullopt).verdict, Verdict::Pass);
    CheckResult r = verify_gpu_count(8, h100s(2), std::nullopt);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(r.summary, "2 GPUs where 8 were ordered.");
    CheckResult none = verify_gpu_count(8, {}, std::string("no NVIDIA driver found"));
    EXPECT_EQ(none.verdict, Verdict::Fail);
    EXPECT_EQ(none.summary, "Ordered 8 GPUs, but no NVIDIA driver found.");
    EXPECT_FALSE(none.measurements.at(0).present());
}

TEST(OrderGpuItems, ModelNamesTheFirstWrongGpu) {
    Order o = parse_expect("2x H100", spec_db());
    EXPECT_EQ(verify_gpu_model(o, h100s(2), std::nullopt, spec_db()).verdict, Verdict::Pass);
    std::vector<GpuInfo> gpus = h100s(2);
    gpus[1].name = std::string("Mystery GPU");
    gpus[1].pci_device_id = 0xffffu;
    CheckResult r = verify_gpu_model(o, gpus, std::nullopt, spec_db());
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("1 of 2 GPUs are not the ordered"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("GPU 1 is 'Mystery GPU' (not in the spec database)"), std::string::npos) << r.summary;
    EXPECT_DOUBLE_EQ(r.measurements.at(0).value.value_or(-1), 1);
}

TEST(OrderGpuItems, NvlinkOnOneGpuWarnsAndALinklessGpuFails) {
    EXPECT_EQ(verify_nvlink(h100s(2), std::nullopt).verdict, Verdict::Pass);
    EXPECT_EQ(verify_nvlink(h100s(1), std::nullopt).verdict, Verdict::Warn);
    std::vector<GpuInfo> gpus = h100s(3);
    for (auto& l : gpus[2].nvlinks) l.active = false;
    CheckResult r = verify_nvlink(gpus, std::nullopt);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(r.summary, "NVLink was ordered, but GPU 2 has no active NVLink link.");
    EXPECT_EQ(verify_nvlink({}, std::nullopt).verdict, Verdict::Fail);
}

TEST(OrderGpuItems, MigNeedsEveryGpuInMigMode) {
    std::vector<GpuInfo> gpus = h100s(2);
    for (auto& g : gpus) g.mig_enabled = true;
    CheckResult ok = verify_mig(gpus, std::nullopt);
    EXPECT_EQ(ok.verdict, Verdict::Pass);
    EXPECT_DOUBLE_EQ(ok.measurements.at(0).value.value_or(-1), 2);
    gpus[0].mig_enabled = false;
    CheckResult r = verify_mig(gpus, std::nullopt);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(r.summary, "MIG was ordered, but GPU 0 is not in MIG mode.");
}
