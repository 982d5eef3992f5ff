#include "train/python_env.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"

namespace gpuvet {

namespace {

bool executable(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::optional<std::string> on_path(const std::string& path_var, const char* name) {
    std::size_t start = 0;
    while (start <= path_var.size()) {
        std::size_t end = path_var.find(':', start);
        if (end == std::string::npos) end = path_var.size();
        std::string dir = path_var.substr(start, end - start);
        if (!dir.empty() && executable(std::filesystem::path(dir) / name)) return dir + "/" + name;
        start = end + 1;
    }
    return std::nullopt;
}

}  // namespace

EnvLookup process_env() {
    return [](const char* name) -> std::optional<std::string> {
        const char* v = std::getenv(name);
        if (!v || !*v) return std::nullopt;
        return std::string(v);
    };
}

PythonLookup find_python(const std::optional<std::string>& given, const EnvLookup& env) {
    if (given) {
        if (!executable(*given))
            throw usage_error("--python " + *given + " is not an executable file",
                              "give the interpreter the training job uses, e.g. --python /opt/venv/bin/python");
        return {PythonChoice{*given, "--python"}, ""};
    }
    // An environment that is active but unusable is said, not skipped in silence: the job would not
    // run on the Python found after it.
    std::string passed_over;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
        if (auto root = env(var)) {
            for (const char* exe : {"bin/python", "bin/python3"}) {
                auto p = std::filesystem::path(*root) / exe;
                if (executable(p)) return {PythonChoice{p.string(), std::string("$") + var + passed_over}, ""};
            }
            passed_over += std::string("; $") + var + "=" + *root + " has no bin/python, so it was passed over";
        }
    if (auto path = env("PATH"))
        for (const char* exe : {"python3", "python"})
            if (auto p = on_path(*path, exe)) return {PythonChoice{*p, "PATH" + passed_over}, ""};
    return {std::nullopt,
            "no Python found: no --python, no usable virtualenv or conda environment, no python3 or python on PATH" +
                passed_over};
}

}  // namespace gpuvet
