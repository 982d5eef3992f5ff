// The pieces the terminal views share: the full scorecard (--verbose) and the compact matrix.
#pragma once
#include <sstream>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "report/result_groups.hpp"
#include "report/style.hpp"

namespace gpuvet {

// Tool, host, driver, driver problems, then the GPUs: one line each, or (`group_gpus`) one line per
// run of identical GPUs ("GPU 0-7  NVIDIA H100 80GB HBM3 · 79.6 GiB · spec: h100-sxm5-80gb").
void render_header(std::ostringstream& o, const Report& r, const Style& st, bool group_gpus);
void render_gpu_groups(std::ostringstream& o, const Report& r, const Style& st);
// One result: its verdict line, its figures and, unless it passed, its findings and details.
// `gpus`: the GPUs it stands for when several gave the same result ("0-7"); else its own.
void render_result(std::ostringstream& o, const CheckResult& c, const Style& st, const std::string& gpus = {});
// The heads of the columns render_result's lines are aligned to.
void render_column_heads(std::ostringstream& o, const Style& st);
// Errors that belong to no check, then a fatal one.
void render_errors(std::ostringstream& o, const Report& r, const Style& st);
// What a stop kept from running, then "Verdict: ... — tally · exit N".
void render_verdict(std::ostringstream& o, const Report& r, const Style& st);

}  // namespace gpuvet
