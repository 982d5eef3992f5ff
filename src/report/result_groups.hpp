// Results as a person reads them, for every printer: GPUs that gave the same result are one block
// naming the GPUs, and a finding that only repeats its result's summary is not said twice.
#pragma once
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct ResultGroup {
    CheckResult result;     // the first GPU's result, its texts written for every GPU of the group
    std::vector<int> gpus;  // the GPUs that gave it, in report order; empty for a box-level result
};

// Whether two results of one check say the same once each GPU's mention of itself ("GPU 3") is
// set aside: verdict, summary, figures, findings and details.
bool same_result(const CheckResult& a, const CheckResult& b);

// `results` grouped: each per-GPU result with the later ones that are the same_result, in the
// order of their first GPU; box-level results alone.
std::vector<ResultGroup> group_results(const std::vector<const CheckResult*>& results);

// The findings worth printing under `c`'s summary: every one but those whose words the summary
// already holds (the summary is usually the worst finding, said first).
std::vector<const Finding*> findings_beyond_summary(const CheckResult& c);
// Whether a finding's or detail's `line` only repeats `c`'s summary.
bool repeats_summary(const CheckResult& c, const std::string& line);

// "0-3, 5, 7" for a sorted list of GPU indexes.
std::string gpu_ranges(const std::vector<int>& gpus);
// "GPU 3" / "GPUs 0-3, 5": the words a printer puts for a group's GPUs.
std::string gpus_label(const std::vector<int>& gpus);

}  // namespace gpuvet
