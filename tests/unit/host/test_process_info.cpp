// /proc/<pid> parsing for the monitor's process table and the trial run's process tree.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include <unistd.h>

#include "host/process_info.hpp"

using namespace gpuvet;

TEST(ProcessInfo, StatNameMayHoldSpacesAndParentheses) {
    // proc(5) fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime vsize rss
    auto p = parse_proc_pid_stat(
        "4242 (pt_main (x) 1) S 4200 4242 4242 0 -1 4194560 10 0 0 0 "
        "1234 567 0 0 20 0 9 0 88123 1000000 2048 rest of the fields");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->pid, 4242);
    EXPECT_EQ(p->comm, "pt_main (x) 1");
    EXPECT_EQ(p->state, 'S');
    EXPECT_EQ(p->ppid, 4200);
    EXPECT_EQ(p->utime_ticks, 1234u);
    EXPECT_EQ(p->stime_ticks, 567u);
    EXPECT_EQ(p->threads, 9);
    EXPECT_EQ(p->start_ticks, 88123u);
    EXPECT_EQ(p->rss_bytes, 2048u * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)));
}

TEST(ProcessInfo, TruncatedOrGarbledStatIsRefused) {
    EXPECT_FALSE(parse_proc_pid_stat("4242 (python3) S 1 2 3"));
    EXPECT_FALSE(parse_proc_pid_stat("no parentheses at all"));
    EXPECT_FALSE(parse_proc_pid_stat("x (a) S y 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 1 1"));
}

TEST(ProcessInfo, IoCountersSeparateCacheHitsFromStorageReads) {
    auto io = parse_proc_pid_io(
        "rchar: 1000000\nwchar: 20\nsyscr: 5\nsyscw: 1\nread_bytes: 4096\n"
        "write_bytes: 0\ncancelled_write_bytes: 0\n");
    ASSERT_TRUE(io);
    EXPECT_EQ(io->rchar, 1000000u);
    EXPECT_EQ(io->read_bytes, 4096u);
    EXPECT_EQ(io->wchar, 20u);
    EXPECT_FALSE(parse_proc_pid_io("rchar: 1\n"));
}

TEST(ProcessInfo, UidIsTheRealOne) {
    EXPECT_EQ(parse_status_uid("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\n").value_or(99), 1000u);
    EXPECT_FALSE(parse_status_uid("Name:\tx\n"));
}

TEST(ProcessInfo, ReadsThisProcess) {
    HostFs fs;
    auto me = read_process(fs, static_cast<int>(getpid()));
    ASSERT_TRUE(me);
    EXPECT_EQ(me->pid, static_cast<int>(getpid()));
    EXPECT_EQ(me->ppid, static_cast<int>(getppid()));
    EXPECT_NE(me->cmdline.find("gpuvet_unit_tests"), std::string::npos);
    EXPECT_EQ(me->uid.value_or(~0u), static_cast<unsigned>(getuid()));
    EXPECT_TRUE(me->io.has_value()) << me->io.absent_reason;
    auto pids = list_pids(fs);
    EXPECT_NE(std::find(pids.begin(), pids.end(), static_cast<int>(getpid())), pids.end());
    EXPECT_FALSE(read_process(fs, 0));  // no such process
    EXPECT_EQ(user_name(0), "root");
}

TEST(ProcessInfo, DescendsFromFollowsParentsToTheRootAndStopsAtUnknownsAndCycles) {
    std::map<int, int> parent{{10, 1}, {11, 10}, {12, 11}, {20, 1}, {30, 31}, {31, 30}, {40, 99}};
    auto parent_of = [&](int pid) -> std::optional<int> {
        auto it = parent.find(pid);
        return it == parent.end() ? std::nullopt : std::optional<int>(it->second);
    };
    EXPECT_TRUE(descends_from(11, 10, parent_of));
    EXPECT_TRUE(descends_from(12, 10, parent_of));   // a grandchild
    EXPECT_FALSE(descends_from(10, 10, parent_of));  // the root is not its own descendant
    EXPECT_FALSE(descends_from(20, 10, parent_of));  // a sibling tree under init
    EXPECT_FALSE(descends_from(30, 10, parent_of));  // a cycle of reused pids ends
    EXPECT_FALSE(descends_from(40, 10, parent_of));  // a parent that is gone
}
