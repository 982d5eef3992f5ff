#include "report/plan_html.hpp"

#include <fmt/format.h>

#include "core/strings.hpp"
#include "report/html_sections.hpp"
#include "report/plan_levers_view.hpp"
#include "report/serving_view.hpp"
#include "report/svg.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

std::string e(std::string_view s) { return escape_html(s); }
std::string gib(double bytes) { return format_fixed(bytes / kGiB, 2); }

std::string heading(const PlanView& v) {
    std::string out = "<header id=\"verdict\" class=\"banner " + std::string(v.rec.any_fits ? "pass" : "fail") +
                      "\" data-verdict=\"" + (v.rec.any_fits ? "fits" : "does-not-fit") + "\"><h1>" +
                      e(v.model.name + " — " + to_string(v.w.task)) + "</h1><p>" +
                      e(fmt::format("{:.3f}B parameters", v.memory.params / 1e9)) +
                      (v.model.is_moe() ? e(fmt::format(" ({:.2f}B active per token)", v.memory.active_params / 1e9))
                                        : std::string()) +
                      " · need " + e(gib(v.memory.need_per_gpu)) + " GiB per GPU on " + std::to_string(v.memory.gpus) +
                      " GPU(s)</p><p>" + e((v.rec.any_fits ? "Fits: " : "Does not fit: ") + v.rec.suggestion) +
                      "</p></header>";
    return out;
}

// The stacked bar of the items and the margin, then the table saying how each is counted.
std::string memory(const PlanView& v) {
    const MemoryPlan& m = v.memory;
    std::vector<Segment> parts;
    std::string rows, key = "<p class=\"key note\">";
    auto add = [&](const std::string& label, double bytes, const std::string& how) {
        std::size_t k = parts.size();
        parts.push_back({label, bytes / kGiB, label + ": " + gib(bytes) + " GiB"});
        key += "<span><i class=\"s" + std::to_string(k % 8) + "\"></i>" + e(label) + "</span>";
        rows += "<tr data-item=\"" + e(label) + "\"><td>" + e(label) + "</td><td class=\"num\">" + e(gib(bytes)) +
                "</td><td>" + e(how) + "</td></tr>";
    };
    // The bar is the peak: items of the other training phase, and paged states, are only listed.
    const Moment peak = m.peak_moment();
    for (const MemoryItem& i : m.items) {
        if (alive_at(i.phase, peak)) add(i.label, i.bytes_per_gpu, i.how);
        else
            rows += "<tr data-item=\"" + e(i.label) + "\" class=\"note\"><td>" + e(i.label) +
                    "</td><td class=\"num\">" + e(gib(i.bytes_per_gpu)) + "</td><td>" + e(i.how) +
                    (i.phase == Phase::Pageable ? " (paged: outside the need)" : " (not alive at the peak)") +
                    "</td></tr>";
    }
    add(fmt::format("margin ({:.0f}%)", v.w.margin * 100), m.margin_bytes, "--margin");
    std::string caption = "Memory per GPU, GiB: " + gib(m.need_per_gpu) + " GiB";
    std::string out = "<section id=\"memory\"><h2>Memory per GPU" +
                      (m.zero_stage ? ", ZeRO-" + std::to_string(m.zero_stage) : std::string()) + " (" +
                      std::to_string(m.gpus) + " GPU(s))</h2><figure class=\"chart-box\">" +
                      svg_stacked_bar(parts, "GiB", caption) + "<figcaption>" + e(caption) +
                      "; hover a part for its size</figcaption></figure>" + key + "</p>";
    out +=
        "<div class=\"scroll\"><table><thead><tr><th>item</th><th>GiB</th><th>how it is counted</th></tr></thead>"
        "<tbody>" +
        rows + "<tr><th>need per GPU</th><td class=\"num\">" + e(gib(m.need_per_gpu)) + "</td><td></td></tr>";
    if (m.gpus > 1)
        out += "<tr><th>need in total</th><td class=\"num\">" + e(gib(m.total())) + "</td><td>× " +
               std::to_string(m.gpus) + " GPUs</td></tr>";
    if (m.cpu_bytes > 0)
        out += "<tr><th>host RAM for offload</th><td class=\"num\">" + e(gib(m.cpu_bytes)) +
               "</td><td>DeepSpeed estimate</td></tr>";
    out += "</tbody></table></div>";
    if (!m.bytes_per_param_how.empty()) out += "<p class=\"note\">" + e(m.bytes_per_param_how) + "</p>";
    for (const std::string& n : m.notes) out += "<p class=\"note\">note: " + e(n) + "</p>";
    return out + "</section>";
}

std::string card_row(const PlanView& v, const SkuRow& r, bool hours, bool cost) {
    bool train = is_training(v.w.task);
    std::string name = r.spec->name + (r.rates_source == "measured" ? " *" : "");
    std::string out = "<tr data-sku=\"" + e(r.spec->key) + "\"><td>" + e(name) + "</td><td class=\"num\">" +
                      e(fmt::format("{:.0f}", r.spec->memory_size_gib)) + "</td>";
    if (!r.cards) {
        int cols = 4 + (hours ? 1 : 0) + (cost ? 1 : 0);
        return out + "<td class=\"v-fail\">no</td><td colspan=\"" + std::to_string(cols) + "\">does not fit within " +
               std::to_string(v.w.gpus.value_or(64)) + " cards</td></tr>";
    }
    auto tok = train ? r.speed.train_tokens_per_s : r.speed.decode_tokens_per_s;
    std::string nv = r.nvlink_needed ? (r.has_nvlink ? "needed" : "MISSING") : (r.has_nvlink ? "has" : "—");
    out += "<td class=\"v-pass\">yes</td><td class=\"num\">" + std::to_string(*r.cards) + "</td><td class=\"num\">" +
           e(gib(r.plan->need_per_gpu)) + "</td><td" + (nv == "MISSING" ? " class=\"v-fail\"" : "") + ">" + nv +
           "</td><td class=\"num\">" + e(tok ? format_number(*tok) : "—") + "</td>";
    if (hours)
        out += "<td class=\"num\">" +
               e(r.speed.hours_for_budget ? format_fixed(*r.speed.hours_for_budget, 1) : std::string("—")) + "</td>";
    if (cost) out += "<td class=\"num\">" + e(r.cost ? format_fixed(*r.cost, 0) : std::string("—")) + "</td>";
    return out + "</tr>";
}

std::string cards(const PlanView& v) {
    bool train = is_training(v.w.task);
    bool hours = v.tokens > 0, cost = v.prices != nullptr;
    std::string out = "<section id=\"cards\"><h2>Cards, best first for scenario " + e(v.scenario.key) +
                      "</h2><div class=\"scroll\"><table class=\"cards\"><thead><tr><th>GPU</th><th>GiB</th>"
                      "<th>fits</th><th>cards</th><th>GiB/card need</th><th>NVLink</th><th>" +
                      std::string(train ? "train tok/s" : "decode tok/s") + " per box</th>" +
                      (hours ? "<th>hours</th>" : "") + (cost ? "<th>cost " + e(v.prices->currency) + "</th>" : "") +
                      "</tr></thead><tbody>";
    int shown = 0, hidden = 0;
    for (const SkuRow& r : v.rec.rows) {
        if (!v.all && (shown >= v.top || !r.cards)) {
            ++hidden;
            continue;
        }
        ++shown;
        out += card_row(v, r, hours, cost);
    }
    out += "</tbody></table></div>";
    std::string legend = fmt::format("Speed at {:.0f}% utilization", v.a.mfu * 100);
    if (!train) legend += fmt::format(", decode at {:.0f}% of bandwidth", v.a.bandwidth_eff * 100);
    legend +=
        "; per box: tokens per second of all the row's cards together. NVLink MISSING: the plan splits the "
        "model across cards that only have PCIe.";
    if (v.measured) legend += " *: rates measured by the --measured report.";
    if (hidden) legend += fmt::format(" {} more SKU(s) not shown (--all lists every one).", hidden);
    out += "<p class=\"note\">" + e(legend) + "</p>";
    if (v.prices)
        for (const std::string& n : v.prices->notes) out += "<p class=\"note\">prices: " + e(n) + "</p>";
    return out + "</section>";
}

// The serving capacity of the terminal's section: the budget's terms, the KV tokens, the concurrency.
std::string serving(const PlanView& v) {
    const SkuRow* row = serving_row(v);
    if (!row) return "";
    const ServingCapacity& c = *row->serving;
    std::string rows = "<tr><td>budget</td><td class=\"num\">" + e(gib(c.budget_bytes)) + "</td><td>" +
                       e(fmt::format("{:.2f} GiB × {:.2f} (--engine-fraction)", c.total_bytes / kGiB, c.fraction)) +
                       "</td></tr>";
    for (const ServingTerm& t : c.terms)
        rows += "<tr data-term=\"" + e(t.key) + "\"><td>− " + e(t.label) + "</td><td class=\"num\">" +
                e(gib(t.bytes_per_gpu)) + "</td><td>" + e(t.how) + "</td></tr>";
    rows += "<tr><th>= KV cache</th><td class=\"num\">" + e(gib(c.kv_bytes)) + "</td><td>" +
            e(fmt::format("{:.0f} B per token per GPU: {}", c.kv_bytes_per_token, c.kv_how)) + "</td></tr>";
    std::string verdict = c.fits ? fmt::format(
                                       "{} tokens of KV cache; maximum concurrency for {} tokens per "
                                       "request: {:.2f}x",
                                       c.kv_tokens, c.seq, c.max_concurrency)
                                 : "Does not serve: " + c.problem;
    return "<section id=\"serving\"><h2>" +
           e(fmt::format("Serving capacity on {}× {}, per GPU ({})", c.gpus, c.card, c.engine.name)) +
           "</h2><div class=\"scroll\"><table><thead><tr><th>item</th><th>GiB</th><th>how it is counted</th>"
           "</tr></thead><tbody>" +
           rows + "</tbody></table></div><p class=\"" + (c.fits ? "note" : "note v-fail") + "\">" + e(verdict) +
           "</p></section>";
}

}  // namespace

std::string render_plan_html(const Envelope& env, const PlanView& v) {
    std::string body = heading(v) + memory(v) + serving(v) + cards(v) + levers_html(v.rec.levers);
    return html_page("gpuvet plan · " + v.model.name + " · " + to_string(v.w.task), body,
                     "Written by gpuvet " + e(env.tool_version) +
                         (env.started_at.empty() ? std::string() : " on " + e(env.started_at)) +
                         ". Memory in GiB (2^30 bytes); speeds are estimates from datasheet or measured rates, "
                         "see docs/plan.md.");
}

}  // namespace gpuvet
