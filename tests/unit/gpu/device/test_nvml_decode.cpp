// NVML's values decoded: clock event reasons, PCI bus ids, CPU affinity masks, topology levels and
// the process lists of both entry layouts.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/bindings/cuda_api.hpp"
#include "gpu/bindings/nvml_api.hpp"
#include "gpu/inventory.hpp"

using namespace gpuvet;

namespace {
void put_entry(unsigned char* p, std::uint32_t pid, std::uint64_t mem, std::uint32_t gi, std::uint32_t ci) {
    std::memcpy(p, &pid, 4);
    std::memcpy(p + 8, &mem, 8);
    std::memcpy(p + 16, &gi, 4);
    std::memcpy(p + 20, &ci, 4);
}
}  // namespace

TEST(ClockReasons, DecodesEachBitAsAMask) {
    EXPECT_TRUE(decode_clock_reasons(0).empty());
    EXPECT_EQ(decode_clock_reasons(0x4), std::vector<std::string>{"SW_POWER_CAP"});
    EXPECT_EQ(decode_clock_reasons(0x1 | 0x8 | 0x40 | 0x80),
              (std::vector<std::string>{"GPU_IDLE", "HW_SLOWDOWN", "HW_THERMAL_SLOWDOWN", "HW_POWER_BRAKE_SLOWDOWN"}));
    EXPECT_EQ(decode_clock_reasons(0x20), std::vector<std::string>{"SW_THERMAL_SLOWDOWN"});
    auto unknown = decode_clock_reasons(0x4 | 0x10000);
    ASSERT_EQ(unknown.size(), 2u);
    EXPECT_EQ(unknown[1], "UNKNOWN_0x10000");
}

TEST(PciBusId, NormalizesNvmlAndCudaSpellings) {
    EXPECT_EQ(normalize_pci_bus_id("00000000:17:00.0"), "0000:17:00.0");
    EXPECT_EQ(normalize_pci_bus_id("0000:17:00.0"), "0000:17:00.0");
    EXPECT_EQ(normalize_pci_bus_id("00000000:B3:00.0"), "0000:b3:00.0");
    EXPECT_EQ(normalize_pci_bus_id("b3:00.0"), "0000:b3:00.0");
    EXPECT_EQ(normalize_pci_bus_id("0001:b3:00.0"), "0001:b3:00.0");
    EXPECT_EQ(normalize_pci_bus_id("garbage"), "");
    EXPECT_EQ(normalize_pci_bus_id("0000:17:00.0x"), "");
}

TEST(CpuAffinity, MaskBecomesCpuList) {
    std::uint64_t m[2] = {0xffffffffULL, 0xffffffffULL};  // 0-31, 64-95
    EXPECT_EQ(cpu_list_from_mask(m, 2), "0-31,64-95");
    std::uint64_t one[1] = {0x5};
    EXPECT_EQ(cpu_list_from_mask(one, 1), "0,2");
    std::uint64_t all[1] = {~0ULL};
    EXPECT_EQ(cpu_list_from_mask(all, 1), "0-63");
    std::uint64_t none[1] = {0};
    EXPECT_EQ(cpu_list_from_mask(none, 1), "");
}

TEST(Topology, LevelsUseNvidiaSmiLabels) {
    EXPECT_EQ(topology_label(10), "PIX");
    EXPECT_EQ(topology_label(20), "PXB");
    EXPECT_EQ(topology_label(30), "PHB");
    EXPECT_EQ(topology_label(40), "NODE");
    EXPECT_EQ(topology_label(50), "SYS");
    EXPECT_EQ(architecture_name(9), "Hopper");
    EXPECT_EQ(architecture_name(77), "unknown (77)");
}

TEST(ProcessList, ReadsFourFieldEntries) {
    unsigned char buf[3 * 32] = {};
    for (int i = 0; i < 3; ++i) put_entry(buf + i * 24, 1000 + i, (i + 1) * 1000000ULL, 0xFFFFFFFF, 0xFFFFFFFF);
    auto p = decode_process_entries(buf, 3);
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p[2].pid, 1002u);
    EXPECT_EQ(p[2].used_memory_bytes, 3000000u);
}

TEST(ProcessList, GuardsAgainstFiveFieldEntriesFromR535) {
    // Entries 32 bytes apart, the fifth field (CC-protected memory) zero: read at 24 bytes, the
    // second pid would be 0, so the wide stride is chosen.
    unsigned char buf[3 * 32] = {};
    for (int i = 0; i < 3; ++i) put_entry(buf + i * 32, 2000 + i, (i + 1) * 4096ULL, 0xFFFFFFFF, 0xFFFFFFFF);
    auto p = decode_process_entries(buf, 3);
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p[1].pid, 2001u);
    EXPECT_EQ(p[2].pid, 2002u);
    EXPECT_EQ(p[2].used_memory_bytes, 3 * 4096u);
}
