// The host-load parsers top reads /proc with.
#include <gtest/gtest.h>

#include "host/host_load.hpp"

using namespace gpuvet;

TEST(HostLoad, ProcStatGivesBusyAndTotalJiffiesAndCountsTheCpus) {
    auto t = parse_proc_stat_cpu("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\ncpu1 1 2 3 4\nintr 5\n");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->total, 1000u);
    EXPECT_EQ(t->busy, 150u);
    EXPECT_FALSE(parse_proc_stat_cpu("intr 5\n"));
    EXPECT_EQ(count_proc_stat_cpus("cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu1 1 2 3 4\n"), 2);
}

TEST(HostLoad, MeminfoNeedsBothTotalAndAvailable) {
    auto m = parse_meminfo("MemTotal:       16000 kB\nMemFree:  1000 kB\nMemAvailable:   4000 kB\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->total_bytes, 16000u * 1024);
    EXPECT_EQ(m->available_bytes, 4000u * 1024);
    EXPECT_FALSE(parse_meminfo("MemTotal: 10 kB\n"));
}

TEST(HostLoad, LoadavgReadsTheFiveMinuteMean) {
    auto l = parse_loadavg("0.52 0.40 0.31 1/234 5678\n");
    ASSERT_TRUE(l);
    EXPECT_DOUBLE_EQ(l->five, 0.40);
}
