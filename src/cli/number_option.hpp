// Numeric options: each declares its rule once; the rule's range is appended to its --help line
// and every value goes through core/numbers (strict, bounded).
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "core/numbers.hpp"

namespace gpuvet {

// CLI11 runs option callbacks inside parse(), where only its own errors are handled. A value a rule
// refuses is kept here and thrown by rethrow_option_error() at main's typed-error boundary, so it
// ends like any other usage error (exit 2, advice, a JSON document under --json).
void rethrow_option_error();

CLI::Option* add_number_option(CLI::App& app, const std::string& name, double& target, const NumberRule& rule,
                               const std::string& help);
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::optional<double>& target,
                               const NumberRule& rule, const std::string& help);
// Whole numbers: the rule is applied with whole = true.
CLI::Option* add_number_option(CLI::App& app, const std::string& name, int& target, const NumberRule& rule,
                               const std::string& help);
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::int64_t& target, const NumberRule& rule,
                               const std::string& help);
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::optional<int>& target,
                               const NumberRule& rule, const std::string& help);
CLI::Option* add_number_option(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& target,
                               const NumberRule& rule, const std::string& help);

}  // namespace gpuvet
