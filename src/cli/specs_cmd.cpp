// gpuvet specs list | show NAME | compare A B [C...]
#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/specs_view.hpp"
#include "specs/spec_db.hpp"
#include "specs/spec_fields.hpp"
#include "report/spec_json.hpp"

namespace gpuvet {

namespace {

struct SpecsArgs {
    std::string show;
    std::vector<std::string> compare;
};

Json match_json(const std::string& q, const SpecMatch& m) {
    Json alts = Json::array();
    for (auto* a : m.alternatives) alts.push_back(a->key);
    return Json{{"query", q}, {"sku", m.spec->key}, {"how", m.how}, {"alternatives", alts}};
}

int list(const GlobalOptions& g) {
    SpecDb db = load_specs(g);
    if (g.json) {
        Json j{{"gpus", Json::array()}};
        for (auto& s : db.all()) j["gpus"].push_back(to_json(s));
        std::cout << render_document(finished_envelope(g), j);
    } else {
        std::cout << render_specs_list(db, detect_style(g.no_color));
    }
    return 0;
}

int show(const GlobalOptions& g, const std::string& name) {
    SpecDb db = load_specs(g);
    SpecMatch m = db.match(name);
    if (g.json) {
        Json j{{"match", match_json(name, m)}, {"gpu", to_json(*m.spec)}};
        std::cout << render_document(finished_envelope(g), j);
    } else {
        Style st = detect_style(g.no_color);
        std::cout << st.dim(describe_match(name, m)) << "\n" << render_spec_show(*m.spec, st);
    }
    return 0;
}

int compare(const GlobalOptions& g, const std::vector<std::string>& names) {
    if (names.size() < 2)
        throw usage_error("specs compare needs at least two GPU names", "example: gpuvet specs compare h100 h200");
    SpecDb db = load_specs(g);
    std::vector<const GpuSpec*> specs;
    std::vector<SpecMatch> matches;
    for (auto& n : names) {
        matches.push_back(db.match(n));
        specs.push_back(matches.back().spec);
    }
    if (g.json) {
        Json j{{"matches", Json::array()}, {"gpus", Json::array()}, {"ratios_to_first", Json::object()}};
        for (std::size_t i = 0; i < names.size(); ++i) {
            j["matches"].push_back(match_json(names[i], matches[i]));
            j["gpus"].push_back(to_json(*specs[i]));
        }
        for (auto& f : numeric_spec_fields()) {
            Json row = Json::array();
            auto base = f.get(*specs.front());
            for (auto* s : specs) {
                auto v = f.get(*s);
                row.push_back(v && base && *base > 0 ? Json(*v / *base) : Json(nullptr));
            }
            j["ratios_to_first"][f.key] = row;
        }
        std::cout << render_document(finished_envelope(g), j);
    } else {
        Style st = detect_style(g.no_color);
        for (std::size_t i = 0; i < names.size(); ++i)
            std::cout << st.dim(describe_match(names[i], matches[i])) << "\n";
        std::cout << "\n" << render_specs_compare(specs, st);
    }
    return 0;
}

}  // namespace

void add_specs_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("specs", "The GPU spec database: list, show and compare SKUs");
    sub->require_subcommand(1);
    auto args = std::make_shared<SpecsArgs>();
    auto* l = sub->add_subcommand("list", "every known SKU with its headline figures");
    auto* s = sub->add_subcommand("show", "every datasheet figure of one SKU, with its source");
    s->add_option("name", args->show, "GPU name as you would write it: h100, 'a100 80g pcie', 4090")->required();
    auto* c = sub->add_subcommand("compare", "SKUs side by side, with ratios to the first");
    c->add_option("names", args->compare, "two or more GPU names")->required()->expected(2, 16);
    for (auto* x : {l, s, c}) add_output_flags(*x, cli.global, {.report = false});
    sub->footer(
        "Examples:\n"
        "  gpuvet specs list\n"
        "  gpuvet specs show 'a100 80g pcie'\n"
        "  gpuvet specs compare h100-sxm h200 --json");
    on_chosen(cli, *l, "specs list", list);
    on_chosen(cli, *s, "specs show", [args](const GlobalOptions& g) { return show(g, args->show); });
    on_chosen(cli, *c, "specs compare", [args](const GlobalOptions& g) { return compare(g, args->compare); });
}

}  // namespace gpuvet
