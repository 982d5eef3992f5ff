// The check x GPU view of a report that the compact scorecard, Markdown and HTML all print: one row
// per per-GPU check, one column per GPU, and the box-level results beside it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct GridRow {
    std::string key;                            // "gpu.memory_bandwidth"
    std::string title;                          // "Device memory bandwidth"
    std::map<int, const CheckResult*> per_gpu;  // GPU index -> its result (absent: not run there)
};

struct ResultGrid {
    std::vector<int> gpus;                // columns: the report's GPUs, then any other a result names
    std::vector<GridRow> rows;            // per-GPU checks, in the order they ran
    std::vector<const CheckResult*> box;  // results of no one GPU, in the order they ran
};

ResultGrid build_grid(const Report& r);

// The figure that says most about a result: of the graded figures, the one graded worst, then the
// one lowest against its spec; else the first figure with a value. nullptr when none has one.
const Measurement* key_figure(const CheckResult& c);
// The key figure in a few characters for a cell: "90%" of spec when the datasheet gives one,
// else the value with a short unit ("63°C", "0", "455W"); empty when there is no figure or it is
// longer than `max_chars`.
std::string short_figure(const CheckResult& c, std::size_t max_chars = 6);
// One character per verdict for the matrix: ✓ ! ✗ – E.
const char* verdict_mark(Verdict v);

}  // namespace gpuvet
