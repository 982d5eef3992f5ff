// Terminal views of the spec database: list, show, compare.
#pragma once
#include <string>
#include <vector>

#include "report/style.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

std::string render_specs_list(const SpecDb& db, const Style& st);
std::string render_spec_show(const GpuSpec& s, const Style& st);
// Side by side, each value with its ratio to the first SKU ("×1.43").
std::string render_specs_compare(const std::vector<const GpuSpec*>& specs, const Style& st);
// "H200 SXM 141GB (matched 'h200' by words; also: H200 NVL)" — says which SKU was chosen.
std::string describe_match(const std::string& query, const SpecMatch& m);

}  // namespace gpuvet
