// Text pieces of the full-screen monitor, pure so they are unit-tested: a fill bar, a history
// sparkline, the colour a value earns, and the process table's order.
#pragma once
#include <deque>
#include <string>
#include <vector>

#include "core/fact.hpp"
#include "monitor/process_rows.hpp"
#include "monitor/top_keys.hpp"

namespace gpuvet {

// "|||||     " of `width` cells for 0..100 %; absent: all blank.
std::string fill_bar(const Fact<double>& percent, int width);
// The last `width` samples of 0..100 % values as one character each, oldest left: Unicode
// blocks (▁..█) when `unicode`, else "_.:-=+*#%@"; an absent sample is a blank.
std::string sparkline(const std::deque<Fact<double>>& history, int width, bool unicode);

enum class Tone { Normal, Good, Warn, Bad, Dim };
// Load-like percentages (utilization, memory, power of limit): ≥ 90 Bad, ≥ 70 Warn, else Good.
Tone load_tone(const Fact<double>& percent);
// A temperature against its slowdown threshold: within 5 °C Bad, within 15 °C Warn.
Tone temperature_tone(const Fact<int>& c, const Fact<int>& slowdown_c);

// The rows the view shows, in its sort order (filtered to its GPU).
std::vector<ProcessRow> view_processes(const std::vector<ProcessRow>& rows, const ViewState& v);

}  // namespace gpuvet
