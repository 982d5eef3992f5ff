// The server's rules, F: hardware or provider limits (power cap, thermal slowdown, power brake,
// PCIe link errors). Any of them counts against the server wherever it ranks (run_verdict).
#include "core/clock_reasons.hpp"
#include "monitor/run_rules_detail.hpp"

namespace gpuvet::run_rule {

namespace {

// The share of GPU k's busy time the power cap held its clocks down: the power violation
// counter's share of each busy tick where the driver has it (a cap between ticks counts), else
// the share of busy ticks whose reason bits caught the cap at the instant of the read.
struct CapShare {
    double share = kUnmeasured;
    bool counter = false;
};
CapShare power_cap_share(const RunEvidence& e, std::size_t k) {
    auto busy = [k](const RunPoint& p) {
        return k < p.gpus.size() && measured(p.gpus[k].utilization_percent) &&
               p.gpus[k].utilization_percent >= kCommBusy;
    };
    double held = 0, time = 0;
    for (std::size_t i = 0; i < e.window.pts.size(); ++i) {
        const RunPoint& p = *e.window.pts[i];
        if (busy(p) && measured(p.gpus[k].throttled_power_percent))
            held += e.window.w[i] * p.gpus[k].throttled_power_percent / 100, time += e.window.w[i];
    }
    if (time > 0) return {held / time, true};
    double bits = e.window.share(
        [k](const RunPoint& p) { return (p.gpus[k].clock_event_reasons & clock_reason::kSwPowerCap) != 0; },
        [&](const RunPoint& p) { return busy(p) && p.gpus[k].reasons_known; });
    return {bits, false};
}

}  // namespace

Judged rule_f1(const RunEvidence& e, const SharedVerdicts& s) {
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        CapShare capped = power_cap_share(e, k);
        if (!measured(capped.share) || capped.share < kPowerCapTicks) continue;
        double clk = measured(g.facts.sm_clock_max_mhz) && g.facts.sm_clock_max_mhz > 0
                         ? g.sm_clock_mhz.mean / g.facts.sm_clock_max_mhz
                         : kUnmeasured;
        if (measured(clk) && clk >= kClockFraction) continue;
        std::string limit = fmt(g.power_limit_w) + " W";
        bool lowered = measured(g.power_limit_w) && measured(g.facts.power_default_limit_w) &&
                       g.power_limit_w < kProviderLimit * g.facts.power_default_limit_w;
        if (lowered) limit += " (default " + fmt(g.facts.power_default_limit_w) + " W: lowered by the provider)";
        std::string how = capped.counter ? " (power violation counter)"
                                         : " (the sw_power_cap reason bit at each tick: a point read, which misses "
                                           "a cap between ticks)";
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " hit its power cap in " + pct(capped.share) +
                               " of the busy time" + how + ": at the " + limit + " limit the SM clock averaged " +
                               fmt(g.sm_clock_mhz.mean) + " MHz of " + fmt(g.facts.sm_clock_max_mhz) + " MHz.",
                           lowered ? "Ask the provider to restore the default power limit (nvidia-smi -pl)."
                                   : "The GPU runs at its rated power: expected under heavy load; compare with "
                                     "`gpuvet burn` on the same card.",
                           {},
                           {}};
    }
    return std::nullopt;
}

Judged rule_f2(const RunEvidence& e, const SharedVerdicts&) {
    for (std::size_t k = 0; k < e.gpus.size(); ++k) {
        const GpuRunSummary& g = e.gpus[k];
        double hw = e.window.share(
            [k](const RunPoint& p) { return (p.gpus[k].clock_event_reasons & clock_reason::kHwThermalSlowdown) != 0; },
            [k](const RunPoint& p) { return k < p.gpus.size() && p.gpus[k].reasons_known; });
        if (!measured(g.thermal_fraction)) continue;
        if (!(measured(hw) && hw > 0) && g.thermal_fraction < kThermalTicks) continue;
        std::string slow = g.facts.temperature_slowdown_c
                               ? " (slowdown at " + std::to_string(*g.facts.temperature_slowdown_c) + " °C)"
                               : "";
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " slowed its clocks for heat in " +
                               pct(g.thermal_fraction) + " of the time, at up to " + fmt(g.temperature_c.max) + " °C" +
                               slow + "; SM clock averaged " + fmt(g.sm_clock_mhz.mean) + " MHz.",
                           "A cooling or airflow problem of the server: report it to the provider.",
                           {},
                           {}};
    }
    return std::nullopt;
}

Judged rule_f3(const RunEvidence& e, const SharedVerdicts&) {
    for (const GpuRunSummary& g : e.gpus) {
        if (!measured(g.power_brake_fraction) || g.power_brake_fraction <= 0) continue;
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " had its external power brake asserted in " +
                               pct(g.power_brake_fraction) + " of the time.",
                           "A power-supply or chassis problem of the server: report it to the provider.",
                           {},
                           {}};
    }
    return std::nullopt;
}

Judged rule_f4(const RunEvidence& e, const SharedVerdicts&) {
    for (const GpuRunSummary& g : e.gpus) {
        if (!measured(g.pcie_replays) || g.pcie_replays <= 0) continue;
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " counted " + fmt(g.pcie_replays) +
                               " PCIe replay(s) during the run: packets were resent because they arrived corrupted.",
                           "The link's signal quality is bad (riser, slot, cable or retimer): report it to the "
                           "provider with 'nvidia-smi -q -d PCIE' (Replays Since Reset).",
                           {},
                           {}};
    }
    return std::nullopt;
}

}  // namespace gpuvet::run_rule
