#include "report/run_view.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

std::string fixed_or_na(double v, int digits = 0) { return measured(v) ? format_fixed(v, digits) : "n/a"; }

std::string triple(const Stat& s, int digits = 0, double scale = 1) {
    if (!s.measured()) return "n/a";
    return fixed_or_na(s.mean / scale, digits) + " / " + fixed_or_na(s.p5 / scale, digits) + " / " +
           fixed_or_na(s.p95 / scale, digits);
}

std::string pad(std::string s, std::size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

void finding_lines(std::ostringstream& o, const RuleFinding& x, const Style& st, const char* indent) {
    o << indent << x.message << "\n";
    o << indent << "→ " << x.action << "\n";
    o << indent << st.dim("thresholds: " + x.source) << "\n";
}

// One line however long the arguments (a `python -c` script holds newlines); the arguments are
// the user's, not gpuvet's: their control characters are shown, never sent to the terminal.
std::string command_line(const std::vector<std::string>& c) {
    std::string s;
    for (const std::string& a : c) s += (s.empty() ? "" : " ") + a;
    for (char& ch : s)
        if (ch == '\n' || ch == '\t' || ch == '\r') ch = ' ';
    s = visible_text(s, false);
    constexpr std::size_t kMax = 90;
    if (s.size() > kMax) s = s.substr(0, kMax - 3) + "...";
    return s;
}

// The job: command, exit, wall time, steady window.
void job_lines(std::ostringstream& o, const RunResult& r, const Style& st) {
    o << "\n" << st.bold("gpuvet run: " + command_line(r.command));
    if (!r.tag.empty()) o << "  [" << visible_text(r.tag, false) << "]";
    o << "\n";
    if (!r.note.empty()) o << "  note: " << visible_text(r.note, false) << "\n";
    std::string how = r.end ? (r.end->signaled ? "killed by signal " + std::to_string(r.end->code)
                                               : "exit " + std::to_string(r.end->code))
                            : "did not start";
    o << "  " << how << " (gpuvet exit " << r.exit_code << "), wall time " << fixed_or_na(r.wall_s, 1) << " s";
    if (r.end && r.wall_s > r.end->at_s + 0.5)
        o << " (the command ended at " << fixed_or_na(r.end->at_s, 1) << " s; its remaining processes ran on)";
    o << "\n";
    o << "  steady-state window " << fixed_or_na(r.window_start_s, 1) << "-" << fixed_or_na(r.window_end_s, 1)
      << " s: " << st.dim(r.window_rule) << "\n";
    if (!r.no_gpu_reason.empty()) o << "  No GPU was visible (" << r.no_gpu_reason << "): host side only.\n";
    for (const std::string& n : r.notes) o << "  note: " << n << "\n";
}

// The verdict, the seed articles' test and the other findings.
void diagnosis_lines(std::ostringstream& o, const RunResult& r, const Style& st) {
    const Diagnosis& d = r.diagnosis;
    o << "\n";
    if (d.primary) {
        o << st.bold("Verdict: " + upper(d.primary->title)) << " (" << to_string(d.primary->severity) << ", rule "
          << d.primary->id << ", " << party_words(d.primary->party) << ")\n";
        finding_lines(o, *d.primary, st, "  ");
    } else {
        o << st.bold("Verdict: no bottleneck rule fired") << "\n";
    }
    std::string seed = "GPU utilization peak ≥ 90 %: ";
    if (d.seed_peak_reached)
        seed += (*d.seed_peak_reached ? "reached (" : "not reached (") + fixed_or_na(d.seed_peak_percent) + " %)";
    else seed += "not judged (no GPU utilization was measured)";
    o << "  " << seed << "\n";
    if (!d.others.empty()) {
        o << "\nAlso found:\n";
        for (const RuleFinding& x : d.others) {
            o << "  " << x.id << " " << x.title << " (" << to_string(x.severity) << ")\n";
            finding_lines(o, x, st, "     ");
        }
    }
}

// One line per way a figure was obtained, naming its GPUs: "power of GPU 0, 1: the energy
// counter's difference over each tick". A GPU counts for the better way when at least half its
// window's ticks had it; `share` unmeasured: the GPU lacks the figure.
void origin_lines(std::ostringstream& o, const RunResult& r, const char* figure, double GpuRunSummary::*share,
                  const std::string& good, const std::string& point) {
    std::string goods, points;
    for (const GpuRunSummary& g : r.gpus) {
        double x = g.*share;
        if (!measured(x)) continue;
        std::string& list = x >= 0.5 ? goods : points;
        list += (list.empty() ? "" : ", ") + std::to_string(g.facts.index);
    }
    if (!goods.empty()) o << "  " << figure << " of GPU " << goods << ": " << good << "\n";
    if (!points.empty()) o << "  " << figure << " of GPU " << points << ": " << point << "\n";
}

// How the figures were obtained: over each tick's interval (the driver's samples, a counter's
// difference), or point reads at the tick, which a job alternating with the tick's period can
// alias with.
void figure_origin_lines(std::ostringstream& o, const RunResult& r) {
    double per_tick = 0;
    int n = 0;
    for (const GpuRunSummary& g : r.gpus)
        if (measured(g.utilization_interval_share) && g.utilization_interval_share >= 0.5 &&
            measured(g.utilization_samples_per_tick))
            per_tick += g.utilization_samples_per_tick, ++n;
    const std::string alias = ": a job that alternates with the tick's period can read busier or idler than it was";
    o << "  How the figures were obtained:\n";
    origin_lines(o, r, "  utilization", &GpuRunSummary::utilization_interval_share,
                 "interval means of the driver's samples (" + fixed_or_na(per_tick / std::max(n, 1), 1) + " per tick)",
                 "point reads at each tick (the driver's sample buffer was absent or empty)" + alias);
    origin_lines(o, r, "  power", &GpuRunSummary::power_counter_share, "the energy counter's difference over each tick",
                 "point reads at each tick (the driver's power reading: no energy counter)" + alias);
    origin_lines(o, r, "  SM clock", &GpuRunSummary::sm_clock_interval_share,
                 "interval means of the driver's clock samples", "point reads at each tick");
    origin_lines(o, r, "  throttling", &GpuRunSummary::throttle_counter_share,
                 "the violation counters' share of each tick (a slowdown between ticks counts)",
                 "point reads of the clock-event reason bits at each tick (a slowdown between ticks is not seen)");
}

void gpu_lines(std::ostringstream& o, const RunResult& r) {
    if (!r.gpus.empty()) {
        o << "\nGPUs over the steady window (mean / p5 / p95)\n";
        o << "  " << pad("GPU", 5) << pad("util %", 16) << pad("SM act %", 14) << pad("mem GiB", 18)
          << pad("power W (limit)", 22) << pad("SM MHz", 8) << pad("temp max", 9) << "throttled\n";
        for (const GpuRunSummary& g : r.gpus) {
            std::string thr;
            if (measured(g.power_cap_fraction) && g.power_cap_fraction > 0)
                thr += "power " + fixed_or_na(100 * g.power_cap_fraction) + "% ";
            if (measured(g.thermal_fraction) && g.thermal_fraction > 0)
                thr += "thermal " + fixed_or_na(100 * g.thermal_fraction) + "% ";
            if (measured(g.power_brake_fraction) && g.power_brake_fraction > 0)
                thr += "brake " + fixed_or_na(100 * g.power_brake_fraction) + "% ";
            if (thr.empty()) thr = measured(g.power_cap_fraction) ? "no" : "n/a";
            o << "  " << pad(std::to_string(g.facts.index), 5) << pad(triple(g.utilization_percent), 16)
              << pad(triple(g.sm_activity_percent), 14) << pad(triple(g.memory_used_bytes, 1, kGiB), 18)
              << pad(triple(g.power_w) + " (" + fixed_or_na(g.power_limit_w) + ")", 22)
              << pad(fixed_or_na(g.sm_clock_mhz.mean), 8) << pad(fixed_or_na(g.temperature_c.max), 9) << thr;
            if (g.lost) o << "  LOST at " << fixed_or_na(g.lost_at_s, 1) << " s";
            if (g.facts.mig) o << "  MIG";
            o << "\n";
            if (measured(g.pcie_rx_bytes_per_s.mean) || measured(g.nvlink_rx_bytes_per_s.mean))
                o << "       PCIe rx/tx " << fixed_or_na(g.pcie_rx_bytes_per_s.mean / 1e9, 1) << "/"
                  << fixed_or_na(g.pcie_tx_bytes_per_s.mean / 1e9, 1) << " GB/s, NVLink rx/tx "
                  << fixed_or_na(g.nvlink_rx_bytes_per_s.mean / 1e9, 1) << "/"
                  << fixed_or_na(g.nvlink_tx_bytes_per_s.mean / 1e9, 1) << " GB/s, job processes on it "
                  << (g.job_processes_max ? std::to_string(*g.job_processes_max) : "n/a") << "\n";
        }
        figure_origin_lines(o, r);
    }
}

void host_lines(std::ostringstream& o, const RunResult& r) {
    const HostRunSummary& h = r.host;
    o << "\nHost over the steady window (mean)\n";
    o << "  job: " << h.processes_max << " process(es) at most, " << h.workers_max << " worker(s)";
    if (h.named_workers_max > 0) o << " (" << h.named_workers_max << " named as PyTorch DataLoader workers)";
    o << "; CPU " << fixed_or_na(h.tree_cpu_cores.mean, 2) << " cores (main " << fixed_or_na(h.main_cpu_cores.mean, 2)
      << ", workers " << fixed_or_na(h.workers_cpu_cores.mean, 2) << ") of " << h.cpus << " CPUs\n";
    o << "  runnable " << fixed_or_na(h.runnable.mean, 2) << ", blocked on I/O " << fixed_or_na(h.blocked.mean, 2)
      << " processes; run-queue wait "
      << (h.rq_wait_fraction.measured() ? fixed_or_na(100 * h.rq_wait_fraction.mean) + " %" : std::string("n/a"))
      << "\n";
    o << "  host CPU busy " << fixed_or_na(h.host_busy_percent.mean) << " %, steal "
      << fixed_or_na(h.steal_percent.mean, 1) << " %; pressure cpu/io/memory " << fixed_or_na(h.psi_cpu_percent.mean)
      << "/" << fixed_or_na(h.psi_io_percent.mean) << "/" << fixed_or_na(h.psi_memory_percent.mean) << " %\n";
    o << "  disk read " << fixed_or_na(h.disk_read_bytes_per_s.mean / 1e6, 1) << " MB/s from storage ("
      << fixed_or_na(h.rchar_bytes_per_s.mean / 1e6, 1) << " MB/s returned by reads), write "
      << fixed_or_na(h.disk_write_bytes_per_s.mean / 1e6, 1) << " MB/s; network rx/tx "
      << fixed_or_na(h.net_rx_bytes_per_s.mean / 1e6, 1) << "/" << fixed_or_na(h.net_tx_bytes_per_s.mean / 1e6, 1)
      << " MB/s\n";
    o << "  memory used " << fixed_or_na(h.memory_used_bytes.max / 1e9, 1) << " GB peak, swap used "
      << fixed_or_na(h.swap_used_bytes.max / 1e9, 1) << " GB\n";
}

void process_and_absent_lines(std::ostringstream& o, const RunResult& r, const Style& st) {
    if (!r.processes.empty()) {
        o << "\nProcesses of the job (by CPU time)\n";
        std::size_t n = 0;
        for (const TreeProcess& p : r.processes) {
            if (++n > 8) {
                o << "  … " << (r.processes.size() - 8) << " more in the report\n";
                break;
            }
            o << "  " << pad(std::to_string(p.pid), 8) << pad(p.comm, 17) << pad(p.role, 8)
              << pad(fixed_or_na(p.cpu_s, 1) + " s CPU", 14) << fixed_or_na(p.read_bytes / 1e6, 1) << " MB read"
              << (p.alive ? "" : "  (exited)") << "\n";
        }
    }
    if (!r.absent.empty() && st.verbose) {
        o << "\nNot measured\n";
        for (auto& [k, why] : r.absent) o << "  " << k << ": " << why << "\n";
    }
    for (const std::string& nj : r.diagnosis.not_judged) o << st.dim("Not judged: " + nj) << "\n";
    if (r.record_path) o << "Timeline recorded to " << *r.record_path << " (" << r.timeline.size() << " points kept)\n";
}

}  // namespace

std::string render_run_summary(const RunResult& r, const Style& st) {
    std::ostringstream o;
    job_lines(o, r, st);
    diagnosis_lines(o, r, st);
    gpu_lines(o, r);
    host_lines(o, r);
    process_and_absent_lines(o, r, st);
    return o.str();
}

}  // namespace gpuvet
