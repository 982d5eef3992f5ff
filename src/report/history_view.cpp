#include "report/history_view.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "report/html_sections.hpp"
#include "report/svg.hpp"

namespace gpuvet {

using namespace history;

namespace {

// Every text the database holds (hostnames, GPU names, serials, SMBIOS ids, even box names and
// verdicts: the file is the user's, or another tool's) is one line of visible text in the terminal
// views: its control characters are shown, never obeyed, and a line break cannot forge a row.
std::string cell(const std::string& s) { return visible_text(s, false); }

std::string day_time(const std::string& at) {
    return cell(at.size() >= 16 ? at.substr(0, 10) + " " + at.substr(11, 5) : at);
}
std::string or_dash(const std::optional<std::string>& s) { return s && !s->empty() ? cell(*s) : "-"; }

std::string pad(const std::string& text, std::size_t w) {
    std::string s = cell(text);
    return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

std::string figure(double v, const std::string& unit) {
    std::string out = format_number(v, 4);
    if (!unit.empty() && unit != "count") out.append(" ").append(cell(unit));
    return out;
}

Json opt_json(const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); }
Json opt_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

namespace {

std::string move_text(const HostnameChange& m) {
    return "hostname " + m.hostname + " was " + m.before_box + " until " + day_time(m.until) + "; " + m.after_box +
           " (other GPUs) since " + day_time(m.since);
}

// "check (quick, 20 s burn)", "run": what kind of run, as the lists name it.
std::string kind_words(const RunRow& r) {
    std::string extra;
    if (r.tier) extra = *r.tier;
    if (r.burn_duration_s)
        extra += (extra.empty() ? "" : ", ") + format_number(std::round(*r.burn_duration_s), 6) + " s burn";
    return r.command + (extra.empty() ? "" : " (" + extra + ")");
}

}  // namespace

std::string render_history_list(const std::vector<BoxRow>& boxes, const std::vector<GpuRow>& gpus,
                                const std::vector<HostnameChange>& moves) {
    std::ostringstream o;
    if (boxes.empty()) return "The history is empty: `gpuvet check` records each run (docs/history.md).\n";
    o << "Boxes (" << boxes.size() << ")\n";
    o << "  " << pad("box", 16) << pad("hostname", 20) << pad("first seen", 18) << pad("last seen", 18)
      << pad("runs", 6) << pad("GPUs", 6) << "last verdict\n";
    for (const BoxRow& b : boxes)
        o << "  " << pad(b.name, 16) << pad(or_dash(b.hostname), 20) << pad(day_time(b.first_seen), 18)
          << pad(day_time(b.last_seen), 18) << pad(std::to_string(b.runs), 6) << pad(std::to_string(b.gpus), 6)
          << cell(b.last_verdict) << "\n";
    o << "\nGPUs (" << gpus.size() << ")\n";
    o << "  " << pad("box", 16) << pad("slot", 18) << pad("serial", 16) << pad("name", 26) << pad("first seen", 18)
      << pad("last seen", 18) << "last verdict\n";
    for (const GpuRow& g : gpus)
        o << "  " << pad(or_dash(g.box), 16) << pad(or_dash(g.slot), 18) << pad(or_dash(g.serial), 16)
          << pad(or_dash(g.name), 26) << pad(day_time(g.first_seen), 18) << pad(day_time(g.last_seen), 18)
          << or_dash(g.last_verdict) << "\n";
    if (!moves.empty()) o << "\nHostnames now on other GPUs (" << moves.size() << ")\n";
    for (const HostnameChange& m : moves) o << "  " << move_text(m) << "\n";
    return o.str();
}

Json history_list_json(const std::vector<BoxRow>& boxes, const std::vector<GpuRow>& gpus,
                       const std::vector<HostnameChange>& moves) {
    Json j;
    j["boxes"] = Json::array();
    for (const BoxRow& b : boxes)
        j["boxes"].push_back({{"box", b.name},
                              {"hostname", opt_json(b.hostname)},
                              {"first_seen", b.first_seen},
                              {"last_seen", b.last_seen},
                              {"runs", b.runs},
                              {"gpus", b.gpus},
                              {"last_verdict", b.last_verdict}});
    j["gpus"] = Json::array();
    for (const GpuRow& g : gpus)
        j["gpus"].push_back({{"key", g.key},
                             {"uuid", opt_json(g.uuid)},
                             {"serial", opt_json(g.serial)},
                             {"name", opt_json(g.name)},
                             {"box", opt_json(g.box)},
                             {"slot", opt_json(g.slot)},
                             {"first_seen", g.first_seen},
                             {"last_seen", g.last_seen},
                             {"last_verdict", opt_json(g.last_verdict)}});
    j["hostname_changes"] = Json::array();
    for (const HostnameChange& m : moves)
        j["hostname_changes"].push_back({{"hostname", m.hostname},
                                         {"before_box", m.before_box},
                                         {"until", m.until},
                                         {"after_box", m.after_box},
                                         {"since", m.since},
                                         {"text", move_text(m)}});
    return j;
}

std::string render_history_show(const std::string& title, const std::vector<ShownRun>& runs) {
    std::ostringstream o;
    o << cell(title) << ": " << runs.size() << " run" << (runs.size() == 1 ? "" : "s") << "\n";
    for (const ShownRun& s : runs) {
        o << "  " << day_time(s.run.started_at) << "  " << pad(kind_words(s.run), 7) << pad(s.run.verdict, 14)
          << "host " << or_dash(s.run.hostname) << ", driver " << or_dash(s.run.driver_version)
          << (s.run.origin == "imported" ? ", imported" : "") << "\n";
        if (s.run.job) o << "      job: " << *s.run.job << " (exit " << s.run.exit_code << ")\n";
        for (const FindingRow& f : s.findings) o << "      " << f.check << " (" << f.verdict << "): " << f.text << "\n";
        for (const FigureRow& f : s.figures) {
            o << "      " << pad(f.index ? "GPU " + std::to_string(*f.index) : "box", 7) << pad(f.metric, 48)
              << figure(f.value, f.unit);
            if (f.spec) o << "  (spec " << figure(*f.spec, f.unit) << ")";
            o << "\n";
        }
    }
    return o.str();
}

Json history_show_json(const std::string& title, const std::vector<ShownRun>& runs) {
    Json j{{"subject", title}, {"runs", Json::array()}};
    for (const ShownRun& s : runs) {
        Json figs = Json::array();
        for (const FigureRow& f : s.figures)
            figs.push_back({{"gpu", opt_json(f.gpu)},
                            {"metric", f.metric},
                            {"value", f.value},
                            {"unit", f.unit},
                            {"spec", opt_json(f.spec)},
                            {"fail_below", opt_json(f.fail_below)},
                            {"fail_above", opt_json(f.fail_above)}});
        Json findings = Json::array();
        for (const FindingRow& f : s.findings)
            findings.push_back({{"check", f.check}, {"verdict", f.verdict}, {"text", f.text}});
        j["runs"].push_back(
            {{"box", s.run.box},
             {"command", s.run.command},
             {"tier", opt_json(s.run.tier)},
             {"burn_duration_s", opt_json(s.run.burn_duration_s)},
             {"started_at", s.run.started_at},
             {"verdict", s.run.verdict},
             {"exit_code", s.run.exit_code},
             {"job", opt_json(s.run.job)},
             {"hostname", opt_json(s.run.hostname)},
             {"driver_version", opt_json(s.run.driver_version)},
             {"cuda_driver_version", s.run.cuda_driver_version ? Json(*s.run.cuda_driver_version) : Json(nullptr)},
             {"origin", s.run.origin},
             {"figures", figs},
             {"findings", findings}});
    }
    return j;
}

namespace {

// The reference lines of a trend: the latest point's spec and floor (they are the same for one SKU).
struct Scale {
    double lo = 0, hi = 1;
    std::optional<double> spec, floor;
};

Scale scale_of(const std::vector<TrendPoint>& p) {
    Scale s;
    s.spec = p.back().spec;
    s.floor = p.back().fail_below ? p.back().fail_below : p.back().fail_above;
    double hi = 0;
    for (const TrendPoint& x : p) hi = std::max(hi, x.value);
    if (s.spec) hi = std::max(hi, *s.spec);
    if (s.floor) hi = std::max(hi, *s.floor);
    s.hi = hi > 0 ? hi : 1;
    return s;
}

std::string bar(double v, const Scale& s, int cols) {
    int n = int(std::lround(std::clamp(v / s.hi, 0.0, 1.0) * cols));
    int at_floor = s.floor ? int(std::lround(*s.floor / s.hi * cols)) : -1;
    int at_spec = s.spec ? int(std::lround(*s.spec / s.hi * cols)) : -1;
    std::string out;
    for (int i = 0; i < cols; ++i) {
        if (i == at_floor) out += "|";
        else if (i == at_spec - 1 && i >= n) out += ":";
        else out += i < n ? "#" : " ";
    }
    return out;
}

}  // namespace

namespace {

// A GPU by its serial where the driver gave one, else its UUID.
std::string trend_label(const TrendPoint& x) {
    if (x.gpu.empty()) return "box";
    return cell(x.serial ? *x.serial : x.gpu);
}

}  // namespace

std::string render_trend(const std::string& metric, const std::vector<TrendPoint>& p, int width) {
    std::ostringstream o;
    if (p.empty()) return cell(metric) + ": no recorded value\n";
    Scale s = scale_of(p);
    o << cell(metric) << " (" << cell(p.back().unit) << "), " << p.size() << " value" << (p.size() == 1 ? "" : "s");
    if (s.spec) o << "; spec " << figure(*s.spec, p.back().unit) << " (:)";
    if (s.floor)
        o << "; " << (p.back().fail_below ? "floor " : "ceiling ") << figure(*s.floor, p.back().unit) << " (|)";
    o << "\n";
    int cols = std::max(10, width - 58);
    for (const TrendPoint& x : p)
        o << "  " << day_time(x.at) << "  " << pad(trend_label(x), 16) << pad(figure(x.value, x.unit), 14)
          << bar(x.value, s, cols) << "\n";
    return o.str();
}

Json trend_json(const std::string& metric, const std::vector<TrendPoint>& p) {
    Json j{{"metric", metric}, {"points", Json::array()}};
    for (const TrendPoint& x : p)
        j["points"].push_back({{"at", x.at},
                               {"gpu", x.gpu.empty() ? Json(nullptr) : Json(x.gpu)},
                               {"value", x.value},
                               {"unit", x.unit},
                               {"spec", opt_json(x.spec)},
                               {"fail_below", opt_json(x.fail_below)},
                               {"fail_above", opt_json(x.fail_above)}});
    return j;
}

namespace {

double epoch_s(const std::string& at) {
    std::tm t{};
    std::istringstream in(at.substr(0, 19));
    in >> std::get_time(&t, "%Y-%m-%dT%H:%M:%S");
    return double(timegm(&t));
}

}  // namespace

std::string trend_chart_html(const std::string& metric, const std::vector<TrendPoint>& p, const std::string& note) {
    // One line per GPU (a box-level figure is one line); the time axis counts days since the first value.
    std::map<std::string, Line> lines;
    double t0 = 1e300;
    for (const TrendPoint& x : p) t0 = std::min(t0, epoch_s(x.at));
    for (const TrendPoint& x : p) {
        Line& l = lines[x.gpu];
        l.label = trend_label(x);
        l.t_s.push_back((epoch_s(x.at) - t0) / 86400);
        l.values.push_back(x.value);
    }
    std::vector<Line> all;
    std::string key;
    for (auto& [k, l] : lines) {
        key += "<span><i class=\"s" + std::to_string(all.size() % 8) + "\"></i>" + escape_html(l.label) + "</span>";
        all.push_back(l);
    }
    std::string unit = p.empty() ? "" : p.back().unit;
    std::string caption = metric + (unit.empty() ? "" : " (" + unit + ")");
    if (!p.empty() && p.back().spec) caption += ", spec " + figure(*p.back().spec, unit);
    if (!p.empty() && p.back().fail_below) caption += ", floor " + figure(*p.back().fail_below, unit);
    if (!p.empty() && p.back().fail_above) caption += ", ceiling " + figure(*p.back().fail_above, unit);
    return "<figure class=\"chart-box trend\" data-metric=\"" + escape_html(metric) + "\">" +
           (all.size() > 1 ? "<p class=\"key note\">" + key + "</p>" : "") + svg_lines(all, unit, caption, "d") +
           "<figcaption><code>" + escape_html(metric) + "</code> " + escape_html(caption.substr(metric.size())) +
           (note.empty() ? "" : "<br>" + escape_html(note)) + "</figcaption></figure>";
}

std::string render_trend_html(const std::string& metric, const std::vector<TrendPoint>& p) {
    std::string body =
        "<h1>" + escape_html(metric) + "</h1>\n" + trend_chart_html(metric, p, "time axis: days since the first value");
    body += "<table><tr><th>run</th><th>GPU</th><th>value</th><th>spec</th><th>floor</th></tr>\n";
    for (const TrendPoint& x : p)
        body += "<tr><td>" + escape_html(x.at) + "</td><td>" + escape_html(x.gpu) + "</td><td>" +
                escape_html(figure(x.value, x.unit)) + "</td><td>" +
                (x.spec ? escape_html(figure(*x.spec, x.unit)) : "") + "</td><td>" +
                (x.fail_below ? escape_html(figure(*x.fail_below, x.unit)) : "") + "</td></tr>\n";
    body += "</table>\n";
    return html_page("gpuvet history: " + metric, body, "gpuvet history trend " + metric);
}

namespace {

const char* verdict_class(const std::string& v) {
    if (v == "PASS" || v == "HEALTHY") return "v-pass";
    if (v == "WARN" || v == "BOTTLENECK") return "v-warn";
    if (v == "FAIL" || v == "JOB_FAILED") return "v-fail";
    return "v-skip";
}

// The earlier runs a report lists: the latest ones; the rest are counted (`history show` has all).
constexpr std::size_t kRunsListed = 30;

std::string runs_table(const std::vector<RunRow>& runs) {
    std::size_t from = runs.size() > kRunsListed ? runs.size() - kRunsListed : 0;
    std::string out =
        "<div class=\"scroll\"><table class=\"history-runs\"><tr><th>started (UTC)</th><th>command</th>"
        "<th>verdict</th><th>hostname</th><th>driver</th></tr>";
    for (std::size_t i = from; i < runs.size(); ++i) {
        const RunRow& r = runs[i];
        std::string what = r.command + (r.tier ? " (" + *r.tier + ")" : "");
        if (r.job) what += ": " + *r.job;
        out += "<tr><td>" + escape_html(day_time(r.started_at)) + "</td><td>" + escape_html(what) +
               "</td><td class=\"" + verdict_class(r.verdict) + "\">" + escape_html(r.verdict) + "</td><td>" +
               escape_html(or_dash(r.hostname)) + "</td><td>" + escape_html(or_dash(r.driver_version)) + "</td></tr>";
    }
    out += "</table></div>";
    if (from > 0)
        out += "<p class=\"note\">" + std::to_string(from) + " earlier runs not listed: <code>gpuvet history show " +
               escape_html(runs.front().box) + "</code> lists every one.</p>";
    return out;
}

}  // namespace

std::string html_box_history(const BoxHistory& h) {
    std::string out = "<section id=\"history\"><h2>History of this box</h2><p>" + escape_html(h.box) +
                      (h.matched_by.empty() ? "" : ", recognised by its " + escape_html(h.matched_by)) + ": " +
                      std::to_string(h.runs.size()) + " earlier run" + (h.runs.size() == 1 ? "" : "s") + " from " +
                      escape_html(day_time(h.runs.front().started_at)) + " to " +
                      escape_html(day_time(h.runs.back().started_at)) + ".</p>";
    out += runs_table(h.runs);
    if (h.trends.empty()) {
        out += "<p class=\"note\">No key figure of this run was measured in an earlier comparable run (" +
               escape_html(describe(h.now)) + ").</p>";
        return out + "</section>";
    }
    out +=
        "<h3>Key figures over time</h3><p class=\"note\">Each figure in this box's earlier runs of the same "
        "kind (" +
        escape_html(describe(h.now)) +
        "), the last point this run's; the time axis counts days since the first value.</p><div class=\"grid\">";
    for (const FigureTrend& t : h.trends) out += trend_chart_html(t.metric, t.points, "");
    return out + "</div></section>";
}

std::string render_diff(const RunDiff& d) {
    std::ostringstream o;
    o << "This run  " << day_time(d.now.started_at) << " " << cell(d.now.command) << " " << cell(d.now.verdict) << "\n";
    o << "against   " << day_time(d.base.started_at) << " " << cell(d.base.command) << " " << cell(d.base.verdict)
      << " (box " << cell(d.now.box) << ")\n\n";
    o << "Hardware and software\n";
    if (d.hardware.empty()) o << "  no GPU added, removed or replaced; driver and VBIOS unchanged\n";
    for (const std::string& h : d.hardware) o << "  " << cell(h) << "\n";
    o << "\nFigures beyond their run-to-run noise (" << d.figures.size() << " of " << d.compared << " compared)\n";
    for (const FigureChange& c : d.figures) {
        o << "  " << pad(c.gpu, 7) << pad(c.metric, 48) << figure(c.before, c.unit) << " -> "
          << figure(c.after, c.unit);
        if (c.before != 0)
            o << " (" << (c.change_percent > 0 ? "+" : "") << format_number(c.change_percent, 3) << "%, noise "
              << format_number(c.noise_percent, 2) << "%)";
        o << (c.worse ? "  worse" : "") << "\n";
    }
    return o.str();
}

Json diff_json(const RunDiff& d) {
    Json j{{"box", d.now.box},       {"run", d.now.started_at}, {"against", d.base.started_at},
           {"hardware", d.hardware}, {"compared", d.compared},  {"figures", Json::array()}};
    for (const FigureChange& c : d.figures)
        j["figures"].push_back({{"gpu", c.gpu},
                                {"metric", c.metric},
                                {"unit", c.unit},
                                {"before", c.before},
                                {"after", c.after},
                                {"change_percent", c.change_percent},
                                {"noise_percent", c.noise_percent},
                                {"direction", c.after > c.before ? "up" : "down"},
                                {"worse", c.worse}});
    return j;
}

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}
std::string csv(const std::optional<std::string>& s) { return s ? csv(*s) : ""; }
std::string csv(const std::optional<double>& v) { return v ? format_number(*v, 10) : ""; }

}  // namespace

std::string export_csv_header() {
    return "box,started_at,command,run_verdict,hostname,gpu,serial,slot,metric,value,unit,spec,fail_below,fail_above\n";
}

std::string export_csv_row(const ExportRow& r) {
    const FigureRow& f = r.figure;
    return csv(r.box) + "," + csv(r.started_at) + "," + csv(r.command) + "," + csv(r.run_verdict) + "," +
           csv(r.hostname) + "," + csv(r.gpu) + "," + csv(r.serial) + "," + csv(r.slot) + "," + csv(f.metric) + "," +
           format_number(f.value, 10) + "," + csv(f.unit) + "," + csv(f.spec) + "," + csv(f.fail_below) + "," +
           csv(f.fail_above) + "\n";
}

std::string export_jsonl_row(const ExportRow& r) {
    const FigureRow& f = r.figure;
    Json j{{"box", r.box},
           {"started_at", r.started_at},
           {"command", r.command},
           {"run_verdict", r.run_verdict},
           {"hostname", opt_json(r.hostname)},
           {"gpu", opt_json(r.gpu)},
           {"serial", opt_json(r.serial)},
           {"slot", opt_json(r.slot)},
           {"metric", f.metric},
           {"value", f.value},
           {"unit", f.unit},
           {"spec", opt_json(f.spec)},
           {"fail_below", opt_json(f.fail_below)},
           {"fail_above", opt_json(f.fail_above)}};
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpuvet
