// The non-interactive outputs of `gpuvet top`, all over a TopFrame and the field table:
//  - the --once snapshot text (one line per GPU, like gpustat / nvitop -1, then the processes);
//  - the --json document body (keys from the field table, units in its "fields" list);
//  - the --log rows: a CSV header naming units ("power.draw [W]") and one row per GPU per tick,
//    or JSON Lines (a header record, then one sample record per GPU per tick).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "monitor/top_model.hpp"

namespace gpuvet {

using TopJson = nlohmann::ordered_json;

std::string render_top_once(const TopFrame& f, bool color);

// The document body (the caller adds the envelope): host, fields, gpus (each with
// absent_reasons, hints, processes).
TopJson top_to_json(const TopFrame& f);
// The "fields" list alone: key, unit, kind, doc.
TopJson top_fields_json();

std::string top_csv_header();
std::string top_csv_rows(const TopFrame& f);    // one line per GPU, newline-terminated
std::string top_jsonl_rows(const TopFrame& f);  // one line per GPU, newline-terminated

}  // namespace gpuvet
