#include "train/python_script.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace gpuvet::embedded {
std::string_view py_train_bench();
std::string_view py_software_probe();
}  // namespace gpuvet::embedded

namespace gpuvet {

std::string_view train_bench_script() { return embedded::py_train_bench(); }
std::string_view software_probe_script() { return embedded::py_software_probe(); }

namespace {

std::string fmt_s(double s) { return std::to_string(int(s + 0.5)) + " s"; }

std::string with_stderr(std::string msg, const ChildOutcome& c) {
    std::string tail = last_lines(c.stderr_tail);
    if (tail.empty()) tail = last_lines(c.stdout_tail);
    return tail.empty() ? msg + " (it wrote nothing to stderr)" : msg + "; its last lines: " + tail;
}

// A private folder for the script: multiprocessing's spawn start method needs a file to import.
struct ScriptFile {
    std::filesystem::path dir, file;
    ScriptFile(std::string_view text, const std::string& name) {
        const char* tmp = std::getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuvet-py-XXXXXX";
        if (!mkdtemp(tmpl.data()))
            throw runtime_error("could not create a temporary folder in " + tmpl.substr(0, tmpl.rfind('/')),
                                "set TMPDIR to a writable folder");
        dir = tmpl;
        file = dir / name;
        std::ofstream f(file, std::ios::binary);
        f.write(text.data(), std::streamsize(text.size()));
        if (!f) throw runtime_error("could not write " + file.string(), "set TMPDIR to a writable folder");
    }
    ~ScriptFile() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

}  // namespace

ScriptOutcome interpret(const ChildOutcome& c, const ScriptRun& run) {
    ScriptOutcome out;
    out.stderr_tail = c.stderr_tail;
    out.elapsed_s = c.elapsed_s;
    const std::string who = run.python + " " + run.name;
    auto failed = [&](ScriptFailure f, std::string msg) {
        out.failure = f;
        out.message = std::move(msg);
        return out;
    };
    switch (c.end) {
        case ChildEnd::NotStarted: return failed(ScriptFailure::NotStarted, c.start_error);
        case ChildEnd::Stopped: return failed(ScriptFailure::Interrupted, "interrupted: " + who + " was ended");
        case ChildEnd::Hung:
            return failed(ScriptFailure::Hung, with_stderr(who + " hung: no progress for " + fmt_s(run.idle_timeout_s) +
                                                               ", so its process group was killed",
                                                           c));
        case ChildEnd::TimedOut:
            return failed(ScriptFailure::TimedOut,
                          with_stderr(who + " ran past " + fmt_s(run.total_timeout_s) + " and was killed", c));
        case ChildEnd::Signaled:
            return failed(
                ScriptFailure::Crashed,
                with_stderr(who + " died of signal " + std::to_string(c.signal) + " (" + strsignal(c.signal) + ")", c));
        case ChildEnd::Exited: break;
    }
    if (!c.result) {
        std::string how =
            c.exit_status == 0 ? "exited without a result" : "failed with exit status " + std::to_string(c.exit_status);
        return failed(c.exit_status == 0 ? ScriptFailure::NoResult : ScriptFailure::Crashed,
                      with_stderr(who + " " + how, c));
    }
    try {
        out.result = nlohmann::json::parse(*c.result);
    } catch (const nlohmann::json::exception&) {
        return failed(ScriptFailure::Garbage,
                      who + " wrote a result that is not JSON: '" + c.result->substr(0, 200) + "'");
    }
    if (!out.result.is_object())
        return failed(ScriptFailure::Garbage,
                      who + " wrote a result that is not a JSON object: '" + c.result->substr(0, 200) + "'");
    return out;
}

ScriptOutcome run_script(const ScriptRun& run) {
    ScriptFile file(run.script, run.name);
    CleanupPath on_second_signal(file.file);
    ChildOptions o;
    // -u: unbuffered, so heartbeats arrive as written; -B: no .pyc beside the temporary script.
    o.argv = {run.python, "-u", "-B", file.file.string()};
    o.argv.insert(o.argv.end(), run.args.begin(), run.args.end());
    o.env = run.env;
    o.env.emplace_back("PYTHONUNBUFFERED", "1");
    o.idle_timeout_s = run.idle_timeout_s;
    o.total_timeout_s = run.total_timeout_s;
    o.stop = run.stop;
    o.on_progress = run.on_progress;
    return interpret(run_child(o), run);
}

}  // namespace gpuvet
