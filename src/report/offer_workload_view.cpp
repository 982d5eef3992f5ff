#include "report/offer_workload_view.hpp"

#include <fmt/format.h>

#include <sstream>

#include "core/strings.hpp"
#include "report/svg.hpp"

namespace gpuvet {

namespace {

std::string opt_text(const std::optional<double>& v, int decimals) {
    return v ? format_fixed(*v, decimals) : std::string("—");
}

// Offers in ranking order: by cost when priced, else by speed; those without a figure last.
std::vector<std::size_t> ranked(const WorkloadComparison& c) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < c.offers.size(); ++i) idx.push_back(i);
    auto key = [&](std::size_t i) {
        const WorkloadOnOffer& o = c.offers[i];
        if (o.cost) return *o.cost;
        if (o.tokens_per_s) return 1e300 - *o.tokens_per_s;  // after every priced one, fastest first
        return 1e308;
    };
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    return idx;
}

std::string summary(const WorkloadComparison& c) {
    std::string s;
    if (c.cheapest) {
        const WorkloadOnOffer& o = c.offers[*c.cheapest];
        s = "Cheapest: " + o.name + " (" + format_fixed(*o.cost, 2) + " " + c.currency + ").";
    } else if (!c.currency.empty()) {
        s = "No offer has a cost (a cost needs a token budget in the plan and a price).";
    }
    if (c.fastest) {
        const WorkloadOnOffer& o = c.offers[*c.fastest];
        s += (s.empty() ? "" : " ") + std::string("Fastest: ") + o.name + " (" + format_number(*o.tokens_per_s) +
             " tokens/s" + (o.hours ? ", " + format_fixed(*o.hours, 1) + " h" : std::string()) + ").";
    }
    return s.empty() ? "No offer could run the job on measured rates." : s;
}

std::vector<std::string> row(const WorkloadComparison& c, const WorkloadOnOffer& o) {
    if (!o.absent.empty()) return {o.name, o.gpu.empty() ? "—" : o.gpu, o.absent};
    std::vector<std::string> r = {o.name,
                                  o.gpu,
                                  o.rate
                                      ? format_fixed(*o.rate, 0) + " (datasheet " + opt_text(o.datasheet_rate, 0) + ")"
                                      : "not measured (the datasheet's " + opt_text(o.datasheet_rate, 0) + " is used)",
                                  std::to_string(*o.cards),
                                  o.tokens_per_s ? format_number(*o.tokens_per_s) : "—",
                                  opt_text(o.hours, 1)};
    if (!c.currency.empty()) r.push_back(opt_text(o.cost, 2));
    return r;
}

std::vector<std::string> head(const WorkloadComparison& c) {
    std::vector<std::string> h = {
        "offer", "GPU", "measured rate", "cards", c.training ? "train tokens/s" : "decode tokens/s", "hours"};
    if (!c.currency.empty()) h.push_back("cost " + c.currency);
    return h;
}

std::string rate_note(const WorkloadComparison& c) {
    return std::string("Measured rate: ") +
           (c.training ? "dense tensor TFLOPS per card" : "memory bandwidth GB/s per card") +
           " from each offer's report, in place of the datasheet figure; the planner's speed model (docs/plan.md) "
           "does the rest.";
}

}  // namespace

std::string workload_terminal(const WorkloadComparison& c) {
    std::ostringstream o;
    o << "\nThe planned job on each offer: " << c.job << "\n";
    for (std::size_t i : ranked(c)) {
        const WorkloadOnOffer& w = c.offers[i];
        o << "  " << w.name << (w.gpu.empty() ? "" : " (" + w.gpu + ")") << ": ";
        if (!w.absent.empty()) {
            o << w.absent << "\n";
            continue;
        }
        o << w.rate_label << " "
          << (w.rate ? format_fixed(*w.rate, 0) + " (datasheet " + opt_text(w.datasheet_rate, 0) + ")"
                     : "not measured (the datasheet's " + opt_text(w.datasheet_rate, 0) + " is used)")
          << ", " << *w.cards << " card(s), " << (w.tokens_per_s ? format_number(*w.tokens_per_s) : "—") << " tokens/s";
        if (w.hours) o << ", " << format_fixed(*w.hours, 1) << " h";
        if (w.cost) o << ", " << format_fixed(*w.cost, 2) << " " << c.currency;
        o << "\n";
    }
    o << "  " << summary(c) << "\n";
    return o.str();
}

std::string workload_markdown(const WorkloadComparison& c) {
    std::ostringstream o;
    o << "\n## The planned job on each offer: " << c.job << "\n\n|";
    std::vector<std::string> h = head(c);
    for (auto& x : h) o << " " << x << " |";
    o << "\n|";
    for (std::size_t i = 0; i < h.size(); ++i) o << "---|";
    o << "\n";
    for (std::size_t i : ranked(c)) {
        o << "|";
        for (auto& x : row(c, c.offers[i])) o << " " << x << " |";
        o << "\n";
    }
    o << "\n" << summary(c) << " " << rate_note(c) << "\n";
    return o.str();
}

std::string workload_html(const WorkloadComparison& c) {
    std::vector<std::string> h = head(c);
    std::string out = "<section id=\"workload\"><h2>The planned job on each offer</h2><p>" + escape_html(c.job) +
                      "</p><div class=\"scroll\"><table><thead><tr>";
    for (auto& x : h) out += "<th>" + escape_html(x) + "</th>";
    out += "</tr></thead><tbody>";
    for (std::size_t i : ranked(c)) {
        std::vector<std::string> r = row(c, c.offers[i]);
        out += "<tr data-offer=\"" + escape_html(c.offers[i].name) + "\"><th>" + escape_html(r[0]) + "</th>";
        for (std::size_t k = 1; k < r.size(); ++k) {
            bool span = r.size() == 3 && k == 2;  // no figures: the reason takes the rest of the row
            out += "<td" +
                   (span ? " colspan=\"" + std::to_string(h.size() - 2) + "\"" : std::string(" class=\"num\"")) + ">" +
                   escape_html(r[k]) + "</td>";
        }
        out += "</tr>";
    }
    return out + "</tbody></table></div><p id=\"workload-summary\">" + escape_html(summary(c)) +
           "</p><p class=\"note\">" + escape_html(rate_note(c)) + "</p></section>";
}

Json workload_to_json(const WorkloadComparison& c) {
    auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
    Json offers = Json::array();
    for (std::size_t i : ranked(c)) {
        const WorkloadOnOffer& o = c.offers[i];
        offers.push_back(Json{{"name", o.name},
                              {"gpu", o.gpu.empty() ? Json(nullptr) : Json(o.gpu)},
                              {"absent_reason", o.absent.empty() ? Json(nullptr) : Json(o.absent)},
                              {"rate_label", o.rate_label},
                              {"measured_rate", opt(o.rate)},
                              {"rate_measured", o.rate_measured},
                              {"datasheet_rate", opt(o.datasheet_rate)},
                              {"cards", o.cards ? Json(*o.cards) : Json(nullptr)},
                              {"tokens_per_s", opt(o.tokens_per_s)},
                              {"hours", opt(o.hours)},
                              {"cost", opt(o.cost)}});
    }
    return Json{{"job", c.job},
                {"currency", c.currency.empty() ? Json(nullptr) : Json(c.currency)},
                {"offers", offers},
                {"cheapest", c.cheapest ? Json(c.offers[*c.cheapest].name) : Json(nullptr)},
                {"fastest", c.fastest ? Json(c.offers[*c.fastest].name) : Json(nullptr)},
                {"summary", summary(c)}};
}

}  // namespace gpuvet
