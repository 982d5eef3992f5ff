#include "report/json.hpp"

#include <cmath>

namespace gpuvet {

namespace {

template <class T>
Json opt(const std::optional<T>& v) {
    return v ? Json(*v) : Json(nullptr);
}

// JSON has no NaN or infinity; a non-finite figure is reported as absent.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json opt_number(const std::optional<double>& v) { return v ? number(*v) : Json(nullptr); }

Json to_json(const Reference& r) {
    Json j;
    j["spec"] = opt_number(r.spec);
    j["expected_fraction"] = opt_number(r.expected_fraction);
    j["warn_below"] = opt_number(r.warn_below);
    j["fail_below"] = opt_number(r.fail_below);
    j["warn_above"] = opt_number(r.warn_above);
    j["fail_above"] = opt_number(r.fail_above);
    j["expected_text"] = r.expected_text.empty() ? Json(nullptr) : Json(r.expected_text);
    j["source"] = r.source;
    return j;
}

Json to_json(const ReportError& e) {
    return Json{{"where", e.where}, {"kind", e.kind}, {"message", e.message}, {"advice", e.advice}};
}

Json to_json(const DriverInfo& d) {
    Json j;
    j["present"] = d.present;
    j["absent_reason"] = d.present ? Json(nullptr) : Json(d.absent_reason);
    j["cuda_usable"] = d.cuda_usable;
    j["cuda_absent_reason"] = d.cuda_usable ? Json(nullptr) : Json(d.cuda_absent_reason);
    Json problems = Json::array();
    for (const DriverProblem& p : d.problems)
        problems.push_back({{"headline", p.headline}, {"message", p.message}, {"advice", p.advice}});
    j["problems"] = problems;
    j["driver_version"] = opt(d.driver_version);
    j["cuda_driver_version"] = opt(d.cuda_driver_version);
    j["nvml_version"] = opt(d.nvml_version);
    j["libcuda_path"] = opt(d.libcuda_path);
    j["libnvml_path"] = opt(d.libnvml_path);
    // AMD's side, in documents whose run looked for it (docs/report-schema.md).
    if (d.amd_looked_for()) {
        j["nvidia_found"] = d.nvidia_found;
        j["amd"] = Json{{"present", d.amd_present},
                        {"absent_reason", d.amd_present ? Json(nullptr) : Json(d.amd_absent_reason)},
                        {"driver_version", opt(d.amd_driver_version)},
                        {"library", opt(d.amd_library)},
                        {"library_path", opt(d.amd_library_path)}};
    }
    return j;
}

}  // namespace

Json to_json(const Measurement& m) {
    Json j;
    j["key"] = m.key;
    j["label"] = m.label;
    j["unit"] = m.unit;
    j["value"] = m.value ? number(*m.value) : Json(nullptr);
    if (m.text) j["text"] = *m.text;
    j["absent_reason"] = m.present() ? Json(nullptr) : Json(m.absent_reason);
    j["reference"] = m.reference ? to_json(*m.reference) : Json(nullptr);
    j["gpu"] = opt(m.gpu);
    return j;
}

Json to_json(const CheckResult& c) {
    Json j;
    j["key"] = c.key;
    j["title"] = c.title;
    j["gpu"] = opt(c.gpu);
    j["verdict"] = to_string(c.verdict);
    j["summary"] = c.summary;
    j["measurements"] = Json::array();
    for (auto& m : c.measurements) j["measurements"].push_back(to_json(m));
    j["findings"] = Json::array();
    for (auto& f : c.findings)
        j["findings"].push_back(Json{{"verdict", to_string(f.verdict)},
                                     {"text", f.text},
                                     {"measurement", f.measurement.empty() ? Json(nullptr) : Json(f.measurement)}});
    j["details"] = c.details;
    j["duration_s"] = number(c.duration_s);
    return j;
}

Json to_json(const MachineInfo& m) {
    Json j;
    j["hostname"] = opt(m.hostname);
    j["cpu_model"] = opt(m.cpu_model);
    j["cpu_sockets"] = opt(m.cpu_sockets);
    j["cpu_cores"] = opt(m.cpu_cores);
    j["cpu_threads"] = opt(m.cpu_threads);
    j["cpu_quota"] = opt_number(m.cpu_quota);
    j["cpuset_cpus"] = opt(m.cpuset_cpus);
    j["memory_total_bytes"] = opt(m.memory_total_bytes);
    j["memory_limit_bytes"] = opt(m.memory_limit_bytes);
    j["numa_nodes"] = opt(m.numa_nodes);
    j["os"] = opt(m.os);
    j["kernel"] = opt(m.kernel);
    j["architecture"] = opt(m.architecture);
    j["virtualization"] = opt(m.virtualization);
    j["container"] = opt(m.container);
    j["driver"] = to_json(m.driver);
    return j;
}

Json to_json(const Envelope& e) {
    Json j;
    j["schema_version"] = e.schema_version;
    j["tool"] = e.tool;
    j["tool_version"] = e.tool_version;
    j["command"] = e.command;
    j["argv"] = e.argv;
    j["started_at"] = e.started_at;
    j["finished_at"] = e.finished_at;
    j["duration_s"] = number(e.duration_s);
    return j;
}

std::string render_document(const Envelope& e, const Json& body) {
    Json j = to_json(e);
    for (auto& [k, v] : body.items()) j[k] = v;
    return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Json to_json(const Report& r) {
    Json j = to_json(static_cast<const Envelope&>(r));
    j["verdict"] = to_string(r.verdict);
    j["exit_code"] = r.exit_code;
    j["interrupted"] = r.interrupted;
    j["interrupted_during"] = r.interrupted_during.empty() ? Json(nullptr) : Json(r.interrupted_during);
    j["fatal"] = r.fatal ? to_json(*r.fatal) : Json(nullptr);
    j["machine"] = to_json(r.machine);
    j["gpus"] = Json::array();
    for (auto& g : r.gpus) {
        Json jg{{"index", g.index},
                {"name", opt(g.name)},
                {"uuid", opt(g.uuid)},
                {"pci_bus_id", opt(g.pci_bus_id)},
                {"memory_total_bytes", opt(g.memory_total_bytes)},
                {"sku", opt(g.sku)},
                {"sku_match", opt(g.sku_match)}};
        if (g.vendor) jg["vendor"] = *g.vendor;  // AMD GPUs, and every GPU of a box with both vendors
        j["gpus"].push_back(jg);
    }
    j["checks"] = Json::array();
    for (auto& c : r.checks) j["checks"].push_back(to_json(c));
    j["series"] = Json::array();
    for (auto& s : r.series) {
        Json v = Json::array();
        for (double x : s.values) v.push_back(number(x));
        Json one{{"key", s.key}, {"unit", s.unit}, {"gpu", opt(s.gpu)}, {"t_s", s.t_s}, {"values", v}};
        if (!s.origin.empty()) one["origin"] = s.origin;
        j["series"].push_back(std::move(one));
    }
    j["errors"] = Json::array();
    for (auto& e : r.errors) j["errors"].push_back(to_json(e));
    return j;
}

// Invalid UTF-8 (an argument, a name from a user file) is replaced, not thrown: a fatal error's
// JSON document must always come out.
std::string render_json(const Report& r) {
    return to_json(r).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpuvet
