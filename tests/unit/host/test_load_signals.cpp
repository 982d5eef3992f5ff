// The /proc parsers the trial run adds: schedstat, PSI, /proc/net/dev, /proc/meminfo.
#include <gtest/gtest.h>

#include "host/load_signals.hpp"
#include "monitor/run_host.hpp"

using namespace gpuvet;

TEST(LoadSignals, SchedstatGivesRunAndWaitNanoseconds) {
    auto s = parse_schedstat("1234567 89012 34\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->run_ns, 1234567u);
    EXPECT_EQ(s->wait_ns, 89012u);
    EXPECT_EQ(s->timeslices, 34u);
    EXPECT_FALSE(parse_schedstat("garbage"));
    EXPECT_FALSE(parse_schedstat(""));
}

TEST(LoadSignals, PressureReadsSomeAndFullLines) {
    auto p = parse_pressure(
        "some avg10=12.50 avg60=1.03 avg300=1.07 total=1067854133\n"
        "full avg10=0.00 avg60=0.39 avg300=0.46 total=369668670\n");
    ASSERT_TRUE(p);
    EXPECT_DOUBLE_EQ(p->some_avg10_percent, 12.5);
    EXPECT_EQ(p->some_total_us, 1067854133u);
    ASSERT_TRUE(p->full_total_us);
    EXPECT_EQ(*p->full_total_us, 369668670u);
    // The cpu file of older kernels has no "full" line.
    auto cpu = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n");
    ASSERT_TRUE(cpu);
    EXPECT_FALSE(cpu->full_total_us);
    EXPECT_FALSE(parse_pressure("some avg10=x total=1\n"));
    EXPECT_FALSE(parse_pressure("full avg10=0.00 avg60=0 avg300=0 total=1\n"));
}

TEST(LoadSignals, NetDevSumsInterfacesButLoopback) {
    const char* text =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
        "carrier compressed\n"
        "    lo: 9999999     100    0    0    0     0          0         0  9999999     100    0    0    0     0       "
        "0          0\n"
        "  eth0: 1000000    2000    0    0    0     0          0         0   500000    1000    0    0    0     0       "
        "0          0\n"
        "  ens5:    2000      20    0    0    0     0          0         0     3000      30    0    0    0     0       "
        "0          0\n";
    auto n = parse_net_dev(text);
    ASSERT_TRUE(n);
    EXPECT_EQ(n->rx_bytes, 1002000u);
    EXPECT_EQ(n->tx_bytes, 503000u);
    EXPECT_EQ(n->interfaces, 2);
    EXPECT_FALSE(parse_net_dev("eth0: 1 2 3\n"));  // a short line is malformed, not zeros
    EXPECT_FALSE(parse_net_dev("no interfaces here\n"));
}

TEST(LoadSignals, MeminfoInBytes) {
    auto m = parse_meminfo(
        "MemTotal:       16314640 kB\nMemFree:  100 kB\nMemAvailable:   12000000 kB\n"
        "SwapTotal:       2097148 kB\nSwapFree:        2000000 kB\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->total_bytes, 16314640ull * 1024);
    EXPECT_EQ(m->available_bytes, 12000000ull * 1024);
    EXPECT_EQ(m->swap_total_bytes - m->swap_free_bytes, 97148ull * 1024);
    EXPECT_FALSE(parse_meminfo("SwapTotal: 1 kB\n"));
}

TEST(LoadSignals, DataLoaderWorkerNamesAsTheKernelTruncatesThem) {
    EXPECT_TRUE(is_dataloader_worker_name("pt_data_worker"));
    EXPECT_TRUE(is_dataloader_worker_name("pt_multiprocess"));  // pt_multiprocess_data_worker, 15 chars
    EXPECT_TRUE(is_dataloader_worker_name("pt_thread_data_"));
    EXPECT_FALSE(is_dataloader_worker_name("python3"));
}
