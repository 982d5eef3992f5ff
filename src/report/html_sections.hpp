// The chart sections of the HTML report (html_report.cpp puts the page together).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "report/result_grid.hpp"

namespace gpuvet {

// Per check, one bar per GPU: its key figure against the spec, the healthy band, the floor.
std::string html_spec_bars(const ResultGrid& g);
// Every TimeSeries of the report, one chart per key with a line per GPU; a "bitmask" series (the
// burn's clock-event reasons) becomes bands under the chart of its group. Run reports' timelines
// are TimeSeries too and render here unchanged.
std::string html_timeline(const Report& r);
// The same over any series (a run report's), grouped under the headings `group_of` gives each key.
std::string html_series_timeline(const std::vector<TimeSeries>& series,
                                 const std::function<std::string(const std::string&)>& group_of);
// The GPU <-> GPU bandwidth heat map from gpu.p2p's uni_gbps_I_J figures, and its links.
std::string html_p2p(const Report& r);
// The host's figures: every measurement of the host.* results, with unit and source.
std::string html_host(const Report& r);
// The page around a body: the policy that forbids every fetch, viewport, colour scheme, the style.
std::string html_page(const std::string& title, const std::string& body, const std::string& footer);
// A figure's hover text: value with unit, spec, healthy share, floor, source.
std::string figure_title(const Measurement& m);

}  // namespace gpuvet
