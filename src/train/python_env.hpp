// Which Python runs the framework scripts: the one the renter will train with. In order: --python,
// an active virtualenv ($VIRTUAL_ENV/bin/python), an active conda environment
// ($CONDA_PREFIX/bin/python), then python3 and python on $PATH.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace gpuvet {

struct PythonChoice {
    std::string path;  // the interpreter to execute
    std::string how;   // "--python", "$VIRTUAL_ENV", "$CONDA_PREFIX", "PATH"
};

struct PythonLookup {
    std::optional<PythonChoice> found;
    std::string absent_reason;  // when !found: where it looked
};

using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup process_env();

// `given`: --python as typed. A --python that is not an executable file is a usage error (exit 2).
PythonLookup find_python(const std::optional<std::string>& given, const EnvLookup& env = process_env());

}  // namespace gpuvet
