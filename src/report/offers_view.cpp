#include "report/offers_view.hpp"

#include <sstream>

#include "core/strings.hpp"
#include "report/html_style.hpp"
#include "report/json.hpp"
#include "compare/offer_figures.hpp"
#include "report/svg.hpp"
#include "report/text_layout.hpp"

namespace gpuvet {

namespace {

std::string verdict_word(RunVerdict v) {
    switch (v) {
        case RunVerdict::Go: return "GO";
        case RunVerdict::GoWithWarnings: return "GO (warnings)";
        case RunVerdict::NoGo: return "NO-GO";
        case RunVerdict::Incomplete: return "INCOMPLETE";
        case RunVerdict::CouldNotRun: return "COULD NOT RUN";
    }
    return "?";
}

// The table's rows: a label and one cell per offer.
struct Table {
    std::vector<std::string> head;
    std::vector<std::vector<std::string>> rows;
};

Table table_of(const OfferComparison& c) {
    Table t;
    t.head.push_back("");
    for (auto& o : c.offers) t.head.push_back(o.name);
    auto row = [&](std::string label, auto cell) {
        std::vector<std::string> r{std::move(label)};
        for (auto& o : c.offers) r.push_back(cell(o));
        t.rows.push_back(std::move(r));
    };
    row("GPUs", [](const Offer& o) { return std::to_string(o.gpu_count) + "x " + o.gpu_model; });
    row("verdict", [](const Offer& o) { return verdict_word(o.verdict); });
    if (!c.currency.empty())
        row("price per card-hour", [&](const Offer& o) {
            return o.price_per_card_hour ? format_number(*o.price_per_card_hour, 4) + " " + c.currency : "—";
        });
    for (const MetricDef& def : offer_metrics()) {
        bool any = false;
        for (auto& o : c.offers) any = any || o.figure(def.id);
        if (!any) continue;
        row(std::string(def.label) + " (" + def.unit + ")", [&](const Offer& o) {
            const OfferFigure* f = o.figure(def.id);
            if (!f) return std::string("not measured");
            std::string s = format_number(*f->per_gpu, 4);
            if (f->share_of_spec) s += " · " + format_fixed(100 * *f->share_of_spec, 0) + "%";
            if (f->worst_gpu) s += " (GPU " + std::to_string(*f->worst_gpu) + ": " + format_number(*f->worst, 3) + ")";
            if (f->below_class) s += " below class";
            return s;
        });
        if (def.per_money && !c.currency.empty())
            row(std::string(def.label) + " per " + c.currency + "/h", [&](const Offer& o) {
                const OfferFigure* f = o.figure(def.id);
                return f && f->per_money ? format_number(*f->per_money, 4) : std::string("—");
            });
    }
    return t;
}

std::string winner_line(const OfferComparison& c) {
    if (!c.winner) return "No winner";
    return "Winner: " + c.offers[*c.winner].name + " (by " + c.decided_by + ")";
}

}  // namespace

std::string render_offers_terminal(const OfferComparison& c, const Style& st) {
    Table t = table_of(c);
    std::vector<std::size_t> w(t.head.size(), 0);
    auto widen = [&](const std::vector<std::string>& r) {
        for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], visible_width(r[i]));
    };
    widen(t.head);
    for (auto& r : t.rows) widen(r);
    std::ostringstream o;
    o << st.bold("gpuvet compare") << " · " << c.offers.size() << " offers · figures per GPU (median), % of spec\n\n";
    auto line = [&](const std::vector<std::string>& r) {
        std::string s;
        for (std::size_t i = 0; i < r.size(); ++i) {
            s += r[i];
            if (i + 1 < r.size()) s += std::string(w[i] - visible_width(r[i]) + 2, ' ');
        }
        return s;
    };
    o << st.dim(line(t.head)) << "\n";
    for (auto& r : t.rows) o << line(r) << "\n";
    o << "\n" << st.paint(winner_line(c), c.winner ? "1;32" : "1;33") << "\n";
    for (auto& r : c.reasons) o << wrap("  • ", r, st.width, 4) << "\n";
    for (auto& n : c.notes) o << wrap("  ! ", n, st.width, 4) << "\n";
    return o.str();
}

std::string render_offers_json(const OfferComparison& c, const Envelope& e, const Json& workload) {
    Json offers = Json::array();
    for (auto& o : c.offers) {
        Json figs = Json::array();
        for (auto& f : o.figures) {
            auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
            figs.push_back(Json{{"id", f.id},
                                {"label", f.label},
                                {"unit", f.unit},
                                {"per_gpu", opt(f.per_gpu)},
                                {"share_of_spec", opt(f.share_of_spec)},
                                {"healthy_share", opt(f.healthy_share)},
                                {"per_money", opt(f.per_money)},
                                {"below_class", f.below_class},
                                {"worst_gpu", f.worst_gpu ? Json(*f.worst_gpu) : Json(nullptr)},
                                {"worst", opt(f.worst)},
                                {"source", f.source}});
        }
        offers.push_back(
            Json{{"name", o.name},
                 {"path", o.path},
                 {"gpu_model", o.gpu_model},
                 {"gpu_count", o.gpu_count},
                 {"verdict", to_string(o.verdict)},
                 {"price_per_card_hour", o.price_per_card_hour ? Json(*o.price_per_card_hour) : Json(nullptr)},
                 {"figures", figs},
                 {"failed", o.failed}});
    }
    Json body{{"currency", c.currency.empty() ? Json(nullptr) : Json(c.currency)},
              {"offers", offers},
              {"winner", c.winner ? Json(c.offers[*c.winner].name) : Json(nullptr)},
              {"decided_by", c.decided_by},
              {"reasons", c.reasons},
              {"notes", c.notes}};
    if (!workload.is_null()) body["workload"] = workload;
    return render_document(e, body);
}

std::string render_offers_markdown(const OfferComparison& c) {
    Table t = table_of(c);
    std::ostringstream o;
    o << "# gpuvet compare: " << winner_line(c) << "\n\n|";
    for (auto& h : t.head) o << " " << h << " |";
    o << "\n|";
    for (std::size_t i = 0; i < t.head.size(); ++i) o << "---|";
    o << "\n";
    for (auto& r : t.rows) {
        o << "|";
        for (auto& x : r) o << " " << x << " |";
        o << "\n";
    }
    o << "\nFigures per GPU (median over the GPUs), then their share of the datasheet figure.\n\n";
    for (auto& r : c.reasons) o << "- " << r << "\n";
    for (auto& n : c.notes) o << "- **" << n << "**\n";
    return o.str();
}

std::string render_offers_html(const OfferComparison& c) {
    Table t = table_of(c);
    std::string rows;
    for (auto& r : t.rows) {
        rows += "<tr><th>" + escape_html(r[0]) + "</th>";
        for (std::size_t i = 1; i < r.size(); ++i) rows += "<td class=\"num\">" + escape_html(r[i]) + "</td>";
        rows += "</tr>";
    }
    std::string head = "<tr>";
    for (auto& h : t.head) head += "<th>" + escape_html(h) + "</th>";
    head += "</tr>";
    // The deciding figure as bars: each offer's share of the best one.
    std::string chart;
    if (c.winner) {
        std::vector<Bar> bars;
        const Offer& win = c.offers[*c.winner];
        for (auto& o : c.offers)
            for (auto& f : o.figures)
                if (c.decided_by.rfind(f.label, 0) == 0) {
                    const OfferFigure* wf = win.figure(f.id);
                    double best = c.currency.empty() ? *wf->per_gpu : wf->per_money.value_or(1);
                    double mine = c.currency.empty() ? *f.per_gpu : f.per_money.value_or(0);
                    Bar b;
                    b.label = o.name;
                    b.share = best > 0 ? mine / best : 0;
                    b.verdict = &o == &win ? Verdict::Pass : Verdict::Warn;
                    b.title = o.name + ": " + format_number(mine, 4);
                    bars.push_back(b);
                }
        chart = "<figure class=\"chart-box\">" + svg_bars(bars, c.decided_by + ", share of the winner") +
                "<figcaption>" + escape_html(c.decided_by) + " as a share of the winner's</figcaption></figure>";
    }
    std::string items;
    for (auto& r : c.reasons) items += "<li>" + escape_html(r) + "</li>";
    for (auto& n : c.notes) items += "<li><b>" + escape_html(n) + "</b></li>";
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
           "content=\"width=device-width, initial-scale=1\"><meta http-equiv=\"Content-Security-Policy\" "
           "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><meta name=\"color-scheme\" "
           "content=\"light dark\"><title>gpuvet compare</title><style>" +
           std::string(kHtmlStyle) + "</style></head><body><header id=\"verdict\" class=\"banner " +
           (c.winner ? "pass" : "warn") + "\"><h1>" + escape_html(winner_line(c)) + "</h1></header>" +
           "<section id=\"offers\"><h2>Offers</h2><div class=\"scroll\"><table class=\"matrix\"><thead>" + head +
           "</thead><tbody>" + rows +
           "</tbody></table></div><p class=\"note\">Figures per GPU (median over the GPUs), "
           "then their share of the datasheet figure.</p></section><section id=\"reasons\"><h2>Why</h2>" +
           chart + "<ul>" + items + "</ul></section></body></html>\n";
}

}  // namespace gpuvet
