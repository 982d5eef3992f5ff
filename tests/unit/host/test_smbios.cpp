// SMBIOS type 17 parsing, channel inference and the theoretical rate; tables built in code.
#include <gtest/gtest.h>

#include "checks/run_facts.hpp"

#include <cerrno>
#include <random>

#include "core/context.hpp"
#include "checks/host_memory.hpp"
#include "host/smbios.hpp"
#include "support/smbios_builder.hpp"

#include "support/check_helpers.hpp"

using namespace gpuvet;
using smbios_test::Dimm;

namespace {

MemoryLayout layout_of(const std::vector<Dimm>& dimms) {
    SmbiosMemory mem = parse_smbios_memory(smbios_test::table(dimms));
    EXPECT_EQ(mem.problem, "");
    EXPECT_EQ(mem.devices.size(), dimms.size());
    return summarize_memory(mem.devices);
}

}  // namespace

TEST(Smbios, OneDimmPerChannelServer) {
    // 8 x 64 GiB DDR5-4800, one per channel: 8 x 4800 MT/s x 8 bytes = 307.2 GB/s.
    std::vector<Dimm> dimms;
    for (char c : std::string("ABCDEFGH")) {
        Dimm d;
        d.device = std::string("CPU0_DIMM_") + c + "1";
        dimms.push_back(d);
    }
    MemoryLayout l = layout_of(dimms);
    EXPECT_EQ(l.slots, 8);
    EXPECT_EQ(l.populated, 8);
    EXPECT_EQ(l.total_bytes.value_or(0), 8ull * (64ull << 30));  // extended size, in MiB
    EXPECT_EQ(l.type.value_or(""), "DDR5");
    EXPECT_EQ(l.min_configured_mts.value_or(0), 4800u);
    EXPECT_EQ(l.rule, ChannelRule::Locators);
    EXPECT_EQ(l.channels, 8);
    ASSERT_TRUE(l.theoretical_gbps);
    EXPECT_NEAR(*l.theoretical_gbps, 307.2, 1e-9);
    EXPECT_EQ(l.slower_than_rated, 0);
    EXPECT_EQ(l.devices[0].part_number, "M321R8GA0BB0-CQKZJ");
    EXPECT_EQ(l.devices[0].bank_locator, "P0");
}

TEST(Smbios, UnreadableLocatorsAssumeOneDimmPerChannel) {
    std::vector<Dimm> dimms(8);
    for (int i = 0; i < 8; ++i) dimms[i].device = "DIMM " + std::to_string(i + 1), dimms[i].bank = "";
    MemoryLayout l = layout_of(dimms);
    EXPECT_EQ(l.rule, ChannelRule::OnePerDimm);
    EXPECT_EQ(l.channels, 8);
    EXPECT_NEAR(l.theoretical_gbps.value_or(0), 307.2, 1e-9);
    // The check says so next to the figure, so the ceiling is never overstated silently.
    CheckResult r;
    auto f = add_dimm_facts(r, Fact<MemoryLayout>(l), std::string("none"));
    ASSERT_TRUE(f.stream_reference);
    EXPECT_NE(f.stream_reference->source.find("assumes one DIMM per channel"), std::string::npos);
}

TEST(Smbios, TwoDimmsPerChannelLocators) {
    // "DIMM_A1"/"DIMM_A2": 16 DIMMs on 8 channels at 4400 of a rated 4800 -> 8 x 4400 x 8.
    std::vector<Dimm> dimms;
    for (char c : std::string("ABCDEFGH"))
        for (int s = 1; s <= 2; ++s) {
            Dimm d;
            d.device = std::string("DIMM_") + c + std::to_string(s);
            d.configured = 4400;
            dimms.push_back(d);
        }
    MemoryLayout l = layout_of(dimms);
    EXPECT_EQ(l.rule, ChannelRule::Locators);
    EXPECT_EQ(l.channels, 8);
    EXPECT_EQ(l.max_dimms_per_channel, 2);
    EXPECT_NEAR(l.theoretical_gbps.value_or(0), 281.6, 1e-9);
    EXPECT_EQ(l.slower_than_rated, 16);
    EXPECT_EQ(l.min_rated_mts.value_or(0), 4800u);

    // AMD style: bank "P0 CHANNEL A" with "DIMM 0"/"DIMM 1"; and "P0_Node0_Channel0_Dimm1".
    std::vector<Dimm> amd, numbered;
    for (int ch = 0; ch < 12; ++ch)
        for (int s = 0; s < 2; ++s) {
            Dimm a;
            a.bank = std::string("P0 CHANNEL ") + char('A' + ch);
            a.device = "DIMM " + std::to_string(s);
            amd.push_back(a);
            Dimm n;
            n.bank = "BANK " + std::to_string(ch * 2 + s);  // a per-DIMM number names no channel
            n.device = "P0_Node0_Channel" + std::to_string(ch) + "_Dimm" + std::to_string(s);
            numbered.push_back(n);
        }
    MemoryDevice b1;
    b1.bank_locator = "P0 CHANNEL B";
    b1.device_locator = "DIMM 1";
    ASSERT_TRUE(channel_of(b1));
    EXPECT_EQ(channel_of(b1)->channel, "P0 CHANNEL B");
    EXPECT_EQ(channel_of(b1)->dimm, 1);
    for (auto* set : {&amd, &numbered}) {
        MemoryLayout m = layout_of(*set);
        EXPECT_EQ(m.rule, ChannelRule::Locators);
        EXPECT_EQ(m.channels, 12);
        EXPECT_NEAR(m.theoretical_gbps.value_or(0), 12 * 4800 * 8 / 1000.0, 1e-9);
    }
}

TEST(Smbios, TooManySlotsPerChannelFallsBack) {
    // Dell-style "A1".."A16" on one socket: 16 "slots" of one channel means the pattern is not a
    // channel; fall back to one channel per DIMM (and say so).
    std::vector<Dimm> dimms(16);
    // Appended: `"A" + std::to_string()` draws a false -Wrestrict from GCC 12.
    for (int i = 0; i < 16; ++i) dimms[i].device = std::string("A").append(std::to_string(i + 1));
    MemoryLayout l = layout_of(dimms);
    EXPECT_EQ(l.rule, ChannelRule::OnePerDimm);
    EXPECT_EQ(l.channels, 16);
}

TEST(Smbios, EmptySlotsCountAgainstThePopulatedOnesAndFewerThanHalfWarns) {
    std::vector<Dimm> dimms;
    for (char c : std::string("ABCDEFGH"))
        for (int s = 1; s <= 2; ++s) {
            Dimm d;
            d.device = std::string("DIMM_") + c + std::to_string(s);
            if (s == 2 || c >= 'G') d.size_word = 0, d.speed = 0, d.configured = 0, d.part = "";
            dimms.push_back(d);
        }
    MemoryLayout l = layout_of(dimms);
    EXPECT_EQ(l.slots, 16);
    EXPECT_EQ(l.populated, 6);
    EXPECT_EQ(l.channels, 6);
    EXPECT_NEAR(l.theoretical_gbps.value_or(0), 6 * 4.8 * 8, 1e-9);
    CheckResult r;
    auto f = add_dimm_facts(r, Fact<MemoryLayout>(l), std::string("none"));
    ASSERT_EQ(f.warnings.size(), 1u);  // 6 of 16: fewer than half
    EXPECT_NE(f.warnings[0].find("only 6 of 16 DIMM slots are populated"), std::string::npos);
    EXPECT_EQ(find(r, "dimms_populated")->value.value_or(0), 6);
}

TEST(Smbios, ExtendedSizeAndSpeed) {
    Dimm d;
    d.device = "DIMM_A1";
    d.speed = 0xFFFF, d.ext_speed = 8800;  // MRDIMM-class rates need the extended fields
    d.configured = 0xFFFF, d.ext_configured = 8000;
    d.size_word = 0x7FFF, d.ext_size_mib = 131072;
    Dimm kib = d;
    kib.device = "DIMM_B1";
    kib.size_word = 0x8000 | 512;  // 512 KiB granularity bit
    kib.speed = 4800, kib.configured = 0;
    MemoryLayout l = layout_of({d, kib});
    ASSERT_EQ(l.devices.size(), 2u);
    EXPECT_EQ(l.devices[0].size_bytes.value_or(0), 128ull << 30);
    EXPECT_EQ(l.devices[0].rated_mts.value_or(0), 8800u);
    EXPECT_EQ(l.devices[0].configured_mts.value_or(0), 8000u);
    EXPECT_EQ(l.devices[1].size_bytes.value_or(0), 512ull << 10);
    EXPECT_FALSE(l.devices[1].configured_mts);  // 0 = unknown
    EXPECT_FALSE(l.theoretical_gbps);
    EXPECT_NE(l.theoretical_gbps.absent_reason.find("configured speed of DIMM DIMM_B1"), std::string::npos);
}

TEST(Smbios, ShortStructureOfAnOlderVersion) {
    // SMBIOS 2.6: 0x1C bytes, no Extended Size and no Configured Memory Speed.
    Dimm d;
    d.length = 0x1C;
    d.size_word = 8192;
    d.type = 0x18;
    d.speed = 1600;
    d.configured = 1333;  // beyond the length: must not be read
    Dimm big = d;
    big.size_word = 0x7FFF;  // extended size beyond the length: size unknown
    big.device = "DIMM_B1";
    MemoryLayout l = layout_of({d, big});
    EXPECT_EQ(l.devices[0].size_bytes.value_or(0), 8ull << 30);
    EXPECT_EQ(l.devices[0].rated_mts.value_or(0), 1600u);
    EXPECT_FALSE(l.devices[0].configured_mts);
    EXPECT_EQ(l.devices[0].part_number, "M321R8GA0BB0-CQKZJ");
    EXPECT_TRUE(l.devices[1].populated);
    EXPECT_FALSE(l.devices[1].size_bytes);
    EXPECT_FALSE(l.total_bytes);
    EXPECT_EQ(l.type.value_or(""), "DDR3");
    EXPECT_FALSE(l.theoretical_gbps);
}

TEST(Smbios, TruncatedAndGarbageInput) {
    std::string t = smbios_test::table({Dimm{}, Dimm{}});
    // Cut everywhere: never a crash, and a cut inside a structure is reported.
    for (std::size_t n = 0; n < t.size(); ++n) {
        SmbiosMemory m = parse_smbios_memory(std::string_view(t).substr(0, n));
        EXPECT_LE(m.devices.size(), 2u);
    }
    SmbiosMemory cut = parse_smbios_memory(std::string_view(t).substr(0, 60));
    EXPECT_NE(cut.problem, "");
    EXPECT_TRUE(cut.devices.empty());

    std::string bad_len = t;
    bad_len[1] = 2;  // length < 4
    EXPECT_NE(parse_smbios_memory(bad_len).problem.find("length 2"), std::string::npos);

    // A string index past the string set reads as no string.
    std::string bad_str = smbios_test::type17(Dimm{}, 1) + smbios_test::end_of_table();
    bad_str[0x10] = 9;
    SmbiosMemory m = parse_smbios_memory(bad_str);
    ASSERT_EQ(m.devices.size(), 1u);
    EXPECT_EQ(m.devices[0].device_locator, "");

    std::mt19937 rng(7);
    for (int i = 0; i < 2000; ++i) {
        std::string g(rng() % 512, '\0');
        for (auto& c : g) c = char(rng() % 4 == 0 ? 17 : rng());
        SmbiosMemory gm = parse_smbios_memory(g);
        (void)summarize_memory(gm.devices);
    }
    EXPECT_TRUE(parse_smbios_memory("").devices.empty());
}

TEST(Smbios, FixtureTwoSocketHost) {
    auto l = read_memory_layout(HostFs(fixture("two_socket_128")));
    ASSERT_TRUE(l) << l.absent_reason;
    EXPECT_EQ(l->slots, 32);
    EXPECT_EQ(l->populated, 16);
    EXPECT_EQ(l->total_bytes.value_or(0), 1ull << 40);
    EXPECT_EQ(l->type.value_or(""), "DDR4");
    EXPECT_EQ(l->rule, ChannelRule::Locators);
    EXPECT_EQ(l->max_dimms_per_channel, 2);
    EXPECT_EQ(l->channels, 16);
    EXPECT_NEAR(l->theoretical_gbps.value_or(0), 409.6, 1e-9);

    CheckResult r;
    auto f = add_dimm_facts(r, l, std::string("none"));
    EXPECT_TRUE(f.warnings.empty());  // 16 of 32 is half, at rated speed
    ASSERT_TRUE(f.stream_reference);
    EXPECT_NEAR(f.stream_reference->spec.value_or(0), 409.6, 1e-9);
    EXPECT_EQ(find(r, "memory_type")->text.value_or(""), "DDR4");
    EXPECT_EQ(find(r, "memory_configured_mts")->value.value_or(0), 3200);
    EXPECT_EQ(find(r, "dimm_slots")->value.value_or(0), 32);

    // The same table inside a VM describes virtual DIMMs: no rate, and said why.
    CheckResult vm;
    auto fv = add_dimm_facts(vm, l, std::string("kvm"));
    EXPECT_FALSE(fv.stream_reference);
    EXPECT_NE(find(vm, "memory_theoretical_gbps")->absent_reason.find("virtual machine"), std::string::npos);
}

TEST(Smbios, SlowerThanRatedWarns) {
    std::vector<Dimm> dimms(4);
    for (int i = 0; i < 4; ++i)
        dimms[i].device = std::string("DIMM_") + char('A' + i) + "1", dimms[i].configured = 4000;
    CheckResult r;
    auto f = add_dimm_facts(r, Fact<MemoryLayout>(layout_of(dimms)), std::string("none"));
    ASSERT_EQ(f.warnings.size(), 1u);
    EXPECT_NE(f.warnings[0].find("4 of 4 DIMMs run below their rated speed (configured 4000 MT/s, rated 4800"),
              std::string::npos);
}

TEST(Smbios, AbsentTableSaysWhy) {
    EXPECT_NE(smbios_absent_reason(EACCES).find("needs root"), std::string::npos);
    EXPECT_EQ(smbios_absent_reason(ENOENT), "no SMBIOS table (virtual machine?)");
    auto l = read_memory_layout(HostFs(fixture("no_numa")));
    ASSERT_FALSE(l);
    EXPECT_EQ(l.absent_reason, "no SMBIOS table (virtual machine?)");
    CheckResult r;
    auto f = add_dimm_facts(r, l, std::nullopt);
    EXPECT_FALSE(f.stream_reference);
    auto* t = find(r, "memory_theoretical_gbps");
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->present());
    EXPECT_EQ(t->absent_reason, "no SMBIOS table (virtual machine?)");
}

TEST(Smbios, MemoryCheckHoldsStreamAgainstTheFixture) {
    Report rep;
    CheckContext ctx;
    ctx.options.root = fixture("two_socket_128");
    ctx.options.tier = Tier::Quick;
    ctx.report = &rep;
    rep.machine.memory_total_bytes = 1ull << 40;
    rep.machine.virtualization = "none";
    RunFacts facts{rep.machine};  // read once, before the check
    ctx.facts = &facts;
    auto res = HostMemoryCheck().run(ctx);
    ASSERT_EQ(res.size(), 1u);
    const CheckResult& r = res[0];
    auto* theo = find(r, "memory_theoretical_gbps");
    ASSERT_TRUE(theo && theo->value);
    EXPECT_NEAR(*theo->value, 409.6, 1e-9);
    auto* triad = find(r, "triad_gbps");
    ASSERT_TRUE(triad && triad->value && triad->reference);
    EXPECT_NEAR(triad->reference->spec.value_or(0), 409.6, 1e-9);
    EXPECT_NEAR(triad->reference->warn_below.value_or(0), 204.8, 1e-9);
    EXPECT_FALSE(triad->reference->fail_below);  // never FAIL: the channel count is inferred
    EXPECT_NE(triad->reference->source.find("16 channels x 3200 MT/s x 8 bytes"), std::string::npos);
    EXPECT_FALSE(find(r, "copy_gbps")->reference->warn_below);
    EXPECT_NE(r.summary.find("of the theoretical 409.6 GB/s"), std::string::npos) << r.summary;
    EXPECT_NE(r.verdict, Verdict::Fail);
}

TEST(Smbios, TriadNotGradedWhenStreamHadFewerCpusThanTheHost) {
    Report rep;
    CheckContext ctx;
    ctx.options.root = fixture("two_socket_128");
    ctx.options.tier = Tier::Quick;
    ctx.report = &rep;
    rep.machine.cpu_threads = 100000;  // more CPUs than this process can use
    rep.machine.virtualization = "none";
    RunFacts facts{rep.machine};  // read once, before the check
    ctx.facts = &facts;
    auto res = HostMemoryCheck().run(ctx);
    ASSERT_EQ(res.size(), 1u);
    auto* triad = find(res[0], "triad_gbps");
    ASSERT_TRUE(triad && triad->reference);
    EXPECT_NEAR(triad->reference->spec.value_or(0), 409.6, 1e-9);
    EXPECT_FALSE(triad->reference->warn_below);
    EXPECT_NE(triad->reference->source.find("not graded"), std::string::npos);
    EXPECT_NE(res[0].verdict, Verdict::Warn);  // the fixture's DIMMs are fine, the triad is not graded
}
