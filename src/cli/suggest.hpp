// "Did you mean": the closest command or option name to what was typed.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace gpuvet {

// For an argv the parser rejected: a hint naming the right command or option, or nullopt.
std::optional<std::string> suggest_fix(const CLI::App& app, int argc, const char* const* argv);

}  // namespace gpuvet
