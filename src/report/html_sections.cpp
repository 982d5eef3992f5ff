#include "report/html_sections.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "core/clock_reasons.hpp"
#include "core/strings.hpp"
#include "report/html_style.hpp"
#include "report/svg.hpp"
#include "report/wording.hpp"

namespace gpuvet {

std::string figure_title(const Measurement& m) {
    std::string t = m.label + ": " + render_measurement_value(m);
    std::string ref = render_reference(m);
    if (!ref.empty()) t += " · " + ref;
    return t;
}

std::string html_page(const std::string& title, const std::string& body, const std::string& footer) {
    // The policy forbids every fetch: the page is one file, and a mail client or browser opening it
    // goes nowhere.
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "img-src data:\">"
           "<meta name=\"color-scheme\" content=\"light dark\"><title>" +
           escape_html(title) + "</title><style>" + kHtmlStyle + "</style></head><body>" + body +
           "<footer class=\"note\">" + footer + "</footer></body></html>\n";
}

std::string html_spec_bars(const ResultGrid& g) {
    std::string out;
    for (auto& row : g.rows) {
        std::vector<Bar> bars;
        std::string figure_label, source;
        for (int gpu : g.gpus) {
            auto it = row.per_gpu.find(gpu);
            if (it == row.per_gpu.end()) continue;
            const Measurement* m = key_figure(*it->second);
            if (!m || !m->reference || !m->reference->spec || *m->reference->spec <= 0) continue;
            const Reference& ref = *m->reference;
            Bar b;
            b.label = "GPU " + std::to_string(gpu);
            b.share = *m->value / *ref.spec;
            if (ref.expected_fraction) {
                // The healthy band: from the warn bound (or 5 points under the typical share) to it.
                b.healthy_hi = *ref.expected_fraction;
                b.healthy_lo = ref.warn_below ? *ref.warn_below / *ref.spec : *ref.expected_fraction - 0.05;
            }
            if (ref.fail_below) b.floor_share = *ref.fail_below / *ref.spec;
            b.verdict = it->second->verdict;
            b.title = "GPU " + std::to_string(gpu) + " " + figure_title(*m);
            figure_label = m->label;
            source = ref.source;
            bars.push_back(b);
        }
        if (bars.empty()) continue;
        std::string caption = row.key + ": " + figure_label + " against the spec";
        out += "<figure class=\"chart-box\">" + svg_bars(bars, caption) + "<figcaption><code>" + escape_html(row.key) +
               "</code> " + escape_html(figure_label) + " as % of spec; shaded: the healthy band; tick: the floor" +
               (source.empty() ? "" : "<br><small>source: " + escape_html(source) + "</small>") +
               "</figcaption></figure>";
    }
    if (out.empty()) return {};
    return "<section id=\"bars\"><h2>Measured against the spec, per GPU</h2><div class=\"grid\">" + out +
           "</div></section>";
}

namespace {

// "burn.temperature_c" -> group "burn", name "temperature_c".
std::pair<std::string, std::string> split_key(const std::string& key) {
    auto dot = key.find('.');
    if (dot == std::string::npos) return {"", key};
    return {key.substr(0, dot), key.substr(dot + 1)};
}

// The clock-event reasons a mask holds, by name (nvml.h's bits); `fault`: any DCGM fails on.
std::string reason_names(std::uint64_t mask, bool& fault) {
    namespace cr = clock_reason;
    static const std::pair<std::uint64_t, const char*> names[] = {
        {cr::kSwPowerCap, "SW_POWER_CAP"},
        {cr::kHwSlowdown, "HW_SLOWDOWN"},
        {cr::kSwThermalSlowdown, "SW_THERMAL"},
        {cr::kHwThermalSlowdown, "HW_THERMAL"},
        {cr::kHwPowerBrakeSlowdown, "HW_POWER_BRAKE"},
        {cr::kSyncBoost, "SYNC_BOOST"},
        {cr::kApplicationsClocksSetting, "APPLICATIONS_CLOCKS"},
        {cr::kDisplayClockSetting, "DISPLAY_CLOCK"}};
    std::string out;
    for (auto& [bit, name] : names)
        if (mask & bit) {
            if (!out.empty()) out += '|';
            out += name;
        }
    fault = (mask & cr::kFailMask) != 0;
    return out;
}

// Intervals where a bitmask series holds a reason other than idle, one row per series.
std::vector<Band> mask_bands(const TimeSeries& s, std::size_t row) {
    std::vector<Band> out;
    std::string last;
    for (std::size_t i = 0; i < s.values.size() && i < s.t_s.size(); ++i) {
        double v = s.values[i];
        if (!std::isfinite(v) || v < 0 || v >= 18446744073709551616.0) {  // not a 64-bit mask
            last.clear();
            continue;
        }
        bool fault = false;
        std::string names = reason_names(static_cast<std::uint64_t>(v), fault);
        if (names.empty()) {
            last.clear();
            continue;
        }
        double to = i + 1 < s.t_s.size() ? s.t_s[i + 1] : s.t_s[i];
        std::string title = (s.gpu ? "GPU " + std::to_string(*s.gpu) : s.key) + ": " + names;
        if (!out.empty() && last == title) out.back().to_s = to;
        else out.push_back({s.t_s[i], to, row, fault, title});
        last = title;
    }
    return out;
}

// One value for every sample of every series: said in words, not drawn as a flat line.
std::optional<double> constant_value(const std::vector<const TimeSeries*>& series) {
    std::optional<double> v;
    for (const TimeSeries* s : series)
        for (double x : s->values) {
            if (!std::isfinite(x)) continue;
            if (v && *v != x) return std::nullopt;
            v = x;
        }
    return v;
}

std::string colour_key(const std::vector<const TimeSeries*>& series) {
    if (series.size() == 1 && !series.front()->gpu) return {};  // one line, named by its caption
    std::string out = "<p class=\"key note\">";
    for (std::size_t i = 0; i < series.size(); ++i)
        out += "<span><i class=\"s" + std::to_string(i % 8) + "\"></i>" +
               escape_html(series[i]->gpu ? "GPU " + std::to_string(*series[i]->gpu) : series[i]->key) + "</span>";
    return out + "</p>";
}

std::string group_charts(const std::string& group, const std::vector<std::string>& keys,
                         std::map<std::string, std::vector<const TimeSeries*>>& by_key,
                         const std::vector<const TimeSeries*>& masks) {
    std::string out = "<h3>" + escape_html(group.empty() ? "series" : group) + "</h3>";
    std::string flat, charts;
    const std::vector<const TimeSeries*>* first = nullptr;
    double t0 = 1e300, t1 = -1e300;
    for (auto& key : keys) {
        const auto& series = by_key[key];
        for (const TimeSeries* s : series)
            if (!s->t_s.empty()) t0 = std::min(t0, s->t_s.front()), t1 = std::max(t1, s->t_s.back());
        std::string name = split_key(key).second, unit = series.front()->unit;
        if (auto c = constant_value(series)) {
            flat += "<li data-series=\"" + escape_html(key) + "\"><code>" + escape_html(name) +
                    "</code>: " + escape_html(format_number(*c, 4) + " " + unit) + " in every sample" +
                    (series.size() > 1 ? " of every GPU" : "") + "</li>";
            continue;
        }
        if (!first) first = &series;
        std::vector<Line> lines;
        for (const TimeSeries* s : series)
            lines.push_back({s->gpu ? "GPU " + std::to_string(*s->gpu) : key, s->t_s, s->values});
        charts += "<figure class=\"chart-box\" data-series=\"" + escape_html(key) + "\">" +
                  svg_lines(lines, unit, key) + "<figcaption><code>" + escape_html(name) + "</code> (" +
                  escape_html(unit) + ")</figcaption></figure>";
    }
    if (first) out += colour_key(*first);
    if (!masks.empty()) {
        std::vector<std::string> rows;
        std::vector<Band> bands;
        for (const TimeSeries* m : masks) {
            auto b = mask_bands(*m, rows.size());
            bands.insert(bands.end(), b.begin(), b.end());
            rows.push_back(m->gpu ? "GPU " + std::to_string(*m->gpu) : split_key(m->key).second);
            if (!m->t_s.empty()) t0 = std::min(t0, m->t_s.front()), t1 = std::max(t1, m->t_s.back());
        }
        if (t0 > t1) t0 = 0, t1 = 1;
        charts = "<figure class=\"chart-box\" data-series=\"clock-event-reasons\">" +
                 svg_bands(rows, bands, t0, t1, group + ": clock-event reasons") +
                 "<figcaption>Clock-event reasons per GPU: red, the hardware slows itself (HW slowdown, thermal, power "
                 "brake: DCGM fails on these); amber, the power cap holds the clocks (normal under full load). Hover "
                 "a band for its reasons.</figcaption></figure>" +
                 charts;
    }
    out += "<div class=\"grid\">" + charts + "</div>";
    if (!flat.empty()) out += "<ul class=\"note\">" + flat + "</ul>";
    return out;
}

}  // namespace

std::string html_timeline(const Report& r) {
    return html_series_timeline(r.series, [](const std::string& key) { return split_key(key).first; });
}

std::string html_series_timeline(const std::vector<TimeSeries>& series,
                                 const std::function<std::string(const std::string&)>& group_of) {
    if (series.empty()) return {};
    // Groups in the order met; per group its numeric keys and its bitmask series.
    std::vector<std::string> groups;
    std::map<std::string, std::vector<std::string>> keys;
    std::map<std::string, std::vector<const TimeSeries*>> by_key, masks;
    for (auto& s : series) {
        std::string group = group_of(s.key);
        if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
        if (s.unit == "bitmask") {
            masks[group].push_back(&s);
            continue;
        }
        auto& k = keys[group];
        if (std::find(k.begin(), k.end(), s.key) == k.end()) k.push_back(s.key);
        by_key[s.key].push_back(&s);
    }
    std::string out =
        "<section id=\"timeline\"><h2>Timeline</h2><p class=\"note\">Seconds since the run "
        "started; one line per GPU.</p>";
    for (auto& group : groups) out += group_charts(group, keys[group], by_key, masks[group]);
    return out + "</section>";
}

std::string html_p2p(const Report& r) {
    // At most 3 digits: a box has tens of GPUs, and an edited report cannot ask for a huge map.
    static const std::regex pair_key(R"(uni_gbps_(\d{1,3})_(\d{1,3}))");
    for (auto& c : r.checks) {
        if (c.key != "gpu.p2p") continue;
        std::map<std::pair<int, int>, double> v;
        int n = 0;
        for (auto& m : c.measurements) {
            std::smatch mt;
            if (!m.value || !std::regex_match(m.key, mt, pair_key)) continue;
            int a = std::stoi(mt[1]), b = std::stoi(mt[2]);
            if (a >= 128 || b >= 128) continue;
            v[{a, b}] = *m.value;
            n = std::max(n, std::max(a, b) + 1);
        }
        if (v.empty()) return {};
        const std::size_t size = std::size_t(n);
        std::vector<std::vector<std::optional<double>>> cells(size, std::vector<std::optional<double>>(size));
        for (auto& [k, x] : v) cells[std::size_t(k.first)][std::size_t(k.second)] = x;
        std::vector<std::string> labels;
        for (int i = 0; i < n; ++i) labels.push_back(std::to_string(i));
        std::string out = "<section id=\"p2p\"><h2>GPU to GPU bandwidth</h2><figure class=\"chart-box heat-box\">" +
                          svg_heatmap(cells, labels, "GB/s", "GPU to GPU copy bandwidth, GB/s one way") +
                          "<figcaption>GB/s one way, row → column (darker: slower). " + escape_html(c.summary) +
                          "</figcaption></figure>";
        // The topology the check printed (links and levels), as it printed it.
        std::string topo;
        for (auto& d : c.details) topo += d + "\n";
        for (auto& t : r.checks)
            if (t.key == "gpu.nvlink" && t.verdict != Verdict::Skip) {
                for (auto& m : t.measurements)
                    if (m.present())
                        topo += "GPU " + (t.gpu ? std::to_string(*t.gpu) : std::string("-")) + " " + m.label + ": " +
                                render_measurement_value(m) + "\n";
            }
        if (!topo.empty())
            out += "<details><summary>Matrices and links as measured</summary><pre>" + escape_html(topo) +
                   "</pre></details>";
        return out + "</section>";
    }
    return {};
}

std::string html_host(const Report& r) {
    std::string rows;
    for (auto& c : r.checks) {
        if (!starts_with(c.key, "host.")) continue;
        for (auto& m : c.measurements)
            rows += "<tr><td><code>" + escape_html(c.key) + "</code></td><td>" + escape_html(m.label) +
                    "</td><td class=\"num\" title=\"" + escape_html(figure_title(m)) + "\">" +
                    escape_html(render_measurement_value(m)) + "</td><td>" + escape_html(render_reference(m)) +
                    "</td></tr>";
    }
    if (rows.empty()) return {};
    return "<section id=\"host\"><h2>Host</h2><div class=\"scroll\"><table><thead><tr><th>check</th><th>figure</th>"
           "<th>measured</th><th>reference and source</th></tr></thead><tbody>" +
           rows + "</tbody></table></div></section>";
}

}  // namespace gpuvet
