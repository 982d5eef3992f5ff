// The one results model. Checks fill it; printers (terminal, JSON, ...) only read it.
// Principle: a value is measured, or absent with a reason. Never 0 for unknown.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/slurm_context.hpp"

namespace gpuvet {

// The version of every JSON document gpuvet writes (docs/report-schema.md). 2: the report's
// "verdict" became the run's outcome, "interrupted_during" added. 3: one envelope for every
// document (check, bench, burn, host, inventory, specs, plan).
inline constexpr int kSchemaVersion = 3;

enum class Verdict { Pass, Warn, Fail, Skip, Error };
const char* to_string(Verdict v);
// Order used to fold verdicts into one: ERROR > FAIL > WARN > PASS > SKIP.
int severity(Verdict v);
Verdict worst(Verdict a, Verdict b);

// The verdict of a whole run, what a script acts on. Only Go and GoWithWarnings exit 0.
enum class RunVerdict {
    Go,              // every check that ran passed, and the run completed
    GoWithWarnings,  // the same, with warnings
    NoGo,            // a check failed (also when the run was then interrupted)
    Incomplete,      // interrupted, or a check could not run, before anything failed
    CouldNotRun,     // nothing was checked: every check skipped or not run, or a fatal error
};
const char* to_string(RunVerdict v);  // the JSON words: PASS, WARN, FAIL, INCOMPLETE, COULD_NOT_RUN

// The measurement's reason when a stop (Ctrl-C, SIGTERM) cut it short, and the summary of a check
// that a stop kept from running.
inline constexpr const char* kInterrupted = "interrupted";
inline constexpr const char* kNotRunInterrupted = "not run: interrupted";

// What a measurement was held against. Every number here carries its source.
struct Reference {
    std::optional<double> spec;               // datasheet value, same unit as the measurement
    std::optional<double> expected_fraction;  // what healthy hardware reaches, as a fraction of spec
    std::optional<double> warn_below;         // absolute: below this -> WARN
    std::optional<double> fail_below;         // absolute: below this -> FAIL (the floor)
    std::optional<double> fail_above;         // absolute: above this -> FAIL (temperatures, errors)
    std::optional<double> warn_above;
    std::string expected_text;  // for non-numeric expectations ("H100 SXM5 80GB")
    std::string source;         // where the spec/floor comes from
};

// The one grading rule: FAIL past a fail bound, WARN past a warn bound, else PASS.
Verdict grade(double value, const Reference& r);

struct Measurement {
    std::string key;    // stable, unit in the name: "copy_gbps", "memory_total_bytes"
    std::string label;  // human words: "Device copy"
    std::string unit;   // "GB/s", "TFLOPS", "GiB", "bytes", "MHz", "W", "C", "%", "count", ""
    std::optional<double> value;
    std::optional<std::string> text;  // for textual facts (a model name, a mode)
    std::string absent_reason;        // set when neither value nor text is present
    std::optional<Reference> reference;
    std::optional<int> gpu;  // GPU index, when the figure belongs to one GPU

    bool present() const { return value.has_value() || text.has_value(); }

    static Measurement number(std::string key, std::string label, double v, std::string unit);
    static Measurement textual(std::string key, std::string label, std::string t);
    static Measurement absent(std::string key, std::string label, std::string unit, std::string reason);
    // A number read from the OS that may be missing: the value, or absent with `why_absent`.
    template <class T>
    static Measurement maybe(std::string key, std::string label, const std::optional<T>& v, std::string unit,
                             std::string why_absent) {
        if (!v) return absent(std::move(key), std::move(label), std::move(unit), std::move(why_absent));
        return number(std::move(key), std::move(label), double(*v), std::move(unit));
    }
    Measurement& against(Reference r) {
        reference = std::move(r);
        return *this;
    }
    Measurement& on_gpu(int index) {
        gpu = index;
        return *this;
    }
};

// A judged statement about the machine: its verdict, its words with the numbers behind them,
// and the measurement it judges when one does. Printers show "FAIL: <text>"; tests and JSON
// consumers read the fields.
struct Finding {
    Verdict verdict = Verdict::Pass;  // Pass: an informational line
    std::string text;
    std::string measurement;  // a Measurement::key of the same result, or empty

    Finding() = default;
    Finding(Verdict v, std::string t, std::string about = {})
        : verdict(v), text(std::move(t)), measurement(std::move(about)) {}
};

struct CheckResult;
// Folds a measurement's grade (when it has a value and a reference) into the result's verdict.
void grade_into(CheckResult& r, const Measurement& m);

struct CheckResult {
    std::string key;    // "gpu.memory_bandwidth", "host.identity"
    std::string title;  // "Device memory bandwidth"
    Verdict verdict = Verdict::Skip;
    std::string summary;     // one plain sentence that explains the verdict
    std::optional<int> gpu;  // set for per-GPU results
    std::vector<Measurement> measurements;
    std::vector<Finding> findings;     // judged statements, in the order found
    std::vector<std::string> details;  // further lines (context, tables, notes), after the findings
    double duration_s = 0;
};

// A sampled signal, for telemetry (burn, run) and progress curves.
struct TimeSeries {
    std::string key;   // "temperature_c"
    std::string unit;  // "C"
    std::optional<int> gpu;
    std::vector<double> t_s;  // seconds since the report started
    std::vector<double> values;
    // How the values were obtained ("interval means of the driver's samples", "energy counter
    // differences", "point reads"); empty where the signal has one way only.
    std::string origin;
};

struct ReportError {
    std::string where;    // "gpu.inventory", "specs", "cli"
    std::string kind;     // to_string(ErrorKind)
    std::string message;  // what went wrong
    std::string advice;   // what to do about it
};

// Why the driver cannot be used as a whole, with the fix: shown first in every report.
struct DriverProblem {
    std::string headline;  // "the NVIDIA kernel module is not loaded": what skipped checks cite
    std::string message;   // the whole explanation
    std::string advice;    // what to do about it
};

struct DriverInfo {
    bool present = false;            // a GPU driver is loaded: NVML or CUDA initialised, or AMD's lists GPUs
    bool cuda_usable = false;        // cuInit succeeded: kernels and copies can run
    std::string absent_reason;       // when !present: "libcuda.so.1 could not be loaded: ..."
    std::string cuda_absent_reason;  // when !cuda_usable
    std::vector<DriverProblem> problems;
    std::optional<std::string> driver_version;  // "570.86.15"
    std::optional<int> cuda_driver_version;     // 12080 as cuDriverGetVersion returns
    std::optional<std::string> nvml_version;
    std::optional<std::string> libcuda_path;
    std::optional<std::string> libnvml_path;

    // AMD's amdgpu driver, read through AMD SMI (ROCm SMI on older stacks). Looked for when
    // amd_present or amd_absent_reason is set; reports from before both leave them empty.
    bool amd_present = false;                       // an AMD management library lists AMD GPUs
    std::string amd_absent_reason;                  // why not: the libraries' own words
    std::optional<std::string> amd_driver_version;  // the amdgpu kernel driver, "6.8.5"
    std::optional<std::string> amd_library;         // "AMD SMI 24.7.1.0", "ROCm SMI 7.0.0"
    std::optional<std::string> amd_library_path;
    bool nvidia_found = false;  // the NVIDIA side alone: NVML or CUDA initialised (`present` counts AMD's too)
    bool amd_looked_for() const { return amd_present || !amd_absent_reason.empty(); }
};

// "no GPU driver found: NVIDIA (why), AMD (why)"; "no NVIDIA driver found (why)" when AMD was not
// looked for (a report written before AMD GPUs were read).
std::string no_gpu_driver_text(const DriverInfo& d);

struct MachineInfo {
    std::optional<std::string> hostname;
    std::optional<std::string> cpu_model;
    std::optional<int> cpu_sockets;
    std::optional<int> cpu_cores;     // physical cores
    std::optional<int> cpu_threads;   // logical CPUs online
    std::optional<double> cpu_quota;  // cgroup CPU limit in CPUs, when limited
    std::optional<int> cpuset_cpus;   // CPUs allowed to this process
    std::optional<std::uint64_t> memory_total_bytes;
    std::optional<std::uint64_t> memory_limit_bytes;  // cgroup limit, when limited
    std::optional<int> numa_nodes;
    std::optional<std::string> os;  // PRETTY_NAME of os-release
    std::optional<std::string> kernel;
    std::optional<std::string> architecture;
    std::optional<std::string> virtualization;  // "none", "kvm", "vmware", ...
    std::optional<std::string> container;       // "none", "docker", "podman", "kubernetes", ...
    DriverInfo driver;
};

// A GPU as the report lists it. Inventory fills the details; later checks refer to `index`.
struct GpuSummary {
    int index = 0;
    std::optional<std::string> name;
    std::optional<std::string> uuid;
    std::optional<std::string> pci_bus_id;
    std::optional<std::uint64_t> memory_total_bytes;
    std::optional<std::string> sku;        // spec-database key it was matched to
    std::optional<std::string> sku_match;  // how: "pci-device-id", "name+memory", ...
    std::optional<std::string> vendor;     // "AMD"; set for AMD GPUs and on a box with both vendors
};

// What every document starts with: which tool wrote it, for which command, and when.
struct Envelope {
    int schema_version = kSchemaVersion;
    std::string tool = "gpuvet";
    std::string tool_version;
    std::string command;  // "check", "inventory", "plan", ...
    std::vector<std::string> argv;
    std::string started_at;  // RFC 3339 UTC
    std::string finished_at;
    double duration_s = 0;
};

struct Report : Envelope {
    MachineInfo machine;
    std::vector<GpuSummary> gpus;
    std::vector<CheckResult> checks;
    std::vector<TimeSeries> series;
    std::vector<ReportError> errors;
    bool interrupted = false;             // Ctrl-C / SIGTERM stopped the run before its end
    std::string interrupted_during;       // the check that was running when the stop came, if any
    std::optional<ReportError> fatal;     // set when the run could not complete
    Verdict worst_check = Verdict::Skip;  // worst over checks
    RunVerdict verdict = RunVerdict::CouldNotRun;
    int exit_code = 0;
    std::optional<SlurmContext> slurm;  // read back from a report made under Slurm

    // Folds the checks, `interrupted` and `fatal` into `verdict` and `exit_code`: 0 GO (warnings
    // allowed), 1 NO-GO (a check failed, interrupted or not), 3 INCOMPLETE or COULD NOT RUN.
    void finalize();
};

}  // namespace gpuvet
