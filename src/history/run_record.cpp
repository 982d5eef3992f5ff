#include "history/run_record.hpp"

#include <cstdio>
#include <map>

#include "core/strings.hpp"

namespace gpuvet::history {

std::string GpuRecord::key() const {
    if (uuid && !uuid->empty()) return *uuid;
    if (serial && !serial->empty()) return "serial:" + *serial;
    return {};
}

std::string slot_of(const GpuSummary& g) {
    if (g.pci_bus_id && !g.pci_bus_id->empty()) return to_lower(*g.pci_bus_id);
    return "index " + std::to_string(g.index);
}

namespace {

std::uint64_t fnv1a(std::uint64_t h, const std::string& s) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    h ^= 0x1f;  // a separator, so ("ab","c") and ("a","bc") differ
    h *= 1099511628211ULL;
    return h;
}

// The worst verdict of each GPU's own results; a box-level result judges no single GPU.
std::map<int, Verdict> gpu_verdicts(const Report& r) {
    std::map<int, Verdict> out;
    for (const CheckResult& c : r.checks) {
        if (!c.gpu || c.verdict == Verdict::Skip) continue;
        auto [it, fresh] = out.emplace(*c.gpu, c.verdict);
        if (!fresh) it->second = worst(it->second, c.verdict);
    }
    return out;
}

void add_figures(const CheckResult& c, RunRecord& rec) {
    for (const Measurement& m : c.measurements) {
        if (!m.value) continue;  // absent and textual facts are no figures
        FigureRecord f;
        f.gpu = m.gpu ? m.gpu : c.gpu;
        f.metric = c.key + "." + m.key;
        f.value = *m.value;
        f.unit = m.unit;
        if (m.reference) {
            f.spec = m.reference->spec;
            f.fail_below = m.reference->fail_below;
            f.fail_above = m.reference->fail_above;
        }
        rec.figures.push_back(std::move(f));
    }
    for (const Finding& f : c.findings)
        if (f.verdict == Verdict::Warn || f.verdict == Verdict::Fail || f.verdict == Verdict::Error)
            rec.findings.push_back({c.gpu, c.key, to_string(f.verdict), f.text});
}

// A textual measurement of a result, when it was read.
std::optional<std::string> text_of(const CheckResult& c, const char* key) {
    for (const Measurement& m : c.measurements)
        if (m.key == key && m.text && !m.text->empty()) return m.text;
    return std::nullopt;
}

void take_ids(const Report& r, const LiveIdentity* live, RunRecord& rec) {
    for (const CheckResult& c : r.checks)
        if (c.key == "host.identity") {
            rec.system_uuid = text_of(c, "system_uuid");
            rec.board_serial = text_of(c, "board_serial");
            rec.slurm_node = text_of(c, "slurm_node");
        }
    if (!live) return;
    if (!rec.system_uuid) rec.system_uuid = live->system_uuid;
    if (!rec.board_serial) rec.board_serial = live->board_serial;
    if (!rec.slurm_node) rec.slurm_node = live->slurm_node;
}

void take_gpu_ids(const Report& r, const LiveIdentity* live, GpuRecord& g) {
    for (const CheckResult& c : r.checks)
        if (c.key == "gpu.identity" && c.gpu == g.index) {
            g.serial = text_of(c, "serial");
            g.vbios_version = text_of(c, "vbios_version");
            g.inforom_version = text_of(c, "inforom_image_version");
        }
    if (!live) return;
    if (auto it = live->serials.find(g.index); !g.serial && it != live->serials.end()) g.serial = it->second;
    if (auto it = live->vbios_versions.find(g.index); !g.vbios_version && it != live->vbios_versions.end())
        g.vbios_version = it->second;
    if (auto it = live->inforom_versions.find(g.index); !g.inforom_version && it != live->inforom_versions.end())
        g.inforom_version = it->second;
}

}  // namespace

std::string digest_of(const Report& r) {
    std::vector<std::string> uuids;
    for (const GpuSummary& g : r.gpus) uuids.push_back(g.uuid.value_or(""));
    return digest_of(r, r.machine.hostname, uuids);
}

std::string digest_of(const Envelope& r, const std::optional<std::string>& hostname,
                      const std::vector<std::string>& gpu_uuids) {
    std::uint64_t h = 14695981039346656037ULL;
    for (const std::string& s : {r.command, r.started_at, r.finished_at, r.tool_version, hostname.value_or("")})
        h = fnv1a(h, s);
    for (const std::string& u : gpu_uuids) h = fnv1a(h, u);
    for (const std::string& a : r.argv) h = fnv1a(h, a);
    // Times are whole seconds; the duration (a double that JSON carries exactly) tells apart two
    // runs that started and ended within the same second.
    char duration[32];
    std::snprintf(duration, sizeof duration, "%.17g", r.duration_s);
    h = fnv1a(h, duration);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::optional<std::string> tier_of(const std::string& command, const std::vector<std::string>& argv) {
    if (command != "check" && command != "bench") return std::nullopt;
    for (const std::string& a : argv) {
        if (a == "--quick") return std::string("quick");
        if (a == "--full") return std::string("full");
    }
    return std::string("standard");
}

std::optional<double> burn_duration_of(const Report& r) {
    std::optional<double> longest;
    for (const CheckResult& c : r.checks)
        if (c.key == "gpu.burn")
            for (const Measurement& m : c.measurements)
                if (m.key == "load_duration_s" && m.value && (!longest || *m.value > *longest)) longest = m.value;
    return longest;
}

RunRecord record_of(const Report& r, const LiveIdentity* live) {
    RunRecord rec;
    rec.digest = digest_of(r);
    rec.command = r.command;
    rec.started_at = r.started_at;
    rec.finished_at = r.finished_at;
    rec.tool_version = r.tool_version;
    rec.verdict = to_string(r.verdict);
    rec.exit_code = r.exit_code;
    rec.hostname = r.machine.hostname;
    take_ids(r, live, rec);
    rec.driver_version = r.machine.driver.driver_version;
    rec.cuda_driver_version = r.machine.driver.cuda_driver_version;
    rec.tier = tier_of(r.command, r.argv);
    rec.burn_duration_s = burn_duration_of(r);
    auto verdicts = gpu_verdicts(r);
    for (const GpuSummary& g : r.gpus) {
        GpuRecord gr{g.index,      slot_of(g), g.uuid,       std::nullopt, g.name,
                     std::nullopt, g.sku,      std::nullopt, std::nullopt};
        take_gpu_ids(r, live, gr);
        if (auto it = verdicts.find(g.index); it != verdicts.end()) gr.verdict = to_string(it->second);
        rec.gpus.push_back(std::move(gr));
    }
    for (const CheckResult& c : r.checks) add_figures(c, rec);
    return rec;
}

}  // namespace gpuvet::history
