// The one table of what `gpuvet top` shows per GPU: key, unit, and the getter that reads it from a
// GPU's fixed facts and its latest reading. --json, --log (CSV and JSON Lines), --once and the
// screen all read values through this table, so they cannot disagree. Keys are nvidia-smi's
// --query-gpu names where it has the field; gpuvet's own ("pcie.rx", "gpm.sm_active") otherwise.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "monitor/gpu_monitor.hpp"
#include "core/units.hpp"

namespace gpuvet {

struct GpuView {
    const MonitoredGpu& gpu;
    const GpuReading& reading;
};

// A number in the field's unit, a text, or absent with the reason (never 0 for unknown).
struct FieldValue {
    std::optional<double> number;
    std::optional<std::string> text;
    std::string absent_reason;
    bool present() const { return number || text; }
};

enum class FieldKind { Number, Text };

struct TopField {
    std::string_view key;   // "memory.used"
    std::string_view unit;  // "MiB"; empty for texts and counts
    FieldKind kind;
    int decimals;  // digits after the point in text outputs (CSV, --once)
    std::string_view doc;
    FieldValue (*get)(const GpuView&);
};

// Every field, in the order the outputs list them.
std::span<const TopField> top_fields();
// The field with this key; throws std::logic_error for a key the table lacks (a programming slip).
const TopField& top_field(std::string_view key);
// A value as text for tables and CSV: the number with the field's decimals, the text, or "".
std::string field_text(const TopField& f, const FieldValue& v);

inline constexpr double kMBps = 1e6;  // decimal MB/s, as nvidia-smi dmon prints rxpci/txpci

}  // namespace gpuvet
