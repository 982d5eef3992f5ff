// Identity, order memory and NVLink across the GPU lineup: driver memory per SKU and ECC state
// (specs/driver_memory), the wording of identity findings, and NVLink judged against the box.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/runner.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_nvlink.hpp"
#include "gpu/identify.hpp"
#include "support/inventory_fixtures.hpp"
#include "order/order.hpp"
#include "checks/order_verify.hpp"
#include "specs/driver_memory.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

namespace {

GpuInfo card(const char* name, std::uint32_t id, int sms, std::uint64_t mib, std::optional<bool> ecc, int index = 0) {
    GpuInfo g = healthy_h100(index);
    g.name = std::string(name);
    g.pci_device_id = id;
    g.sm_count = sms;
    g.memory_total_bytes = mib << 20;
    if (ecc) g.ecc_enabled = *ecc;
    else g.ecc_enabled = Fact<bool>::absent("not supported");
    g.nvlinks.clear();
    return g;
}
GpuInfo l40s(std::uint64_t mib, std::optional<bool> ecc = true, int index = 0) {
    return card("NVIDIA L40S", 0x26b9u, 142, mib, ecc, index);
}

const GpuSpec& spec(const char* key) { return *spec_db().by_key(key); }

CheckResult identity(const GpuInfo& g) {
    Inventory inv;
    inv.gpus.push_back(g);
    Fixture f(inv);
    CheckList list;
    list.push_back(std::make_unique<GpuIdentityCheck>());
    run_checks(list, f.ctx());
    return f.report.checks.at(0);
}

CheckResult order_memory(const std::vector<GpuInfo>& gpus, const char* expect) {
    Inventory inv;
    inv.gpus = gpus;
    Fixture f(inv);
    Order o = parse_expect(expect, spec_db());
    for (auto& r : verify_gpu_items(o, f.ctx()))
        if (r.key == "order.gpu_memory") return r;
    throw std::runtime_error("no order.gpu_memory");
}

}  // namespace

// --- what the driver reports, per SKU and ECC state -----------------------------------------

TEST(DriverMemory, PublishedFiguresForTheEccState) {
    // L40S: 46068 MiB with ECC on (published); ECC off has no published figure: the rule, 48 GiB.
    auto on = expected_driver_memory(spec("l40s-48gb"), true);
    EXPECT_DOUBLE_EQ(on.expected_mib, 46068);
    EXPECT_NE(on.basis.find("published"), std::string::npos) << on.basis;
    auto off = expected_driver_memory(spec("l40s-48gb"), false);
    EXPECT_DOUBLE_EQ(off.expected_mib, 49152);
    EXPECT_NE(off.basis.find("rule"), std::string::npos) << off.basis;
    // HBM: ECC does not change the capacity, and the state does not matter.
    EXPECT_DOUBLE_EQ(expected_driver_memory(spec("h100-sxm5-80gb"), false).expected_mib, 81559);
    EXPECT_DOUBLE_EQ(expected_driver_memory(spec("h200-sxm-141gb"), std::nullopt).expected_mib, 143771);
    EXPECT_DOUBLE_EQ(expected_driver_memory(spec("b200-180gb"), true).expected_mib, 183359);
    // Unknown ECC state on GDDR: either state's figure.
    auto either = expected_driver_memory(spec("a10"), std::nullopt);
    EXPECT_LT(either.low_mib, 23028);
    EXPECT_GT(either.high_mib, 24576);
}

TEST(DriverMemory, RuleMatchesThePublishedFigures) {
    // The fallback rule lands within the tolerance of every published figure in the database.
    int checked = 0;
    for (const GpuSpec& s : spec_db().all()) {
        for (bool ecc : {true, false}) {
            const std::optional<int>& pub = (ecc || !ecc_changes_capacity(s.memory_type)) ? s.driver_memory_ecc_on_mib
                                                                                          : s.driver_memory_ecc_off_mib;
            if (!pub) continue;
            GpuSpec bare = s;
            bare.driver_memory_ecc_on_mib.reset();
            bare.driver_memory_ecc_off_mib.reset();
            auto rule = expected_driver_memory(bare, ecc);
            EXPECT_GE(*pub, rule.low_mib) << s.key;
            EXPECT_LE(*pub, rule.high_mib) << s.key;
            ++checked;
        }
    }
    EXPECT_GE(checked, 15);
}

TEST(DriverMemory, DatabaseRefusesImpossibleFigures) {
    auto error_of = [](const char* toml) {
        SpecDb db = SpecDb::embedded();
        try {
            db.merge_toml(toml, "x.toml");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(
        error_of("[[gpu]]\nkey = \"h100-sxm5-80gb\"\ndriver_memory_ecc_off_mib = 81559\n").find("ECC does not change"),
        std::string::npos);
    EXPECT_NE(error_of("[[gpu]]\nkey = \"l40s-48gb\"\ndriver_memory_ecc_on_mib = 23028\n").find("does not fit"),
              std::string::npos);
    EXPECT_NE(
        error_of("[[gpu]]\nkey = \"x\"\nname = \"X\"\narchitecture = \"A\"\ncompute_capability = \"8.0\"\n"
                 "memory_size_gib = 24\nmemory_type = \"GDDR6\"\nsource = \"s\"\ndriver_memory_ecc_on_mib = 23028\n")
            .find("driver_memory_source"),
        std::string::npos);
}

// --- gpu.identity ---------------------------------------------------------------------------

TEST(LineupIdentity, HealthyL40sWithEccOnPasses) {
    // The defect: 46068 MiB (44.99 GiB) was held to 48 GiB less 4% and failed.
    CheckResult r = identity(l40s(46068));
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(identity(l40s(49140, false)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(l40s(46068, std::nullopt)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA A10", 0x2236u, 72, 23028, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA L4", 0x27b8u, 58, 23034, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("Tesla T4", 0x1eb8u, 40, 15360, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA H200", 0x2335u, 132, 143771, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA B200", 0x2901u, 148, 183359, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA H20", 0x2329u, 78, 97871, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA GeForce RTX 4090", 0x2684u, 128, 24564, false)).verdict, Verdict::Pass);
    // An A100 40GB on an R470 driver, 1.04% under today's 40960.
    EXPECT_EQ(identity(card("NVIDIA A100-SXM4-40GB", 0x20b0u, 108, 40536, true)).verdict, Verdict::Pass);
    // CUDA's total (NVML unreadable), 1.52% under nvidia-smi's 40960.
    EXPECT_EQ(identity(card("NVIDIA A100-SXM4-40GB", 0x20b0u, 108, 40339, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA GeForce RTX 5090", 0x2b85u, 170, 32607, std::nullopt)).verdict, Verdict::Pass);
}

TEST(LineupIdentity, CardShortOfMemoryStillFails) {
    CheckResult r = identity(l40s(23028));  // a 24 GB card sold as an L40S 48GB
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("GPU 0 claims to be an L40S 48GB"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("23028 MiB"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("46068 MiB"), std::string::npos) << r.summary;
    // The ECC-on figure while the driver says ECC is off: 1/16 missing.
    EXPECT_EQ(identity(l40s(46068, false)).verdict, Verdict::Fail);
    // An 80GB SKU showing 40.
    CheckResult a = identity(card("NVIDIA A100-SXM4-80GB", 0x20b2u, 108, 40960, true));
    EXPECT_EQ(a.verdict, Verdict::Fail);
    EXPECT_NE(a.summary.find("smaller or cut-down"), std::string::npos) << a.summary;
    // More memory than the SKU has: a different part.
    CheckResult more = identity(card("NVIDIA L4", 0x27b8u, 58, 46068, true));
    EXPECT_EQ(more.verdict, Verdict::Fail);
    EXPECT_NE(more.summary.find("a different part"), std::string::npos) << more.summary;
}

TEST(LineupIdentity, MessageSaysWhatItClaimsAndWhatItsIdsShow) {
    // The name says H100 SXM, the PCI device id is an H800's.
    GpuInfo g = healthy_h100(4);
    g.pci_device_id = 0x2324u;
    CheckResult r = identity(g);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(
        r.summary.rfind("GPU 4 claims to be an H100 SXM5 80GB (its name 'NVIDIA H100 80GB HBM3') but its PCI device id "
                        "0x2324 is an H800 SXM5 80GB",
                        0),
        0u)
        << r.summary;
    // An RTX 4090 whose name string says A100.
    GpuInfo rtx = card("NVIDIA A100-SXM4-80GB", 0x2684u, 128, 24564, false);
    CheckResult r2 = identity(rtx);
    EXPECT_EQ(r2.verdict, Verdict::Fail);
    EXPECT_NE(r2.summary.find("claims to be an A100 SXM4 80GB"), std::string::npos) << r2.summary;
    EXPECT_NE(r2.summary.find("0x2684 is a GeForce RTX 4090"), std::string::npos) << r2.summary;
    // SM count: the claim and what the count shows.
    GpuInfo cut = healthy_h100(1);
    cut.sm_count = 114;
    CheckResult r3 = identity(cut);
    EXPECT_NE(r3.summary.find("GPU 1 claims to be an H100 SXM5 80GB"), std::string::npos) << r3.summary;
    EXPECT_NE(r3.summary.find("has 114 SMs where an H100 SXM5 80GB has 132: a cut-down part"), std::string::npos)
        << r3.summary;
}

TEST(LineupIdentity, AnIsUsedBeforeAVowelSoundAndAElsewhere) {
    EXPECT_EQ(with_article("H100 SXM5 80GB"), "an H100 SXM5 80GB");
    EXPECT_EQ(with_article("L40S 48GB"), "an L40S 48GB");
    EXPECT_EQ(with_article("RTX A6000 48GB"), "an RTX A6000 48GB");
    EXPECT_EQ(with_article("A10 24GB"), "an A10 24GB");
    EXPECT_EQ(with_article("B200 180GB (HGX)"), "a B200 180GB (HGX)");
    EXPECT_EQ(with_article("GeForce RTX 4090"), "a GeForce RTX 4090");
    EXPECT_EQ(with_article("Tesla T4"), "a Tesla T4");
}

// --- order.gpu_memory -----------------------------------------------------------------------

TEST(LineupOrderMemory, SkuSoldWithTheOrderedSizeFulfilsIt) {
    // The defect: "4x L40S" failed order.gpu_memory with 44.99 GiB "less than the 48 GiB ordered".
    std::vector<GpuInfo> box = {l40s(46068, true, 0), l40s(46068, true, 1)};
    CheckResult r = order_memory(box, "2x L40S");
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(order_memory(box, "48GB VRAM").verdict, Verdict::Pass);
    EXPECT_EQ(order_memory({card("NVIDIA H200", 0x2335u, 132, 143771, true)}, "141GB VRAM").verdict, Verdict::Pass);
    EXPECT_EQ(order_memory({card("NVIDIA B200", 0x2901u, 148, 183359, true)}, "1x B200").verdict, Verdict::Pass);
}

TEST(LineupOrderMemory, ShortCardsFail) {
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

TEST(LineupOrderMemory, UnknownCardHeldToTheRule) {
    GpuInfo mystery = card("NVIDIA Mystery 48", 0x9999u, 100, 46068, true);
    EXPECT_EQ(order_memory({mystery}, "48GB VRAM").verdict, Verdict::Pass);
    mystery.memory_total_bytes = std::uint64_t(23028) << 20;
    EXPECT_EQ(order_memory({mystery}, "48GB VRAM").verdict, Verdict::Fail);
}

// --- gpu.nvlink against the box --------------------------------------------------------------

TEST(LineupNvlink, LoneSxmGpuWithUntrainedLinksPasses) {
    Inventory inv = healthy_box(1);
    for (auto& l : inv.gpus[0].nvlinks) l.active = false;
    Fixture f(inv);
    CheckList list;
    list.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list, f.ctx());
    const CheckResult& r = f.report.checks.at(0);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_NE(r.summary.find("only GPU"), std::string::npos) << r.summary;
    EXPECT_FALSE(r.details.empty() && r.findings.empty());
}

TEST(LineupNvlink, LoneSxmGpuWhoseLinksCannotBeReadPasses) {
    Inventory inv = healthy_box(1);
    inv.gpus[0].nvlinks.clear();
    inv.gpus[0].nvlink_absent_reason = "not supported by this driver";
    Fixture f(inv);
    CheckList list;
    list.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list, f.ctx());
    EXPECT_EQ(f.report.checks.at(0).verdict, Verdict::Pass) << f.report.checks.at(0).summary;
    // With peers it stays a warning: the links may matter and were not read.
    Fixture two(healthy_box(2));
    two.gpu(1).nvlinks.clear();
    two.gpu(1).nvlink_absent_reason = "not supported by this driver";
    CheckList list2;
    list2.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list2, two.ctx());
    EXPECT_EQ(two.report.checks.at(1).verdict, Verdict::Warn);
}

TEST(LineupNvlink, GpuWithLinksDownInAnHgxBoxFails) {
    Fixture f(healthy_box(8));
    for (auto& l : f.gpu(3).nvlinks) l.active = false;
    CheckList list;
    list.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list, f.ctx());
    for (auto& r : f.report.checks) EXPECT_EQ(r.verdict, r.gpu == 3 ? Verdict::Fail : Verdict::Pass) << r.summary;
}

TEST(LineupNvlink, NvlinkOrderedWithOneGpuSaysWhatItMeans) {
    Inventory inv = healthy_box(1);
    for (auto& l : inv.gpus[0].nvlinks) l.active = false;
    Fixture f(inv);
    Order o = parse_expect("1x H100 SXM, nvlink", spec_db());
    for (auto& r : verify_gpu_items(o, f.ctx())) {
        if (r.key != "order.nvlink") continue;
        EXPECT_EQ(r.verdict, Verdict::Warn);
        EXPECT_NE(r.summary.find("one GPU"), std::string::npos) << r.summary;
        EXPECT_NE(r.summary.find("between GPUs"), std::string::npos) << r.summary;
        return;
    }
    FAIL() << "no order.nvlink";
}
