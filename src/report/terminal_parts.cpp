#include "report/terminal_parts.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "core/strings.hpp"
#include "report/text_layout.hpp"
#include "report/wording.hpp"

namespace gpuvet {

namespace {

std::string machine_line(const MachineInfo& m) {
    std::vector<std::string> parts;
    if (m.cpu_model) parts.push_back(*m.cpu_model);
    std::string topo;
    if (m.cpu_sockets) topo += std::to_string(*m.cpu_sockets) + (*m.cpu_sockets == 1 ? " socket" : " sockets");
    if (m.cpu_cores) topo += (topo.empty() ? "" : ", ") + std::to_string(*m.cpu_cores) + " cores";
    if (m.cpu_threads) topo += (topo.empty() ? "" : ", ") + std::to_string(*m.cpu_threads) + " threads";
    if (!topo.empty()) parts.push_back(topo);
    if (m.memory_total_bytes) parts.push_back(format_bytes(double(*m.memory_total_bytes)) + " RAM");
    if (m.os) parts.push_back(*m.os);
    if (m.kernel) parts.push_back("kernel " + *m.kernel);
    if (m.virtualization && *m.virtualization != "none") parts.push_back("virtualized: " + *m.virtualization);
    if (m.container && *m.container != "none") parts.push_back("container: " + *m.container);
    std::string out;
    for (auto& p : parts) out += (out.empty() ? "" : " · ") + p;
    return out;
}

std::string amd_driver_words(const DriverInfo& d) {
    std::string s = "AMD amdgpu driver";
    if (d.amd_driver_version) s += " " + *d.amd_driver_version;
    if (d.amd_library) s += " (" + *d.amd_library + ")";
    return s;
}

std::string driver_line(const DriverInfo& d) {
    if (!d.present && !d.problems.empty()) return "NVIDIA driver installed but not running (see Problem)";
    if (!d.present) return no_gpu_driver_text(d);
    if (d.amd_present && !d.nvidia_found) return amd_driver_words(d);
    std::string s = "NVIDIA driver";
    if (d.driver_version) s += " " + *d.driver_version;
    if (d.cuda_driver_version) s += ", CUDA " + cuda_version_text(*d.cuda_driver_version);
    if (d.amd_present) s += " · " + amd_driver_words(d);
    return s;
}

}  // namespace

void render_gpu_groups(std::ostringstream& o, const Report& r, const Style& st) {
    std::vector<std::pair<std::string, std::vector<int>>> groups;  // description, GPUs
    for (auto& g : r.gpus) {
        std::string s = g.name.value_or("(name unknown)");
        if (g.memory_total_bytes) s += " · " + format_bytes(double(*g.memory_total_bytes));
        if (g.sku) s += " · spec: " + *g.sku;
        if (!groups.empty() && groups.back().first == s) groups.back().second.push_back(g.index);
        else groups.push_back({s, {g.index}});
    }
    for (auto& [s, idx] : groups)
        o << wrap(pad((idx.size() == 1 ? "GPU " : "GPUs ") + gpu_ranges(idx), 10), s, st.width, 10) << "\n";
}

// The run's heading: tool, host, driver, what keeps the GPUs from being used, and the GPUs.
void render_header(std::ostringstream& o, const Report& r, const Style& st, bool group_gpus) {
    o << st.bold("gpuvet " + r.tool_version) << " · " << r.command;
    if (r.machine.hostname) o << " · " << *r.machine.hostname;
    if (!r.started_at.empty()) o << " · " << r.started_at;
    o << "\n";
    o << wrap("Host    ", machine_line(r.machine), st.width, 8) << "\n";
    // Commands that never looked for a driver (host, plan) have no driver line to print.
    if (r.machine.driver.present || !r.machine.driver.absent_reason.empty())
        o << wrap("Driver  ", driver_line(r.machine.driver), st.width, 8) << "\n";
    // What keeps the GPUs from being used comes first, before any check: the cause and the fix.
    for (const DriverProblem& p : r.machine.driver.problems) {
        o << wrap(st.paint("Problem ", "1;31"), p.message, st.width, 8) << "\n";
        o << wrap("  → fix ", p.advice, st.width, 8) << "\n";
    }
    if (group_gpus) {
        render_gpu_groups(o, r, st);
        o << "\n";
        return;
    }
    for (auto& g : r.gpus) {
        std::string s = g.name.value_or("(name unknown)");
        if (g.memory_total_bytes) s += " · " + format_bytes(double(*g.memory_total_bytes));
        if (g.pci_bus_id) s += " · " + *g.pci_bus_id;
        if (g.sku) s += " · spec: " + *g.sku;
        o << wrap(pad("GPU " + std::to_string(g.index), 8), s, st.width, 8) << "\n";
    }
    o << "\n";
}

namespace {

constexpr int kKeyWidth = 24;
constexpr std::size_t kFocusDetailLines = 3;
// Findings the compact view prints under one result (a wrong GEMM lists every wrong output it
// sampled: the first few say it, --verbose and the JSON have them all).
constexpr std::size_t kFocusFindings = 6;

// A figure graded below PASS, or the one a finding below PASS is about.
bool explains_verdict(const CheckResult& c, const Measurement& m) {
    if (m.value && m.reference && grade(*m.value, *m.reference) != Verdict::Pass) return true;
    for (auto& f : c.findings)
        if (f.verdict != Verdict::Pass && f.measurement == m.key) return true;
    return false;
}

// One figure of a result. `last_source`: the previous figure's source, said once per run of them.
void render_measurement(std::ostringstream& o, const CheckResult& c, const Measurement& m, const Style& st,
                        std::string& last_source) {
    // A passing result, unless --verbose, shows just the figures that carry a threshold,
    // one line each, with their share of the datasheet value: the answer to "what number
    // should I get?". Plain facts, sources and thresholds are in --verbose and the JSON.
    bool compact = !st.verbose && c.verdict == Verdict::Pass;
    if (compact && !has_threshold(m.reference)) return;
    if (st.focus && !st.verbose && !explains_verdict(c, m)) return;
    std::string gpu_tag = (m.gpu && !c.gpu) ? "GPU " + std::to_string(*m.gpu) + " " : "";
    std::string prefix = std::string(9, ' ') + pad(m.label, 24) + " ";
    if (visible_width(m.label) > 24) {  // a long label takes its own line, the value stays in its column
        o << std::string(9, ' ') << m.label << "\n";
        prefix = std::string(34, ' ');
    }
    if (compact) {
        std::string share;
        if (m.value && m.reference->spec && *m.reference->spec > 0)
            share = " (" + format_number(100.0 * *m.value / *m.reference->spec, 3) + "% of spec " +
                    format_number(*m.reference->spec, 4) + ")";
        o << wrap(prefix, gpu_tag + render_measurement_value(m) + share, st.width, 34) << "\n";
        return;
    }
    std::string ref = render_reference(m);
    // A source repeated on every figure of one check is said once.
    if (m.reference && !m.reference->source.empty()) {
        if (m.reference->source == last_source) {
            Measurement bare = m;
            bare.reference->source.clear();
            ref = render_reference(bare);
        }
        last_source = m.reference->source;
    }
    std::string value = gpu_tag + render_measurement_value(m);
    if (ref.empty()) {
        o << wrap(prefix, value, st.width, 34) << "\n";
    } else if (visible_width(prefix + value + "  " + ref) <= std::size_t(st.width)) {
        o << prefix << value << "  " << st.dim(ref) << "\n";
    } else {  // the reference goes under the value rather than past the edge
        o << wrap(prefix, value, st.width, 34) << "\n";
        o << st.dim(wrap(std::string(34, ' '), ref, st.width, 34)) << "\n";
    }
}

}  // namespace

// One result: its verdict line, its figures, and (when it did not pass, or --verbose) its
// findings and details.
void render_result(std::ostringstream& o, const CheckResult& c, const Style& st, const std::string& gpus) {
    std::string gpu = !gpus.empty() ? gpus : c.gpu ? std::to_string(*c.gpu) : "";
    std::string head = st.verdict(c.verdict) + "  " + pad(c.key, std::size_t(kKeyWidth) - 1) + " " + pad(gpu, 5);
    int indent = 7 + kKeyWidth + 5;
    if (st.width < 80) indent = 9;  // a narrow terminal gives the summary the whole line
    // Long keys and GPU lists push the summary to its own line.
    if (int(c.key.size()) >= kKeyWidth || !gpus.empty() || st.width < 80) {
        o << st.verdict(c.verdict) << "  " << c.key
          << (gpu.empty()
                  ? ""
                  : (gpus.find(',') != std::string::npos || gpus.find('-') != std::string::npos ? " GPUs " : " GPU ") +
                        gpu)
          << "\n";
        head = std::string(std::size_t(indent), ' ');
    }
    o << wrap(head, c.summary, st.width, indent) << "\n";
    std::string last_source;
    for (auto& m : c.measurements) render_measurement(o, c, m, st, last_source);
    if (!st.verbose && c.verdict == Verdict::Pass) return;
    // A finding the summary already says is not said again; the compact view keeps the first few.
    std::vector<const Finding*> shown;
    for (const Finding* f : findings_beyond_summary(c))
        if (!st.focus || st.verbose || f->verdict != Verdict::Pass) shown.push_back(f);
    const bool cut_findings = st.focus && !st.verbose && shown.size() > kFocusFindings + 1;
    for (std::size_t i = 0; i < shown.size(); ++i) {
        if (cut_findings && i == kFocusFindings) {
            o << std::string(9, ' ')
              << st.dim("• (" + std::to_string(shown.size() - kFocusFindings) + " more findings: --verbose)") << "\n";
            break;
        }
        o << wrap(std::string(9, ' ') + "• ", std::string(to_string(shown[i]->verdict)) + ": " + shown[i]->text,
                  st.width, 11)
          << "\n";
    }
    // The compact view keeps the first lines of context and the last (where advice goes); --verbose
    // and the JSON have them all.
    std::vector<const std::string*> details;
    for (const std::string& d : c.details)
        if (!repeats_summary(c, d)) details.push_back(&d);
    bool cut = st.focus && !st.verbose && details.size() > kFocusDetailLines + 2;
    for (std::size_t i = 0; i < details.size(); ++i) {
        const std::string& d = *details[i];
        if (cut && i >= kFocusDetailLines && i + 1 < details.size()) {
            if (i == kFocusDetailLines)
                o << std::string(9, ' ')
                  << st.dim("• (" + std::to_string(details.size() - kFocusDetailLines - 1) + " more lines: --verbose)")
                  << "\n";
            continue;
        }
        // Pre-formatted lines (tables: runs of spaces) print as they are when they fit.
        if (d.find("  ") != std::string::npos && 11 + int(visible_width(d)) <= st.width)
            o << std::string(9, ' ') << "• " << d << "\n";
        else o << wrap(std::string(9, ' ') + "• ", d, st.width, 11) << "\n";
    }
}

// Errors of a check are shown with it; here only those that belong to no check, then a fatal one.
void render_column_heads(std::ostringstream& o, const Style& st) {
    o << st.dim(pad("", 7) + pad("CHECK", std::size_t(kKeyWidth)) + pad("GPU", 5) + "RESULT") << "\n";
}

void render_errors(std::ostringstream& o, const Report& r, const Style& st) {
    std::vector<const ReportError*> loose;
    for (auto& e : r.errors) {
        bool shown = false;
        for (auto& c : r.checks) shown = shown || c.key == e.where;
        if (!shown) loose.push_back(&e);
    }
    if (!loose.empty()) {
        o << "\n" << st.bold("Errors") << "\n";
        for (auto* ep : loose) {
            auto& e = *ep;
            o << wrap("  " + e.where + ": ", e.message, st.width, 4) << "\n";
            if (!e.advice.empty()) o << wrap("    → ", e.advice, st.width, 6) << "\n";
        }
    }
    if (r.fatal) {
        o << "\n" << st.paint("Could not complete: " + r.fatal->message, "1;31") << "\n";
        if (!r.fatal->advice.empty()) o << "  → " << r.fatal->advice << "\n";
    }
}

// The last lines: what a stop kept from running, then the verdict with the tally and exit code.
void render_verdict(std::ostringstream& o, const Report& r, const Style& st) {
    const auto not_run = not_run_checks(r);
    std::string stopped;
    if (r.interrupted) {
        stopped = "interrupted";
        if (!r.interrupted_during.empty()) stopped += " during " + r.interrupted_during;
        if (!not_run.empty()) stopped += ", " + std::to_string(not_run.size()) + " not run";
    }
    const char* sgr = r.exit_code == 0 ? (r.verdict == RunVerdict::GoWithWarnings ? "1;33" : "1;32") : "1;31";
    if (!not_run.empty()) {
        std::string list;
        for (auto& [k, g] : not_run)
            list += (list.empty() ? "" : ", ") + k +
                    (g.empty() ? "" : (g.find(',') == std::string::npos ? " (GPU " : " (GPUs ") + g + ")");
        o << wrap("Not run (interrupted): ", list, st.width, 4) << "\n";
    }
    std::string head = "Verdict: " + verdict_word(r, stopped);
    std::string rest = verdict_tally(r) + " · exit " + std::to_string(r.exit_code);
    // A narrow terminal gets the tally on its own line, whole (scripts read it as one line).
    bool fits = int(visible_width(head + " — " + rest)) <= st.width;
    o << st.paint(head, sgr) << (fits ? " — " : "\n") << rest << "\n";
}

}  // namespace gpuvet
