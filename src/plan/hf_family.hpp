// Which config.json architectures the planner reads, and how: a model_type with rules of its own
// (known), one read as a llama-style decoder from the standard fields with a note saying so
// (generic), or one whose layers are not a transformer block the planner counts (refused).
#pragma once
#include <string>
#include <vector>

#include "plan/hf_config.hpp"

namespace gpuvet {

enum class FamilyKind { Known, Generic, Refused };

struct Family {
    FamilyKind kind = FamilyKind::Generic;
    std::string what;  // refused: what the model is ("an encoder-decoder"), and the evidence
};

// From the model_type (lower case; empty when the config has none) and the tell-tale fields
// (is_encoder_decoder, state-space sizes, a diffusers _class_name, BERT-style token types).
Family classify_family(const std::string& model_type, const FieldSource& f);

// The standard decoder fields as the config states them: "hidden_size=4096" for each present
// (under whichever alias it uses), and the required ones that are absent.
struct FieldReport {
    std::vector<std::string> used, missing;
};
FieldReport standard_fields(const FieldSource& f);

// "a, b, c", or "none".
std::string joined(const std::vector<std::string>& names);

}  // namespace gpuvet
