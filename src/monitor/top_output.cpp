#include "monitor/top_output.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/strings.hpp"
#include "monitor/top_fields.hpp"

namespace gpuvet {

namespace {

std::string rfc3339(std::chrono::system_clock::time_point t) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    std::time_t s = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&s, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
    return buf;
}

FieldValue value_of(const TopGpu& g, std::string_view key) { return top_field(key).get(GpuView{*g.gpu, g.reading}); }
std::string text_of(const TopGpu& g, std::string_view key) { return field_text(top_field(key), value_of(g, key)); }
// The value or "N/A", as nvidia-smi writes what it cannot read.
std::string shown_text(const TopGpu& g, std::string_view key) {
    std::string s = text_of(g, key);
    return s.empty() ? "N/A" : s;
}

TopJson value_json(const FieldValue& v) {
    if (v.number) {
        double x = *v.number;
        if (std::floor(x) == x && std::fabs(x) < 9e15) return TopJson(static_cast<long long>(x));
        return TopJson(x);
    }
    if (v.text) return TopJson(*v.text);
    return TopJson(nullptr);
}

// One GPU's fields as a JSON object, absent ones null with their reasons beside.
TopJson gpu_fields_json(const TopGpu& g) {
    TopJson o = TopJson::object(), why = TopJson::object();
    for (const auto& f : top_fields()) {
        FieldValue v = f.get(GpuView{*g.gpu, g.reading});
        o[std::string(f.key)] = value_json(v);
        if (!v.present()) why[std::string(f.key)] = v.absent_reason;
    }
    o["absent_reasons"] = std::move(why);
    return o;
}

template <class T>
TopJson opt(const Fact<T>& f) {
    return f ? TopJson(*f) : TopJson(nullptr);
}

TopJson process_json(const ProcessRow& p) {
    return TopJson{{"gpu", p.gpu},
                   {"pid", p.pid},
                   {"type", p.type},
                   {"used_memory",
                    p.gpu_memory_bytes
                        ? TopJson(static_cast<long long>(std::llround(static_cast<double>(*p.gpu_memory_bytes) / kMiB)))
                        : TopJson(nullptr)},
                   {"user", opt(p.user)},
                   {"command", opt(p.command)},
                   {"cpu_percent", p.cpu_percent ? TopJson(std::round(*p.cpu_percent * 10) / 10) : TopJson(nullptr)},
                   {"absent_reason", p.command ? TopJson(nullptr) : TopJson(p.command.absent_reason)}};
}

const char* level_name(HintLevel l) { return l == HintLevel::Alert ? "alert" : l == HintLevel::Warn ? "warn" : "info"; }

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string gib(const Fact<std::uint64_t>& b) {
    return b ? format_fixed(static_cast<double>(*b) / (kMiB * 1024), 1) : "?";
}

}  // namespace

TopJson top_fields_json() {
    TopJson a = TopJson::array();
    for (const auto& f : top_fields())
        a.push_back(TopJson{{"key", f.key},
                            {"unit", f.unit.empty() ? TopJson(nullptr) : TopJson(f.unit)},
                            {"kind", f.kind == FieldKind::Number ? "number" : "text"},
                            {"doc", f.doc}});
    return a;
}

TopJson top_to_json(const TopFrame& f) {
    TopJson host{
        {"hostname", f.host_name},
        {"driver_version", opt(f.system.driver_version)},
        {"cuda_driver_version", opt(f.system.cuda_driver_version)},
        {"cpu_busy_percent",
         f.host.cpu_busy_percent ? TopJson(std::round(*f.host.cpu_busy_percent * 10) / 10) : TopJson(nullptr)},
        {"cpus", opt(f.host.cpus)},
        {"memory_total_bytes", opt(f.host.memory_total_bytes)},
        {"memory_used_bytes", opt(f.host.memory_used_bytes)},
        {"load_average",
         f.host.load ? TopJson::array({f.host.load->one, f.host.load->five, f.host.load->fifteen}) : TopJson(nullptr)}};
    TopJson gpus = TopJson::array();
    for (const auto& g : f.gpus) {
        TopJson o = gpu_fields_json(g);
        o["sku"] = g.spec ? TopJson(g.spec->key) : TopJson(nullptr);
        TopJson hints = TopJson::array();
        for (const auto& h : g.hints)
            hints.push_back(TopJson{{"level", level_name(h.level)}, {"text", h.text}, {"source", h.source}});
        o["hints"] = std::move(hints);
        TopJson procs = TopJson::array();
        for (const auto& p : f.processes)
            if (p.gpu == g.gpu->index) procs.push_back(process_json(p));
        o["processes"] = std::move(procs);
        gpus.push_back(std::move(o));
    }
    return TopJson{{"timestamp", rfc3339(f.wall_time)},
                   {"host", std::move(host)},
                   {"fields", top_fields_json()},
                   {"gpus", std::move(gpus)},
                   {"processes_note", kHostPidNote},
                   {"processes_absent_reason",
                    f.processes_absent_reason.empty() ? TopJson(nullptr) : TopJson(f.processes_absent_reason)}};
}

std::string top_csv_header() {
    std::string h = "timestamp,t_s";
    for (const auto& f : top_fields()) {
        h += ",";
        h += f.key;
        if (!f.unit.empty()) h += std::string(" [") + std::string(f.unit) + "]";
    }
    return h + "\n";
}

std::string top_csv_rows(const TopFrame& f) {
    std::string out;
    const std::string ts = rfc3339(f.wall_time), t = format_fixed(f.t_s, 3);
    for (const auto& g : f.gpus) {
        out += ts + "," + t;
        for (const auto& fld : top_fields()) {
            out += ',';
            out += csv_cell(field_text(fld, fld.get(GpuView{*g.gpu, g.reading})));
        }
        out += "\n";
    }
    return out;
}

std::string top_jsonl_rows(const TopFrame& f) {
    std::string out;
    const std::string ts = rfc3339(f.wall_time);
    for (const auto& g : f.gpus) {
        TopJson o{{"record", "sample"}, {"timestamp", ts}, {"t_s", std::round(f.t_s * 1000) / 1000}};
        TopJson fields = gpu_fields_json(g);
        for (auto it = fields.begin(); it != fields.end(); ++it) o[it.key()] = *it;
        out += o.dump(-1, ' ', false, TopJson::error_handler_t::replace) + "\n";
    }
    return out;
}

std::string render_top_once(const TopFrame& f, bool color) {
    auto paint = [&](const std::string& s, const char* code) {
        return color ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
    };
    std::string out = paint(f.host_name, "1") + "  " + rfc3339(f.wall_time) + "  driver " +
                      f.system.driver_version.value_or("N/A") + "  CUDA ";
    if (f.system.cuda_driver_version) out += cuda_version_text(*f.system.cuda_driver_version);
    else out += "N/A";
    out += std::string("\nCPU ") +
           (f.host.cpu_busy_percent ? format_fixed(*f.host.cpu_busy_percent, 0) + "%" : std::string("N/A")) + " of " +
           (f.host.cpus ? std::to_string(*f.host.cpus) : std::string("?")) + " CPUs  RAM " +
           gib(f.host.memory_used_bytes) + " / " + gib(f.host.memory_total_bytes) + " GiB";
    if (f.host.load)
        out += std::string("  load ") + format_fixed(f.host.load->one, 2) + " " + format_fixed(f.host.load->five, 2) +
               " " + format_fixed(f.host.load->fifteen, 2);
    out += "\n";
    for (const auto& g : f.gpus) {
        std::string idx = std::string("[") + std::to_string(g.gpu->index) + "] ";
        std::string state = text_of(g, "state");
        if (state != "ok") {
            FieldValue u = value_of(g, "utilization.gpu");
            out += paint(idx + text_of(g, "name") + " | " + (state == "lost" ? "LOST" : "UNOPENED") + ": " +
                             (u.present() ? std::string() : u.absent_reason),
                         "31") +
                   "\n";
            continue;
        }
        out += paint(idx, "36") + text_of(g, "name") + " | " + shown_text(g, "temperature.gpu") + "°C mem " +
               shown_text(g, "temperature.memory") + "°C | " + paint(shown_text(g, "utilization.gpu") + " %", "32") +
               " | " + shown_text(g, "memory.used") + " / " + shown_text(g, "memory.total") + " MiB | " +
               shown_text(g, "power.draw") + " / " + shown_text(g, "power.limit") + " W";
        // The links and clocks on a line of their own, so a GPU's snapshot fits 100 columns.
        out += std::string("\n    SM ") + shown_text(g, "clocks.sm") + " mem " + shown_text(g, "clocks.mem") +
               " MHz | PCIe Gen" + shown_text(g, "pcie.link.gen.current") + " x" +
               shown_text(g, "pcie.link.width.current") + " rx " + shown_text(g, "pcie.rx") + " tx " +
               shown_text(g, "pcie.tx") + " MB/s";
        FieldValue nvl = value_of(g, "nvlink.rx");
        if (nvl.present())
            out += std::string(" | NVLink rx ") + shown_text(g, "nvlink.rx") + " tx " + shown_text(g, "nvlink.tx") +
                   " MB/s";
        if (text_of(g, "mig.mode.current") == "Enabled") out += " | MIG on";
        out += std::string(" | clocks: ") + shown_text(g, "clocks_event_reasons.words") + "\n";
        FieldValue sm = value_of(g, "gpm.sm_active");
        if (sm.present())
            out += std::string("    GPM: SM active ") + shown_text(g, "gpm.sm_active") + "%  occupancy " +
                   shown_text(g, "gpm.sm_occupancy") + "%  tensor " + shown_text(g, "gpm.tensor_active") + "%  DRAM " +
                   shown_text(g, "gpm.dram_bandwidth") + "%\n";
        else out += std::string("    GPM: ") + sm.absent_reason + "\n";
        for (const auto& h : g.hints)
            out += std::string("    ") +
                   paint(std::string(h.level == HintLevel::Info ? "· " : "! ") + h.text,
                         h.level == HintLevel::Alert  ? "31"
                         : h.level == HintLevel::Warn ? "33"
                                                      : "36") +
                   "\n";
    }
    out += std::string("Processes (") + std::string(kHostPidNote) + ")\n";
    if (!f.processes_absent_reason.empty()) out += std::string("  not read: ") + f.processes_absent_reason + "\n";
    if (f.processes.empty()) out += "  no process is using the watched GPUs\n";
    else {
        char line[256];
        std::snprintf(line, sizeof line, "  %3s %8s %-12s %9s %6s  %s\n", "GPU", "PID", "USER", "GPU MEM", "CPU%",
                      "COMMAND");
        out += line;
        for (const auto& p : f.processes) {
            std::string mem = p.gpu_memory_bytes
                                  ? format_fixed(static_cast<double>(*p.gpu_memory_bytes) / kMiB, 0) + " MiB"
                                  : std::string("N/A");
            std::string cpu = p.cpu_percent ? format_fixed(*p.cpu_percent, 1) : std::string("N/A");
            std::string cmd = p.command ? *p.command : std::string("? (") + p.command.absent_reason + ")";
            std::snprintf(line, sizeof line, "  %3d %8u %-12s %9s %6s  ", p.gpu, p.pid,
                          p.user.value_or("?").substr(0, 12).c_str(), mem.c_str(), cpu.c_str());
            out += line + cmd + "\n";
        }
    }
    return out;
}

}  // namespace gpuvet
