// order.gpu_memory across the GPU lineup: the size sold against the size ordered.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/runner.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_nvlink.hpp"
#include "gpu/identify.hpp"
#include "support/inventory_fixtures.hpp"
#include "support/lineup_cards.hpp"
#include "order/order.hpp"
#include "checks/order_verify.hpp"
#include "specs/driver_memory.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

TEST(OrderMemory, SkuSoldWithTheOrderedSizeFulfilsIt) {
    // The defect: "4x L40S" failed order.gpu_memory with 44.99 GiB "less than the 48 GiB ordered".
    std::vector<GpuInfo> box = {l40s(46068, true, 0), l40s(46068, true, 1)};
    CheckResult r = order_memory(box, "2x L40S");
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(order_memory(box, "48GB VRAM").verdict, Verdict::Pass);
    EXPECT_EQ(order_memory({card("NVIDIA H200", 0x2335u, 132, 143771, true)}, "141GB VRAM").verdict, Verdict::Pass);
    EXPECT_EQ(order_memory({card("NVIDIA B200", 0x2901u, 148, 183359, true)}, "1x B200").verdict, Verdict::Pass);
}

TEST(OrderMemory, ShortCardsFail) {
    // A 24 GB card (an L4, identified and matching its SKU) ordered as 48 GB.
    CheckResult r = order_memory({card("NVIDIA L4", 0x27b8u, 58, 23034, true)}, "48GB VRAM");
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("GPU 0"), std::string::npos) << r.summary;
    // An 80GB SKU showing 40: its memory does not match its SKU, so the rule for 80 GiB decides.
    EXPECT_EQ(order_memory({card("NVIDIA A100-SXM4-80GB", 0x20b2u, 108, 40960, true)}, "1x A100 SXM4 80GB").verdict,
              Verdict::Fail);
    // The L40S box with one card short.
    std::vector<GpuInfo> box = {l40s(46068, true, 0), l40s(23028, true, 1)};
    CheckResult b = order_memory(box, "2x L40S");
    EXPECT_EQ(b.verdict, Verdict::Fail);
    EXPECT_NE(b.summary.find("GPU 1 has less"), std::string::npos) << b.summary;
}

TEST(OrderMemory, UnknownCardHeldToTheRule) {
    GpuInfo mystery = card("NVIDIA Mystery 48", 0x9999u, 100, 46068, true);
    EXPECT_EQ(order_memory({mystery}, "48GB VRAM").verdict, Verdict::Pass);
    mystery.memory_total_bytes = std::uint64_t(23028) << 20;
    EXPECT_EQ(order_memory({mystery}, "48GB VRAM").verdict, Verdict::Fail);
}
