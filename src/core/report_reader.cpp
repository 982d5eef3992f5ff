#include "core/report_reader.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/text_limits.hpp"
#include "core/text_safety.hpp"

namespace gpuvet {

namespace {

using J = nlohmann::json;
constexpr const char* kAdvice = "pass a file that 'gpuvet check --json' or 'gpuvet check --report DIR' wrote, unedited";

// Where in the document a value sits, for errors: "checks[3].measurements[0].value".
struct Reader {
    const std::string& origin;

    [[noreturn]] void fail(const std::string& at, const std::string& what) const {
        throw input_error(origin + ": " + at + ": " + what, kAdvice);
    }
    const J* member(const J& o, const char* k) const {
        auto it = o.find(k);
        return it == o.end() || it->is_null() ? nullptr : &*it;
    }
    std::string str(const J& o, const char* k, const std::string& at, bool required = false) const {
        const J* v = member(o, k);
        if (!v) {
            if (required) fail(at + "." + k, "missing");
            return {};
        }
        if (!v->is_string()) fail(at + "." + k, "must be a string");
        return v->get<std::string>();
    }
    std::optional<std::string> opt_str(const J& o, const char* k, const std::string& at) const {
        if (!member(o, k)) return std::nullopt;
        return str(o, k, at);
    }
    std::optional<double> num(const J& o, const char* k, const std::string& at) const {
        const J* v = member(o, k);
        if (!v) return std::nullopt;
        if (!v->is_number()) fail(at + "." + k, "must be a number or null");
        double d = v->get<double>();
        if (!std::isfinite(d)) fail(at + "." + k, "is not a finite number");
        return d;
    }
    std::optional<std::int64_t> integer(const J& o, const char* k, const std::string& at, std::int64_t lo,
                                        std::int64_t hi) const {
        const J* v = member(o, k);
        if (!v) return std::nullopt;
        if (!v->is_number_integer()) fail(at + "." + k, "must be an integer or null");
        auto i = v->get<std::int64_t>();
        if (i < lo || i > hi) fail(at + "." + k, "is out of range");
        return i;
    }
    std::optional<int> gpu_index(const J& o, const std::string& at) const {
        auto i = integer(o, "gpu", at, 0, 65535);
        return i ? std::optional<int>(int(*i)) : std::nullopt;
    }
    bool boolean(const J& o, const char* k, const std::string& at) const {
        const J* v = member(o, k);
        if (!v) return false;
        if (!v->is_boolean()) fail(at + "." + k, "must be true or false");
        return v->get<bool>();
    }
    const J& array(const J& o, const char* k, const std::string& at) const {
        static const J empty = J::array();
        const J* v = member(o, k);
        if (!v) return empty;
        if (!v->is_array()) fail(at + "." + k, "must be an array");
        return *v;
    }
    const J& object(const J& v, const std::string& at) const {
        if (!v.is_object()) fail(at, "must be an object");
        return v;
    }
};

Verdict verdict_of(const Reader& rd, const std::string& s, const std::string& at) {
    for (Verdict v : {Verdict::Pass, Verdict::Warn, Verdict::Fail, Verdict::Skip, Verdict::Error})
        if (s == to_string(v)) return v;
    rd.fail(at, "unknown verdict '" + s + "' (PASS, WARN, FAIL, SKIP or ERROR)");
}

Measurement read_measurement(const Reader& rd, const J& j, const std::string& at) {
    rd.object(j, at);
    Measurement m;
    m.key = rd.str(j, "key", at, true);
    m.label = rd.str(j, "label", at);
    m.unit = rd.str(j, "unit", at);
    m.value = rd.num(j, "value", at);
    m.text = rd.opt_str(j, "text", at);
    m.absent_reason = rd.str(j, "absent_reason", at);
    m.gpu = rd.gpu_index(j, at);
    if (const J* r = rd.member(j, "reference")) {
        std::string rat = at + ".reference";
        rd.object(*r, rat);
        Reference ref;
        ref.spec = rd.num(*r, "spec", rat);
        ref.expected_fraction = rd.num(*r, "expected_fraction", rat);
        ref.warn_below = rd.num(*r, "warn_below", rat);
        ref.fail_below = rd.num(*r, "fail_below", rat);
        ref.warn_above = rd.num(*r, "warn_above", rat);
        ref.fail_above = rd.num(*r, "fail_above", rat);
        ref.expected_text = rd.str(*r, "expected_text", rat);
        ref.source = rd.str(*r, "source", rat);
        m.reference = ref;
    }
    return m;
}

CheckResult read_check(const Reader& rd, const J& j, const std::string& at) {
    rd.object(j, at);
    CheckResult c;
    c.key = rd.str(j, "key", at, true);
    c.title = rd.str(j, "title", at);
    c.gpu = rd.gpu_index(j, at);
    c.verdict = verdict_of(rd, rd.str(j, "verdict", at, true), at + ".verdict");
    c.summary = rd.str(j, "summary", at);
    const J& ms = rd.array(j, "measurements", at);
    for (std::size_t i = 0; i < ms.size(); ++i)
        c.measurements.push_back(read_measurement(rd, ms[i], at + ".measurements[" + std::to_string(i) + "]"));
    const J& fs = rd.array(j, "findings", at);
    for (std::size_t i = 0; i < fs.size(); ++i) {
        std::string fat = at + ".findings[" + std::to_string(i) + "]";
        rd.object(fs[i], fat);
        c.findings.emplace_back(verdict_of(rd, rd.str(fs[i], "verdict", fat, true), fat + ".verdict"),
                                rd.str(fs[i], "text", fat), rd.str(fs[i], "measurement", fat));
    }
    const J& ds = rd.array(j, "details", at);
    for (std::size_t i = 0; i < ds.size(); ++i) {
        if (!ds[i].is_string()) rd.fail(at + ".details[" + std::to_string(i) + "]", "must be a string");
        c.details.push_back(ds[i].get<std::string>());
    }
    c.duration_s = rd.num(j, "duration_s", at).value_or(0);
    return c;
}

ReportError read_error(const Reader& rd, const J& j, const std::string& at) {
    rd.object(j, at);
    return {rd.str(j, "where", at), rd.str(j, "kind", at), rd.str(j, "message", at), rd.str(j, "advice", at)};
}

void read_machine(const Reader& rd, const J& j, MachineInfo& m) {
    const std::string at = "machine";
    rd.object(j, at);
    m.hostname = rd.opt_str(j, "hostname", at);
    m.cpu_model = rd.opt_str(j, "cpu_model", at);
    auto small = [&](const char* k) -> std::optional<int> {
        auto v = rd.integer(j, k, at, 0, 1 << 24);
        return v ? std::optional<int>(int(*v)) : std::nullopt;
    };
    m.cpu_sockets = small("cpu_sockets");
    m.cpu_cores = small("cpu_cores");
    m.cpu_threads = small("cpu_threads");
    m.cpu_quota = rd.num(j, "cpu_quota", at);
    m.cpuset_cpus = small("cpuset_cpus");
    m.numa_nodes = small("numa_nodes");
    if (auto v = rd.integer(j, "memory_total_bytes", at, 0, INT64_MAX)) m.memory_total_bytes = std::uint64_t(*v);
    if (auto v = rd.integer(j, "memory_limit_bytes", at, 0, INT64_MAX)) m.memory_limit_bytes = std::uint64_t(*v);
    m.os = rd.opt_str(j, "os", at);
    m.kernel = rd.opt_str(j, "kernel", at);
    m.architecture = rd.opt_str(j, "architecture", at);
    m.virtualization = rd.opt_str(j, "virtualization", at);
    m.container = rd.opt_str(j, "container", at);
    if (const J* d = rd.member(j, "driver")) {
        const std::string dat = "machine.driver";
        rd.object(*d, dat);
        DriverInfo& di = m.driver;
        di.present = rd.boolean(*d, "present", dat);
        di.cuda_usable = rd.boolean(*d, "cuda_usable", dat);
        di.absent_reason = rd.str(*d, "absent_reason", dat);
        di.cuda_absent_reason = rd.str(*d, "cuda_absent_reason", dat);
        const J& ps = rd.array(*d, "problems", dat);
        for (std::size_t i = 0; i < ps.size(); ++i) {
            std::string pat = dat + ".problems[" + std::to_string(i) + "]";
            rd.object(ps[i], pat);
            di.problems.push_back(
                {rd.str(ps[i], "headline", pat), rd.str(ps[i], "message", pat), rd.str(ps[i], "advice", pat)});
        }
        di.driver_version = rd.opt_str(*d, "driver_version", dat);
        if (auto v = rd.integer(*d, "cuda_driver_version", dat, 0, 1000000)) di.cuda_driver_version = int(*v);
        di.nvml_version = rd.opt_str(*d, "nvml_version", dat);
        di.libcuda_path = rd.opt_str(*d, "libcuda_path", dat);
        di.libnvml_path = rd.opt_str(*d, "libnvml_path", dat);
        di.nvidia_found = di.present;  // before AMD was read, a driver present was NVIDIA's
        if (const J* a = rd.member(*d, "amd")) {
            const std::string aat = dat + ".amd";
            rd.object(*a, aat);
            di.nvidia_found = rd.boolean(*d, "nvidia_found", dat);
            di.amd_present = rd.boolean(*a, "present", aat);
            di.amd_absent_reason = rd.str(*a, "absent_reason", aat);
            di.amd_driver_version = rd.opt_str(*a, "driver_version", aat);
            di.amd_library = rd.opt_str(*a, "library", aat);
            di.amd_library_path = rd.opt_str(*a, "library_path", aat);
        }
    }
}

RunVerdict run_verdict_of(const Reader& rd, const std::string& s) {
    for (RunVerdict v : {RunVerdict::Go, RunVerdict::GoWithWarnings, RunVerdict::NoGo, RunVerdict::Incomplete,
                         RunVerdict::CouldNotRun})
        if (s == to_string(v)) return v;
    rd.fail("verdict", "unknown run verdict '" + s + "'");
}

J parse_json(std::string_view text, const std::string& origin) {
    check_json_nesting(text, origin);
    try {
        J j = J::parse(text);
        make_strings_visible(j);  // control characters in a crafted file stay inert in every printer
        return j;
    } catch (const J::exception& e) {
        // A cut-off file (a copy that stopped, a run killed while someone piped it) ends here.
        throw input_error(origin + ": not a complete JSON document (" + std::string(e.what()) + ")",
                          "the file is truncated or was edited: write it again with 'gpuvet check --report DIR'");
    }
}

// The envelope's schema version and kind; refuses what this build cannot read.
std::string read_envelope(const Reader& rd, const J& j, Envelope& e) {
    if (!j.is_object()) rd.fail("document", "is not a JSON object");
    auto tool = rd.str(j, "tool", "envelope");
    if (!tool.empty() && tool != "gpuvet") rd.fail("tool", "the document was written by '" + tool + "', not gpuvet");
    auto v = rd.integer(j, "schema_version", "envelope", 0, 1 << 20);
    if (!v) rd.fail("schema_version", "missing: not a gpuvet document");
    if (*v < kOldestReadableSchema || *v > kSchemaVersion)
        throw input_error(rd.origin + ": schema_version " + std::to_string(*v) + " is not one this build reads (" +
                              std::to_string(kOldestReadableSchema) + " to " + std::to_string(kSchemaVersion) + ")",
                          *v > kSchemaVersion ? "use the gpuvet version that wrote it, or a newer one"
                                              : "run the check again with this gpuvet to get a schema " +
                                                    std::to_string(kSchemaVersion) + " report");
    e.schema_version = int(*v);
    e.tool_version = rd.str(j, "tool_version", "envelope");
    e.command = rd.str(j, "command", "envelope");
    const J& argv = rd.array(j, "argv", "envelope");
    for (auto& a : argv)
        if (a.is_string()) e.argv.push_back(a.get<std::string>());
    e.started_at = rd.str(j, "started_at", "envelope");
    e.finished_at = rd.str(j, "finished_at", "envelope");
    e.duration_s = rd.num(j, "duration_s", "envelope").value_or(0);
    return e.command;
}

}  // namespace

std::string document_kind(std::string_view text, const std::string& origin) {
    J j = parse_json(text, origin);
    Reader rd{origin};
    Envelope e;
    return read_envelope(rd, j, e);
}

namespace {

// The "slurm" object a report made under Slurm carries (strings or null); none without a job id.
std::optional<SlurmContext> read_slurm(const Reader& rd, const J& j) {
    const J* o = rd.member(j, "slurm");
    if (!o || o->is_null()) return std::nullopt;
    rd.object(*o, "slurm");
    auto job = rd.opt_str(*o, "job_id", "slurm");
    if (!job) return std::nullopt;
    SlurmContext s;
    s.job_id = *job;
    s.step_id = rd.opt_str(*o, "step_id", "slurm");
    s.node = rd.opt_str(*o, "node", "slurm");
    s.procid = rd.opt_str(*o, "procid", "slurm");
    s.step_gpus = rd.opt_str(*o, "step_gpus", "slurm");
    s.job_gpus = rd.opt_str(*o, "job_gpus", "slurm");
    s.cuda_visible_devices = rd.opt_str(*o, "cuda_visible_devices", "slurm");
    s.gpus_on_node = rd.opt_str(*o, "gpus_on_node", "slurm");
    return s;
}

// The report after its envelope, from the parsed document.
Report report_of(const Reader& rd, const J& j, Report r) {
    if (!rd.member(j, "checks"))
        rd.fail("checks", "missing: this " + r.command + " document is not a report of checks");
    const J& checks = rd.array(j, "checks", "");
    for (std::size_t i = 0; i < checks.size(); ++i)
        r.checks.push_back(read_check(rd, checks[i], "checks[" + std::to_string(i) + "]"));
    if (const J* m = rd.member(j, "machine")) read_machine(rd, *m, r.machine);
    const J& gpus = rd.array(j, "gpus", "");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        std::string at = "gpus[" + std::to_string(i) + "]";
        rd.object(gpus[i], at);
        GpuSummary g;
        auto idx = rd.integer(gpus[i], "index", at, 0, 65535);
        if (!idx) rd.fail(at + ".index", "missing");
        g.index = int(*idx);
        g.name = rd.opt_str(gpus[i], "name", at);
        g.uuid = rd.opt_str(gpus[i], "uuid", at);
        g.pci_bus_id = rd.opt_str(gpus[i], "pci_bus_id", at);
        if (auto v = rd.integer(gpus[i], "memory_total_bytes", at, 0, INT64_MAX))
            g.memory_total_bytes = std::uint64_t(*v);
        g.sku = rd.opt_str(gpus[i], "sku", at);
        g.sku_match = rd.opt_str(gpus[i], "sku_match", at);
        g.vendor = rd.opt_str(gpus[i], "vendor", at);
        r.gpus.push_back(g);
    }
    const J& series = rd.array(j, "series", "");
    for (std::size_t i = 0; i < series.size(); ++i) {
        std::string at = "series[" + std::to_string(i) + "]";
        rd.object(series[i], at);
        TimeSeries s;
        s.key = rd.str(series[i], "key", at, true);
        s.unit = rd.str(series[i], "unit", at);
        s.gpu = rd.gpu_index(series[i], at);
        s.origin = rd.opt_str(series[i], "origin", at).value_or("");
        const J& t = rd.array(series[i], "t_s", at);
        const J& v = rd.array(series[i], "values", at);
        if (t.size() != v.size()) rd.fail(at, "t_s and values differ in length");
        for (std::size_t k = 0; k < t.size(); ++k) {
            if (!t[k].is_number()) rd.fail(at + ".t_s", "must hold numbers");
            if (!v[k].is_number() && !v[k].is_null()) rd.fail(at + ".values", "must hold numbers or null");
            s.t_s.push_back(t[k].get<double>());
            // An unread sample stays a gap (NaN), never a zero.
            s.values.push_back(v[k].is_null() ? std::nan("") : v[k].get<double>());
        }
        r.series.push_back(std::move(s));
    }
    const J& errors = rd.array(j, "errors", "");
    for (std::size_t i = 0; i < errors.size(); ++i)
        r.errors.push_back(read_error(rd, errors[i], "errors[" + std::to_string(i) + "]"));
    r.interrupted = rd.boolean(j, "interrupted", "report");
    r.interrupted_during = rd.str(j, "interrupted_during", "report");
    if (const J* f = rd.member(j, "fatal")) r.fatal = read_error(rd, *f, "fatal");
    // The verdict and exit code are folded again from the checks, as the run did; a document whose
    // stated verdict disagrees with its own checks was edited.
    std::string stated = rd.str(j, "verdict", "report");
    r.finalize();
    if (!stated.empty() && run_verdict_of(rd, stated) != r.verdict)
        rd.fail("verdict",
                "says " + stated + " but its checks make it " + to_string(r.verdict) + ": the file was edited");
    r.slurm = read_slurm(rd, j);
    return r;
}

}  // namespace

Report parse_report(std::string_view text, const std::string& origin) {
    J j = parse_json(text, origin);
    Reader rd{origin};
    Report r;
    read_envelope(rd, j, r);
    return report_of(rd, j, std::move(r));
}

ReportDocument read_document(std::string_view text, const std::string& origin) {
    J j = parse_json(text, origin);
    Reader rd{origin};
    Report r;
    ReportDocument d;
    d.kind = read_envelope(rd, j, r);
    if (rd.member(j, "checks")) d.report = report_of(rd, j, std::move(r));
    return d;
}

Report read_report_file(const std::string& path) {
    return parse_report(read_input_file(path, "report", kReportFileLimitBytes), path);
}

}  // namespace gpuvet
