#include "report/plan_levers_view.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/strings.hpp"
#include "report/svg.hpp"
#include "report/text_layout.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

constexpr std::size_t kCardsNamed = 3;      // the terminal names the first few cards a lever brings in
constexpr std::size_t kCardsNamedHtml = 6;  // the page a few more (the JSON has them all)

std::string gib(double bytes) { return format_fixed(bytes / kGiB, 1) + " GiB"; }

std::string card(const LeverCard& c) {
    return fmt::format("{}× {}", c.cards, c.spec->name) +
           (c.cards_before ? fmt::format(" (was {})", *c.cards_before) : " (new)");
}

std::string brings_text(const Lever& v, std::size_t most) {
    if (v.key == "cards" && !v.brings.empty())
        return fmt::format("the card table's best row, {}× {}", v.brings[0].cards, v.brings[0].spec->name);
    if (v.brings.empty()) return "no card count changes";
    std::string s;
    for (std::size_t i = 0; i < v.brings.size() && i < most; ++i) s += (i ? ", " : "") + card(v.brings[i]);
    if (v.brings.size() > most) s += fmt::format(", +{} more", v.brings.size() - most);
    return s;
}

std::string saving_text(const Lever& v) {
    // A lever can add memory on the asked card (accumulated gradients) and still free the table's.
    return fmt::format("{} {} → {} per GPU on {} card(s)", v.saved_bytes() < 0 ? "adds" : "saves",
                       gib(std::abs(v.saved_bytes())), gib(v.need_bytes), v.gpus);
}

}  // namespace

void render_levers(std::ostream& o, const LeverList& l) {
    if (!l.shown || l.levers.empty()) return;
    o << "\n"
      << wrap("",
              fmt::format("Levers, cheapest to the job first (need {} per GPU on {} card(s); {}; each "
                          "re-planned alone):",
                          gib(l.need_bytes), l.gpus, l.why),
              100, 2)
      << "\n";
    for (std::size_t i = 0; i < l.levers.size(); ++i) {
        const Lever& v = l.levers[i];
        o << fmt::format("  {}. {:<32} {}\n", i + 1, v.option, v.what);
        o << wrap("     ", saving_text(v) + "; brings in " + brings_text(v, kCardsNamed), 100, 7) << "\n";
        o << wrap("     price: ", v.price, 100, 7) << "\n";
    }
    if (!l.not_applicable.empty()) {
        std::string s;
        for (auto& n : l.not_applicable) s += (s.empty() ? "" : "; ") + n;
        o << wrap("  not listed: ", s, 100, 4) << "\n";
    }
}

Json levers_to_json(const LeverList& l) {
    Json list = Json::array();
    for (auto& v : l.levers) {
        Json brings = Json::array();
        for (auto& c : v.brings)
            brings.push_back({{"sku", c.spec->key},
                              {"name", c.spec->name},
                              {"cards", c.cards},
                              {"cards_before", c.cards_before ? Json(*c.cards_before) : Json(nullptr)}});
        list.push_back({{"key", v.key},
                        {"what", v.what},
                        {"option", v.option},
                        {"gpus", v.gpus},
                        {"need_before_bytes_per_gpu", v.need_before_bytes},
                        {"need_bytes_per_gpu", v.need_bytes},
                        {"saved_bytes_per_gpu", v.saved_bytes()},
                        {"brings", brings},
                        {"price", v.price}});
    }
    return Json{{"shown", l.shown},
                {"why", l.why},
                {"gpus", l.gpus},
                {"need_bytes_per_gpu", l.need_bytes},
                {"list", list},
                {"not_listed", l.not_applicable},
                {"lighter", l.lighter ? Json(l.levers[*l.lighter].key) : Json(nullptr)},
                {"lighter_text", l.lighter ? Json(l.lighter_text) : Json(nullptr)}};
}

std::string levers_html(const LeverList& l) {
    if (!l.shown || l.levers.empty()) return "";
    auto e = [](const std::string& s) { return escape_html(s); };
    std::string rows;
    for (std::size_t i = 0; i < l.levers.size(); ++i) {
        const Lever& v = l.levers[i];
        rows += "<tr data-lever=\"" + e(v.key) + "\"><td class=\"num\">" + std::to_string(i + 1) + "</td><td>" +
                e(v.what) + "</td><td><code>" + e(v.option) + "</code></td><td class=\"num\">" +
                e(format_fixed(v.saved_bytes() / kGiB, 1)) + "</td><td class=\"num\">" +
                e(format_fixed(v.need_bytes / kGiB, 1)) + "</td><td>" + e(brings_text(v, kCardsNamedHtml)) +
                "</td><td>" + e(v.price) + "</td></tr>";
    }
    std::string out = "<section id=\"levers\"><h2>Levers, cheapest to the job first</h2><p class=\"note\">" +
                      e(fmt::format("Need {} per GPU on {} card(s); {}. Each lever is re-planned alone.",
                                    gib(l.need_bytes), l.gpus, l.why)) +
                      "</p><table><thead><tr><th>#</th><th>lever</th><th>option</th><th>saves GiB/GPU</th>"
                      "<th>need GiB/GPU</th><th>brings in</th><th>price</th></tr></thead><tbody>" +
                      rows + "</tbody></table>";
    if (!l.not_applicable.empty()) {
        std::string s;
        for (auto& n : l.not_applicable) s += (s.empty() ? "" : "; ") + n;
        out += "<p class=\"note\">Not listed: " + e(s) + "</p>";
    }
    return out + "</section>";
}

}  // namespace gpuvet
