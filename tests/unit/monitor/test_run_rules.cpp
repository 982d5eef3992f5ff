// The trial run's diagnosis as pure functions over constructed timelines: each rule fires on its
// pattern (the GPM-based ones included, which the fake NVML does not serve yet) and not on a
// healthy one; the rule table's rows and the docs that list them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <cerrno>
#include <functional>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/error.hpp"
#include "core/clock_reasons.hpp"
#include "monitor/run_rules.hpp"
#include "monitor/run_verdict.hpp"
#include "monitor/run_session.hpp"
#include "monitor/run_summary.hpp"
#include "support/run_timelines.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

namespace {

std::string primary(const RunResult& r) { return r.diagnosis.primary ? r.diagnosis.primary->id : "none"; }

bool fired(const RunResult& r, const std::string& id) {
    if (primary(r) == id) return true;
    for (const RuleFinding& f : r.diagnosis.others)
        if (f.id == id) return true;
    return false;
}

void busy_gpm(GpuPoint& g, double sm, double tensor, double dram) {
    g.utilization_percent = 95;
    g.sm_activity_percent = sm;
    g.tensor_activity_percent = tensor;
    g.dram_bandwidth_percent = dram;
    g.power_w = 500;
}

}  // namespace

TEST(RunRules, GpmLaunchBoundIsC3) {
    auto r = judge(timeline(120, 1, [](int, RunPoint& p) { busy_gpm(p.gpus[0], 20, 2, 10); }), 1);
    EXPECT_EQ(primary(r), "C3");
    EXPECT_NE(r.diagnosis.primary->message.find("20 % of the SMs"), std::string::npos) << r.diagnosis.primary->message;
    EXPECT_FALSE(fired(r, "E2"));
}

TEST(RunRules, GpmMemoryBandwidthBoundIsE1) {
    auto r = judge(timeline(120, 1, [](int, RunPoint& p) { busy_gpm(p.gpus[0], 70, 5, 75); }), 1);
    EXPECT_EQ(primary(r), "E1");
    EXPECT_FALSE(fired(r, "E2"));
    EXPECT_FALSE(fired(r, "C3"));
}

TEST(RunRules, GpmComputeBoundIsE2AndHealthy) {
    auto r = judge(timeline(120, 1, [](int, RunPoint& p) { busy_gpm(p.gpus[0], 92, 55, 40); }), 1);
    EXPECT_EQ(primary(r), "E2");
    EXPECT_EQ(r.diagnosis.primary->party, RuleParty::kInfo);
    EXPECT_FALSE(fired(r, "E3"));
    EXPECT_FALSE(fired(r, "E1"));
}

// Busy SMs with few resident warps and little DRAM traffic: advisory E4, only when no limit fired.
TEST(RunRules, GpmFewWarpsIsAdvisoryE4) {
    auto low = judge(timeline(120, 1,
                              [](int, RunPoint& p) {
                                  busy_gpm(p.gpus[0], 85, 40, 20);
                                  p.gpus[0].sm_occupancy_percent = 12;
                              }),
                     1);
    EXPECT_TRUE(fired(low, "E4"));
    EXPECT_EQ(primary(low), "E2");  // the healthy compute-bound verdict outranks the advice
    auto full = judge(timeline(120, 1,
                               [](int, RunPoint& p) {
                                   busy_gpm(p.gpus[0], 85, 40, 20);
                                   p.gpus[0].sm_occupancy_percent = 45;
                               }),
                      1);
    EXPECT_FALSE(fired(full, "E4"));
    auto no_occupancy = judge(timeline(120, 1, [](int, RunPoint& p) { busy_gpm(p.gpus[0], 85, 40, 20); }), 1);
    EXPECT_FALSE(fired(no_occupancy, "E4"));  // unmeasured is not low
}

// Replays counted anywhere in the run are a server finding; a steady counter is not.
TEST(RunRules, RisingPcieReplaysAreF4) {
    auto bad = judge(timeline(120, 2,
                              [](int i, RunPoint& p) {
                                  for (GpuPoint& g : p.gpus) {
                                      busy_gpm(g, 92, 55, 40);
                                      g.pcie_replay_count = 7;
                                  }
                                  if (i >= 3) p.gpus[1].pcie_replay_count = 7 + i;  // before the window too
                              }),
                     2);
    EXPECT_EQ(primary(bad), "F4");
    EXPECT_EQ(bad.diagnosis.primary->party, RuleParty::kServer);
    EXPECT_NE(bad.diagnosis.primary->message.find("GPU 1 counted 119 PCIe replay"), std::string::npos)
        << bad.diagnosis.primary->message;
    auto steady = judge(timeline(120, 2,
                                 [](int, RunPoint& p) {
                                     for (GpuPoint& g : p.gpus) {
                                         busy_gpm(g, 92, 55, 40);
                                         g.pcie_replay_count = 7;  // old replays, none during the run
                                     }
                                 }),
                        2);
    EXPECT_FALSE(fired(steady, "F4"));
    auto reset = judge(timeline(120, 1,
                                [](int i, RunPoint& p) {
                                    busy_gpm(p.gpus[0], 92, 55, 40);
                                    p.gpus[0].pcie_replay_count = i < 60 ? 50 : 0;  // a driver reload
                                }),
                       1);
    EXPECT_FALSE(fired(reset, "F4"));
}

TEST(RunRules, GpmNoTensorCoresIsE3) {
    auto r = judge(timeline(120, 1, [](int, RunPoint& p) { busy_gpm(p.gpus[0], 85, 1, 20); }), 1);
    EXPECT_EQ(primary(r), "E3");
}

TEST(RunRules, WithoutGpmPowerIsTheProxy) {
    auto low = judge(timeline(120, 1,
                              [](int, RunPoint& p) {
                                  p.gpus[0].utilization_percent = 95;
                                  p.gpus[0].power_w = 120;
                              }),
                     1);
    EXPECT_EQ(primary(low), "C3");
    EXPECT_NE(low.diagnosis.primary->message.find("power is the proxy"), std::string::npos);
    auto high = judge(timeline(120, 1,
                               [](int, RunPoint& p) {
                                   p.gpus[0].utilization_percent = 95;
                                   p.gpus[0].power_w = 600;
                               }),
                      1);
    EXPECT_EQ(primary(high), "E2");
    bool said = false;
    for (const std::string& n : high.diagnosis.not_judged) said = said || n.find("without GPM") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(RunRules, GapsWithSaturatedWorkersAreInputBound) {
    auto gaps = [](bool workers_busy) {
        return timeline(120, 1, [workers_busy](int i, RunPoint& p) {
            bool on = (i / 2) % 2 == 0;
            p.gpus[0].utilization_percent = on ? 96 : 0;
            p.gpus[0].power_w = on ? 500 : 90;
            p.host.workers = 4;
            p.host.workers_runnable_fraction = workers_busy ? 1.0 : 0.0;
            p.host.workers_cpu_cores = workers_busy ? 3.9 : 0.1;
        });
    };
    auto r = judge(gaps(true), 1);
    EXPECT_EQ(primary(r), "B1");
    EXPECT_EQ(r.diagnosis.primary->severity, RuleSeverity::kHigh);  // idle about half the time
    EXPECT_TRUE(fired(r, "B3"));                                    // 4 workers for 64 CPUs
    EXPECT_FALSE(fired(r, "C2"));                                   // the host cause explains the bursts
    // B3's advice quotes its own threshold: 70 % of 64 CPUs.
    for (const RuleFinding& f : r.diagnosis.others) {
        if (f.id != "B3") continue;
        EXPECT_NE(
            f.action.find(std::to_string(int(run_rule::kWorkersPerCpuMin * 64)) + " (" +
                          std::to_string(int(std::lround(100 * run_rule::kWorkersPerCpuMin))) + " % of the CPUs)"),
            std::string::npos)
            << f.action;
    }
    auto quiet = judge(gaps(false), 1);
    EXPECT_FALSE(fired(quiet, "B1"));
    EXPECT_TRUE(fired(quiet, "C2"));  // the same gaps with idle workers: sync points, not input
}

TEST(RunRules, SubSecondStallsShowAsPartialUtilizationAndStillCount) {
    // Real NVML averages over its sample period: an input-bound job reads ~50 %, never 0 %.
    auto partial = [](double util) {
        return timeline(120, 1, [util](int, RunPoint& p) {
            p.gpus[0].utilization_percent = util;
            p.gpus[0].power_w = 300;
            p.host.workers = 2;
            p.host.workers_runnable_fraction = 1.0;
        });
    };
    auto r = judge(partial(50), 1);
    EXPECT_EQ(primary(r), "B1");
    EXPECT_NE(r.diagnosis.primary->message.find("idle 50 %"), std::string::npos) << r.diagnosis.primary->message;
    EXPECT_FALSE(fired(r, "C1"));  // no whole idle tick: no gap
    // Busy workers beside a GPU at 99 % are a pipeline that keeps up.
    EXPECT_FALSE(fired(judge(partial(99), 1), "B1"));
}

TEST(RunRules, NoWorkersAndABusyMainIsB2) {
    auto r = judge(timeline(120, 1,
                            [](int i, RunPoint& p) {
                                bool on = i % 2 == 0;
                                p.gpus[0].utilization_percent = on ? 90 : 0;
                                p.host.workers = 0;
                                p.host.main_cpu_cores = 1.0;
                            }),
                   1);
    EXPECT_EQ(primary(r), "B2");
}

TEST(RunRules, GapsWhileBlockedOnStorageAreB5) {
    auto r = judge(timeline(120, 1,
                            [](int i, RunPoint& p) {
                                bool on = i % 3 == 0;
                                p.gpus[0].utilization_percent = on ? 90 : 2;
                                p.host.workers = 2;
                                p.host.workers_runnable_fraction = 0;
                                p.host.blocked = 2;
                                p.host.psi_io_percent = 45;
                                p.host.disk_read_bytes_per_s = 300e6;
                                p.host.rchar_bytes_per_s = 310e6;
                            }),
                   1);
    EXPECT_EQ(primary(r), "B5");
    EXPECT_EQ(r.diagnosis.primary->party, RuleParty::kServer);
}

TEST(RunRules, ThrottleBitsAreF1F2F3) {
    auto with = [](std::uint64_t bits, double clock) {
        return judge(timeline(120, 1,
                              [=](int, RunPoint& p) {
                                  p.gpus[0].utilization_percent = 97;
                                  p.gpus[0].power_w = 690;
                                  p.gpus[0].sm_clock_mhz = clock;
                                  p.gpus[0].clock_event_reasons = bits;
                              }),
                     1);
    };
    EXPECT_EQ(primary(with(clock_reason::kSwPowerCap, 1500)), "F1");
    EXPECT_FALSE(fired(with(clock_reason::kSwPowerCap, 1960), "F1"));  // capped but clocks at 99 %: no loss
    EXPECT_EQ(primary(with(clock_reason::kHwThermalSlowdown, 1300)), "F2");
    EXPECT_EQ(primary(with(clock_reason::kHwPowerBrakeSlowdown, 1000)), "F3");
    EXPECT_EQ(primary(with(0, 1980)), "E2");
}

TEST(RunRules, UnusedGpusAreA3AndA4) {
    auto none = judge(timeline(120, 2,
                               [](int, RunPoint& p) {
                                   p.gpus[0].utilization_percent = 0;
                                   p.gpus[1].utilization_percent = 0;
                               }),
                      2);
    EXPECT_EQ(primary(none), "A3");
    auto one = judge(timeline(120, 2,
                              [](int, RunPoint& p) {
                                  p.gpus[0].utilization_percent = 95;
                                  p.gpus[0].power_w = 600;
                                  p.gpus[1].utilization_percent = 0;
                              }),
                     2);
    EXPECT_EQ(primary(one), "A4");
    EXPECT_NE(one.diagnosis.primary->message.find("Only 1 of 2"), std::string::npos);
}

TEST(RunRules, AnIdleGpuHoldingAContextIsA4WithThePlacementAdvice) {
    // Eight GPUs, the job's processes on all eight, GPU 7 doing nothing: A4 names it, says the job
    // holds a context there, and gives the unused share of the rented capacity.
    auto r = judge(timeline(120, 8,
                            [](int, RunPoint& p) {
                                for (int g = 0; g < 8; ++g) {
                                    p.gpus[g].utilization_percent = g == 7 ? 0 : 96;
                                    p.gpus[g].power_w = g == 7 ? 70 : 600;
                                    p.gpus[g].job_processes = 1;
                                    p.gpus[g].utilization_samples = 6;
                                    p.gpus[g].utilization_origin = TickOrigin::kIntervalMean;
                                }
                            }),
                   8);
    EXPECT_EQ(primary(r), "A4");
    const std::string& m = r.diagnosis.primary->message;
    EXPECT_NE(m.find("Only 7 of 8 GPUs"), std::string::npos) << m;
    EXPECT_NE(m.find("12 % of the rented GPU capacity"), std::string::npos) << m;
    EXPECT_NE(m.find("GPU 7 held a context of the job but ran nothing"), std::string::npos) << m;
    EXPECT_NE(r.diagnosis.primary->action.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
    EXPECT_EQ(r.diagnosis.primary->action.find("torchrun"), std::string::npos);
    // The idle GPU is A4's: it does not make the job look input-bound.
    EXPECT_FALSE(fired(r, "B1"));
    EXPECT_DOUBLE_EQ(r.gpus[0].utilization_interval_share, 1.0);
    EXPECT_DOUBLE_EQ(r.gpus[0].utilization_samples_per_tick, 6.0);
}

TEST(RunRules, A4TellsBothKindsOfIdleGpuApart) {
    auto r = judge(timeline(120, 4,
                            [](int, RunPoint& p) {
                                for (int g = 0; g < 4; ++g) {
                                    p.gpus[g].utilization_percent = g >= 2 ? 0.5 : 96;
                                    p.gpus[g].power_w = g >= 2 ? 70 : 600;
                                    p.gpus[g].job_processes = g == 3 ? 0 : 1;
                                }
                            }),
                   4);
    ASSERT_TRUE(fired(r, "A4"));
    const std::string& m = r.diagnosis.primary->message;
    EXPECT_NE(m.find("Only 2 of 4"), std::string::npos) << m;
    EXPECT_NE(m.find("50 % of the rented"), std::string::npos) << m;
    EXPECT_NE(m.find("GPU 3 stayed under 2 % utilization with no process of the job"), std::string::npos) << m;
    EXPECT_NE(m.find("GPU 2 held a context"), std::string::npos) << m;
    EXPECT_NE(r.diagnosis.primary->action.find("torchrun --nproc-per-node=4"), std::string::npos);
}

TEST(RunRules, PointReadsAreCountedAsSuch) {
    auto r = judge(timeline(60, 1,
                            [](int i, RunPoint& p) {
                                p.gpus[0].utilization_percent = 95;
                                p.gpus[0].power_w = 600;
                                p.gpus[0].utilization_samples = i % 2 ? 0 : 6;
                                p.gpus[0].utilization_origin =
                                    i % 2 ? TickOrigin::kPointRead : TickOrigin::kIntervalMean;
                                p.gpus[0].power_origin = TickOrigin::kCounterDifference;
                                p.gpus[0].throttle_origin = TickOrigin::kPointRead;
                            }),
                   1);
    EXPECT_NEAR(r.gpus[0].utilization_interval_share, 0.5, 0.05);
    EXPECT_DOUBLE_EQ(r.gpus[0].utilization_samples_per_tick, 6.0);
    EXPECT_DOUBLE_EQ(r.gpus[0].power_counter_share, 1.0);
    EXPECT_DOUBLE_EQ(r.gpus[0].throttle_counter_share, 0.0);
    EXPECT_FALSE(measured(r.gpus[0].sm_clock_interval_share));  // never said: not measured
}

// An idle tick of a driver that writes no samples while idle is an interval mean of no new sample,
// not a point read.
TEST(RunRules, AnIntervalMeanOfNoNewSampleIsNoPointRead) {
    auto r = judge(timeline(60, 1,
                            [](int i, RunPoint& p) {
                                p.gpus[0].utilization_percent = i % 2 ? 0 : 95;
                                p.gpus[0].power_w = 600;
                                p.gpus[0].utilization_samples = i % 2 ? 0 : 6;
                                p.gpus[0].utilization_origin = TickOrigin::kIntervalMean;
                            }),
                   1);
    EXPECT_DOUBLE_EQ(r.gpus[0].utilization_interval_share, 1.0);
    EXPECT_NEAR(r.gpus[0].utilization_samples_per_tick, 3.0, 0.2);
}

namespace {

// Four GPUs, GPU 3 idle while the others work; `fill` sets what is known of the processes.
RunTimeline one_idle_of_four(const std::function<void(int gpu, GpuPoint&)>& fill) {
    return timeline(120, 4, [&](int, RunPoint& p) {
        for (int g = 0; g < 4; ++g) {
            p.gpus[g].utilization_percent = g == 3 ? 0 : 96;
            p.gpus[g].power_w = g == 3 ? 70 : 600;
            fill(g, p.gpus[g]);
        }
    });
}

}  // namespace

TEST(RunRules, A4WithUnreadableProcessListsReadsTheMemoryInUse) {
    // No process list (no permission): the idle GPU's 2 GiB in use is a context held there; A4
    // does not claim that no process of the job is on it.
    auto tl = one_idle_of_four([](int g, GpuPoint& x) { x.memory_used_bytes = g == 3 ? 2048.0 * 1024 * 1024 : 30e9; });
    for (int g = 0; g < 4; ++g) tl.note_absent("gpu" + std::to_string(g) + ".processes", "no permission: run as root");
    auto r = judge(tl, 4);
    ASSERT_EQ(primary(r), "A4");
    const std::string& m = r.diagnosis.primary->message;
    EXPECT_NE(m.find("GPU 3 ran nothing with 2048 MiB of its memory in use (the job's processes could not be matched: "
                     "its process list could not be read: no permission: run as root): a context is held there"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find("no process of the job"), std::string::npos) << m;
    EXPECT_NE(r.diagnosis.primary->action.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
    EXPECT_EQ(r.diagnosis.primary->action.find("torchrun"), std::string::npos);
}

TEST(RunRules, A4InAContainerWhosePidsDoNotMatch) {
    // NVML lists processes (the host's pids) but none of the job's although three GPUs work: the
    // idle GPU's empty memory says nothing holds a context there.
    auto r = judge(one_idle_of_four([](int g, GpuPoint& x) {
                       x.job_processes = 0;
                       x.gpu_processes = g == 3 ? 0 : 1;
                       x.memory_used_bytes = g == 3 ? 2.0 * 1024 * 1024 : 30e9;
                   }),
                   4);
    ASSERT_EQ(primary(r), "A4");
    const std::string& m = r.diagnosis.primary->message;
    EXPECT_NE(m.find("GPU 3 stayed under 2 % utilization with 2 MiB of its memory in use (the job's processes could "
                     "not be matched: "
                     "no GPU listed a process of the job although the others worked"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("no context there"), std::string::npos) << m;
    EXPECT_EQ(m.find("no process of the job on it"), std::string::npos) << m;
    EXPECT_NE(r.diagnosis.primary->action.find("torchrun --nproc-per-node=4"), std::string::npos);
}

TEST(RunRules, A4SaysWhenItCannotTellWhetherAContextIsHeld) {
    auto r = judge(one_idle_of_four([](int, GpuPoint& x) { x.memory_used_bytes = kUnmeasured; }), 4);
    ASSERT_EQ(primary(r), "A4");
    const std::string& m = r.diagnosis.primary->message;
    EXPECT_NE(
        m.find(
            "GPU 3 stayed under 2 % utilization; whether the job holds a context there could not be told (its process "
            "list could not be read)"),
        std::string::npos)
        << m;
    const std::string& a = r.diagnosis.primary->action;
    EXPECT_NE(a.find("torchrun"), std::string::npos) << a;
    EXPECT_NE(a.find("if the job does hold a context there"), std::string::npos) << a;
}

TEST(RunRules, F1ReadsThePowerViolationCounterOverTheReasonBits) {
    // The bit is set at every tick's read, but the counter says the cap held the clocks 5 % of the
    // time: no F1. The counter at 40 % with no bit caught: F1, with the counter's share.
    auto with = [](double counter_pct, std::uint64_t bits) {
        return judge(timeline(120, 1,
                              [=](int, RunPoint& p) {
                                  p.gpus[0].utilization_percent = 97;
                                  p.gpus[0].power_w = 690;
                                  p.gpus[0].sm_clock_mhz = 1500;
                                  p.gpus[0].clock_event_reasons = bits;
                                  p.gpus[0].throttled_power_percent = counter_pct;
                                  p.gpus[0].throttled_thermal_percent = 0;
                              }),
                     1);
    };
    EXPECT_FALSE(fired(with(5, clock_reason::kSwPowerCap), "F1"));
    auto r = with(40, 0);
    ASSERT_EQ(primary(r), "F1");
    const std::string& m = r.diagnosis.primary->message;
    EXPECT_NE(m.find("hit its power cap in 40 % of the busy time (power violation counter)"), std::string::npos) << m;
    // Without the counters, the bits at each tick, said to be point reads.
    auto bits = judge(timeline(120, 1,
                               [](int, RunPoint& p) {
                                   p.gpus[0].utilization_percent = 97;
                                   p.gpus[0].power_w = 690;
                                   p.gpus[0].sm_clock_mhz = 1500;
                                   p.gpus[0].clock_event_reasons = clock_reason::kSwPowerCap;
                               }),
                      1);
    ASSERT_EQ(primary(bits), "F1");
    EXPECT_NE(bits.diagnosis.primary->message.find("a point read, which misses a cap between ticks"), std::string::npos)
        << bits.diagnosis.primary->message;
}

TEST(RunRules, ViolationCountersGiveTheThrottledShareOfTheTime) {
    // A 200 ms thermal dip in every 1 s tick: no tick catches the bit, the counters do.
    auto r = judge(timeline(120, 1,
                            [](int, RunPoint& p) {
                                p.gpus[0].utilization_percent = 95;
                                p.gpus[0].power_w = 600;
                                p.gpus[0].throttled_thermal_percent = 20;
                                p.gpus[0].throttled_power_percent = 0;
                            }),
                   1);
    EXPECT_NEAR(r.gpus[0].thermal_fraction, 0.20, 1e-9);
    EXPECT_DOUBLE_EQ(r.gpus[0].power_cap_fraction, 0);
    EXPECT_TRUE(fired(r, "F2"));
}

TEST(RunRules, PcieTrafficWithoutNvlinkIsD1NotE5) {
    auto tl = timeline(120, 2, [](int, RunPoint& p) {
        for (GpuPoint& g : p.gpus) {
            g.utilization_percent = 100;
            g.power_w = 200;
            g.pcie_rx_bytes_per_s = 40e9;
            g.pcie_tx_bytes_per_s = 40e9;
        }
    });
    auto r = judge(tl, 2, 0);
    EXPECT_EQ(primary(r), "D1");
    EXPECT_FALSE(fired(r, "E5"));
    EXPECT_FALSE(fired(r, "C3"));
    EXPECT_FALSE(fired(judge(tl, 2, 12), "D1"));  // the same traffic with NVLink is not PCIe-bound
}

TEST(RunRules, OneWayCopiesAndADowntrainedLinkAreE5) {
    auto copies = judge(timeline(120, 1,
                                 [](int, RunPoint& p) {
                                     p.gpus[0].utilization_percent = 60;
                                     p.gpus[0].power_w = 150;
                                     p.gpus[0].pcie_rx_bytes_per_s = 50e9;
                                     p.gpus[0].pcie_tx_bytes_per_s = 1e9;
                                 }),
                        1);
    EXPECT_TRUE(fired(copies, "E5"));
    // Two causes under one rule: copies are the job's, a slow link is the server's.
    const RuleFinding& copy = copies.diagnosis.primary->id == "E5"
                                  ? *copies.diagnosis.primary
                                  : *std::find_if(copies.diagnosis.others.begin(), copies.diagnosis.others.end(),
                                                  [](const RuleFinding& f) { return f.id == "E5"; });
    EXPECT_EQ(copy.party, RuleParty::kJob);
    EXPECT_EQ(copy.severity, RuleSeverity::kModerate);
    EXPECT_EQ(copy.title, run_rule_of("E5")->title);
    auto x8 = judge(timeline(120, 1,
                             [](int, RunPoint& p) {
                                 p.gpus[0].utilization_percent = 95;
                                 p.gpus[0].power_w = 600;
                                 p.gpus[0].pcie_width = 8;
                             }),
                    1);
    EXPECT_EQ(primary(x8), "E5");
    EXPECT_EQ(x8.diagnosis.primary->party, RuleParty::kServer);
    EXPECT_NE(x8.diagnosis.primary->message.find("x8"), std::string::npos);
}

TEST(RunRules, SeedTestIsStatedBothWays) {
    auto hi = judge(timeline(120, 1, [](int i, RunPoint& p) { p.gpus[0].utilization_percent = i == 50 ? 93 : 40; }), 1);
    ASSERT_TRUE(hi.diagnosis.seed_peak_reached);
    EXPECT_TRUE(*hi.diagnosis.seed_peak_reached);
    EXPECT_DOUBLE_EQ(hi.diagnosis.seed_peak_percent, 93);
    auto lo = judge(timeline(120, 1, [](int, RunPoint& p) { p.gpus[0].utilization_percent = 60; }), 1);
    ASSERT_TRUE(lo.diagnosis.seed_peak_reached);
    EXPECT_FALSE(*lo.diagnosis.seed_peak_reached);
    EXPECT_TRUE(fired(lo, "E7"));  // 60 % with nothing else saturated
    auto host_only = judge(timeline(120, 0, [](int, RunPoint& p) { p.host.runnable = 2; }), 0);
    EXPECT_FALSE(host_only.diagnosis.seed_peak_reached);
    EXPECT_EQ(primary(host_only), "H1");
}

TEST(RunRules, EveryRuleNamesSignalsThresholdAndSource) {
    std::set<std::string> ids, titles;
    std::set<int> ranks;
    for (const RuleDef& r : run_rules()) {
        EXPECT_NE(r.signals, "") << r.id;
        EXPECT_NE(r.threshold, "") << r.id;
        EXPECT_TRUE(r.judge) << r.id;
        const std::string& src = r.source;
        EXPECT_TRUE(src.find("[N]") != std::string::npos || src.find("[P]") != std::string::npos ||
                    src.find("[G]") != std::string::npos)
            << r.id << ": " << src;
        EXPECT_TRUE(ids.insert(r.id).second) << "two rows of " << r.id;
        EXPECT_TRUE(titles.insert(r.title).second) << "two rules titled " << r.title;
        if (r.rank != 0) {
            EXPECT_TRUE(ranks.insert(r.rank).second) << r.id << " shares its rank";
        }
        EXPECT_EQ(run_rule_of(r.id), &r);
    }
    EXPECT_EQ(run_rule_of("Z9"), nullptr);
    // The verdict order as docs/run.md gives it: host limits that starve the GPU first, the
    // contention notes last; A1 and E6 never lead.
    const std::vector<std::string> order = {"A3", "D1", "B1", "B2", "B5", "B6", "B4", "B3", "A4", "F3",
                                            "F4", "F2", "F1", "D3", "D2", "C3", "E5", "E1", "E3", "C1",
                                            "C2", "E2", "E7", "E4", "H2", "H1", "H3", "B7", "B8"};
    EXPECT_EQ(primary_order(), order);
}

TEST(RunRules, DocsListEveryRuleWithTheCodesThresholds) {
    std::ifstream in(std::string(GPUVET_SOURCE_DIR) + "/docs/run.md");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str();
    // The table is built from the code's constants; docs/run.md carries it verbatim.
    const std::string table = run_rules_markdown();
    EXPECT_NE(doc.find(table), std::string::npos) << "docs/run.md's rule table differs from the code's; it is:\n"
                                                  << table;
    // And the primary verdict's order, as the ranks give it (the docs wrap the line).
    std::string flat = doc;
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    std::string order;
    for (const std::string& id : primary_order()) order += (order.empty() ? "" : ", ") + id;
    EXPECT_NE(flat.find("**Primary verdict**: the first that fired of " + order + ";"), std::string::npos)
        << "docs/run.md's primary verdict order is not " << order;
}

TEST(RunRules, AGpuHeldBackByAPowerCapIsAStraggler) {
    // Four GPUs at the same work; GPU 2 runs 20 % slower under a power cap only there.
    auto r = judge(timeline(120, 4,
                            [](int, RunPoint& p) {
                                for (int g = 0; g < 4; ++g) {
                                    GpuPoint& x = p.gpus[g];
                                    x.utilization_percent = 97;
                                    x.power_w = g == 2 ? 555 : 690;
                                    x.power_limit_w = g == 2 ? 560 : 700;
                                    x.sm_clock_mhz = g == 2 ? 1584 : 1980;
                                    x.clock_event_reasons = g == 2 ? clock_reason::kSwPowerCap : 0;
                                }
                            }),
                   4);
    ASSERT_TRUE(fired(r, "D3")) << primary(r);
    const RuleFinding* d3 = nullptr;
    if (r.diagnosis.primary && r.diagnosis.primary->id == "D3") d3 = &*r.diagnosis.primary;
    for (const RuleFinding& f : r.diagnosis.others)
        if (f.id == "D3") d3 = &f;
    ASSERT_TRUE(d3);
    EXPECT_NE(d3->message.find("GPU 2 ran slower than the other 3"), std::string::npos) << d3->message;
    EXPECT_NE(d3->message.find("SM clock 1584 MHz against 1980 MHz"), std::string::npos) << d3->message;
    EXPECT_NE(d3->message.find("20 % lower"), std::string::npos) << d3->message;
    EXPECT_NE(d3->message.find("power-capped 100 % of the time, the others 0 %"), std::string::npos) << d3->message;
    EXPECT_NE(d3->action.find("560 W"), std::string::npos) << d3->action;
}

TEST(RunRules, EqualGpusAreNoStragglers) {
    auto r = judge(timeline(120, 4,
                            [](int i, RunPoint& p) {
                                for (int g = 0; g < 4; ++g) {
                                    p.gpus[g].utilization_percent = 95 + (i + g) % 3;
                                    p.gpus[g].power_w = 680 + g;
                                }
                            }),
                   4);
    EXPECT_FALSE(fired(r, "D3"));
    EXPECT_FALSE(fired(r, "D2"));
}

TEST(RunRules, PcieLinksNearCapacityAreD2) {
    // A PCIe-only box (Gen4 x16: 31.5 GB/s per direction) whose GPUs push 26 GB/s each way.
    auto r = judge(timeline(120, 2,
                            [](int, RunPoint& p) {
                                for (GpuPoint& g : p.gpus) {
                                    g.utilization_percent = 90;
                                    g.power_w = 400;
                                    g.pcie_gen = 4;
                                    g.pcie_width = 16;
                                    g.pcie_rx_bytes_per_s = 26e9;
                                    g.pcie_tx_bytes_per_s = 26e9;
                                }
                            }),
                   2, 0);
    ASSERT_TRUE(fired(r, "D2")) << primary(r);
    const RuleFinding* d2 = nullptr;
    if (r.diagnosis.primary && r.diagnosis.primary->id == "D2") d2 = &*r.diagnosis.primary;
    for (const RuleFinding& f : r.diagnosis.others)
        if (f.id == "D2") d2 = &f;
    ASSERT_TRUE(d2);
    EXPECT_NE(d2->message.find("PCIe carried up to 26.0 GB/s per direction of its 31.5 GB/s (83 %)"), std::string::npos)
        << d2->message;
    EXPECT_NE(d2->message.find("in 100 % of the time"), std::string::npos) << d2->message;
}

TEST(RunRules, NvlinkNearTheSpecCapacityIsD2) {
    RunTimeline tl = timeline(120, 2, [](int, RunPoint& p) {
        for (GpuPoint& g : p.gpus) {
            g.utilization_percent = 90;
            g.power_w = 500;
            g.nvlink_rx_bytes_per_s = 400e9;
            g.nvlink_tx_bytes_per_s = 380e9;
        }
    });
    std::vector<RunGpuFacts> f = facts(2);
    for (RunGpuFacts& x : f) x.nvlink_capacity_bytes_per_s = 450e9;  // H100 SXM: 900 GB/s both ways
    RunResult r = summarize_run(tl, f, kInterval, 64, true);
    EXPECT_TRUE(fired(r, "D2")) << primary(r);
    // Without the spec figure NVLink is not judged, and the summary says so.
    RunResult unknown = judge(tl, 2);
    EXPECT_FALSE(fired(unknown, "D2"));
    bool said = false;
    for (const std::string& n : unknown.diagnosis.not_judged) said = said || n.find("D2 over NVLink") == 0;
    EXPECT_TRUE(said);
}

TEST(RunRules, FindingsCarryTheirRowsTitleAndTheVerdictPolicyKeysOnTheFamily) {
    // A GPU thermally slowed: F2 counts against the server wherever it ranks.
    auto hot = judge(timeline(120, 1,
                              [](int, RunPoint& p) {
                                  p.gpus[0].utilization_percent = 97;
                                  p.gpus[0].power_w = 650;
                                  p.gpus[0].reasons_known = true;
                                  p.gpus[0].clock_event_reasons = clock_reason::kHwThermalSlowdown;
                              }),
                     1);
    ASSERT_TRUE(fired(hot, "F2"));
    std::vector<const RuleFinding*> all;
    if (hot.diagnosis.primary) all.push_back(&*hot.diagnosis.primary);
    for (const RuleFinding& f : hot.diagnosis.others) all.push_back(&f);
    for (const RuleFinding* f : all) {
        ASSERT_NE(run_rule_of(f->id), nullptr) << f->id;
        EXPECT_EQ(f->title, run_rule_of(f->id)->title);
    }
    hot.end = JobEnd{false, 0, 120};
    hot.exit_code = 0;
    EXPECT_EQ(run_outcome(hot), RunOutcome::Bottleneck);
    // The same finding as a note of the information party still counts: the family decides.
    RunResult only_f;
    only_f.end = JobEnd{false, 0, 1};
    only_f.exit_code = 0;
    only_f.diagnosis.primary =
        RuleFinding{"E2", "Compute-bound (healthy)", RuleSeverity::kInfo, "m", "a", "s", RuleParty::kInfo};
    EXPECT_EQ(run_outcome(only_f), RunOutcome::Healthy);
    RuleFinding f4{"F4", "PCIe link errors", RuleSeverity::kInfo, "m", "a", "s", RuleParty::kInfo};
    only_f.diagnosis.others.push_back(f4);
    EXPECT_EQ(run_outcome(only_f), RunOutcome::Bottleneck);
}
