// The words every printer uses for the same things: a measured figure and its reference, and the
// verdict line. The terminal, Markdown and HTML read them here, so they agree.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

// "3.01 TB/s" for one measurement's value (its text, or "— (reason)" when absent).
std::string render_measurement_value(const Measurement& m);
// "90% of spec 3.35 · healthy ≈90% · warn < 2.8 · floor 2.51 [source]" for its reference.
std::string render_reference(const Measurement& m);
// A reference with a threshold the verdict was decided by, not only a spec or a note on the method.
bool has_threshold(const std::optional<Reference>& r);

// "NO-GO", "GO (with warnings)", ...: the words of the verdict line, without the tally.
std::string verdict_headline(const Report& r);
// The same, with `stopped` saying what an interruption left out ("interrupted during gpu.burn, 3
// not run"), or empty.
std::string verdict_word(const Report& r, const std::string& stopped);
// "12 passed, 0 warned, 1 failed, 2 skipped, 0 errors"
std::string verdict_tally(const Report& r);
// The checks a stop kept from running, per-GPU ones once with their GPUs: ("gpu.gemm", "2, 3").
std::vector<std::pair<std::string, std::string>> not_run_checks(const Report& r);

}  // namespace gpuvet
