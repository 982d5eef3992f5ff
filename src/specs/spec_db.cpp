#include "specs/spec_db.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/text_limits.hpp"
#include "core/strings.hpp"
#include "specs/driver_memory.hpp"
#include "specs/toml_input.hpp"

namespace gpuvet {

namespace embedded {
std::string_view gpus_toml();
}

namespace {

std::string where(const std::string& origin, const toml::source_region& src) { return toml_where(origin, src); }

constexpr const char* kSpecAdvice = "fix the value; docs/gpu-specs.md lists every key with its unit";
// Datasheet figures (GiB, GB/s, TFLOPS, W, MHz) are positive and far below a billion.
constexpr NumberRule kFigureRule{.min = 0,
                                 .max = 1e9,
                                 .min_open = true,
                                 .what = "a figure",
                                 .suffix = "(omit the key when unknown)",
                                 .example = "80"};
constexpr NumberRule kCountRule{.min = 1, .max = 1000000, .whole = true, .what = "a count", .example = "132"};
constexpr NumberRule kSmallCountRule{.min = 0, .max = 1000, .whole = true, .what = "a count", .example = "7"};

[[noreturn]] void bad(const std::string& origin, const toml::node& node, const std::string& what) {
    throw input_error(where(origin, node.source()) + ": " + what, kSpecAdvice);
}

struct Reader {
    const toml::table& table;
    const std::string& origin;
    std::set<std::string> seen;

    const toml::node* get(const char* k) {
        seen.insert(k);
        return table.get(k);
    }
    void str(const char* k, std::string& out) {
        if (auto* n = get(k)) {
            auto v = n->value<std::string>();
            if (!n->is_string() || !v) bad(origin, *n, std::string("'") + k + "' must be a string");
            out = *v;
        }
    }
    void strs(const char* k, std::vector<std::string>& out) {
        if (auto* n = get(k)) {
            auto* arr = n->as_array();
            if (!arr) bad(origin, *n, std::string("'") + k + "' must be an array of strings");
            out.clear();
            for (auto& e : *arr) {
                if (!e.is_string()) bad(origin, e, std::string("'") + k + "' must hold strings");
                out.push_back(*e.value<std::string>());
            }
        }
    }
    double positive(const toml::node& n, const char* k) {
        double v = 0;
        if (n.is_integer()) v = double(*n.value<std::int64_t>());
        else if (n.is_floating_point()) v = *n.value<double>();
        else bad(origin, n, std::string("'") + k + "' must be a number");
        return check_number_field(where(origin, n.source()), k, v, kFigureRule, kSpecAdvice);
    }
    // Hex is for PCI ids; a count written as 0x84 is almost surely a slip.
    void decimal(const toml::node& n, const char* k) {
        if (auto* i = n.as_integer();
            i && (i->flags() & toml::value_flags::format_as_hexadecimal) != toml::value_flags::none)
            bad(origin, n, std::string("'") + k + "' is written in hexadecimal; write it in decimal");
    }
    void num(const char* k, std::optional<double>& out) {
        if (auto* n = get(k)) out = positive(*n, k);
    }
    void num(const char* k, double& out) {
        if (auto* n = get(k)) out = positive(*n, k);
    }
    void integer(const char* k, std::optional<int>& out) {
        if (auto* n = get(k)) {
            if (!n->is_integer()) bad(origin, *n, std::string("'") + k + "' must be a whole number");
            decimal(*n, k);
            out = int(check_whole_field(where(origin, n->source()), k, double(*n->value<std::int64_t>()), kCountRule,
                                        kSpecAdvice));
        }
    }
    void nonneg_int(const char* k, int& out) {
        if (auto* n = get(k)) {
            if (!n->is_integer()) bad(origin, *n, std::string("'") + k + "' must be a whole number");
            decimal(*n, k);
            out = int(check_whole_field(where(origin, n->source()), k, double(*n->value<std::int64_t>()),
                                        kSmallCountRule, kSpecAdvice));
        }
    }
    void boolean(const char* k, bool& out) {
        if (auto* n = get(k)) {
            if (!n->is_boolean()) bad(origin, *n, std::string("'") + k + "' must be true or false");
            out = *n->value<bool>();
        }
    }
    void ids(const char* k, std::vector<std::uint32_t>& out) {
        if (auto* n = get(k)) {
            auto* arr = n->as_array();
            if (!arr) bad(origin, *n, std::string("'") + k + "' must be an array like [0x2330]");
            out.clear();
            for (auto& e : *arr) {
                if (!e.is_integer()) bad(origin, e, std::string("'") + k + "' must hold integers like 0x2330");
                auto v = *e.value<std::int64_t>();
                if (v <= 0 || v > 0xffff) bad(origin, e, "a PCI device id is a 16-bit number like 0x2330");
                out.push_back(std::uint32_t(v));
            }
        }
    }
    void reject_unknown() {
        for (auto& [k, v] : table) {
            if (!seen.count(std::string(k.str()))) {
                bad(origin, v,
                    "unknown key '" + std::string(k.str()) + "' (keys carry their unit, e.g. memory_bandwidth_gbps)");
            }
        }
    }
};

void read_spec(Reader& r, GpuSpec& s) {
    r.str("key", s.key);
    r.str("name", s.name);
    r.str("vendor", s.vendor);
    r.strs("aliases", s.aliases);
    r.strs("driver_names", s.driver_names);
    r.ids("pci_device_ids", s.pci_device_ids);
    r.str("architecture", s.architecture);
    r.str("compute_capability", s.compute_capability);
    r.integer("sm_count", s.sm_count);
    r.str("gfx_target", s.gfx_target);
    r.integer("compute_units", s.compute_units);
    {
        std::optional<int> per_board;
        r.integer("devices_per_board", per_board);
        if (per_board) s.devices_per_board = *per_board;
    }
    r.num("memory_size_gib", s.memory_size_gib);
    r.integer("driver_memory_ecc_on_mib", s.driver_memory_ecc_on_mib);
    r.integer("driver_memory_ecc_off_mib", s.driver_memory_ecc_off_mib);
    r.str("driver_memory_source", s.driver_memory_source);
    r.str("memory_type", s.memory_type);
    r.integer("memory_bus_width_bits", s.memory_bus_width_bits);
    r.num("memory_bandwidth_gbps", s.memory_bandwidth_gbps);
    r.integer("boost_clock_mhz", s.boost_clock_mhz);
    r.num("fp64_tflops", s.fp64_tflops);
    r.num("fp32_tflops", s.fp32_tflops);
    r.num("fp16_tflops", s.fp16_tflops);
    r.num("bf16_tflops", s.bf16_tflops);
    r.num("fp64_tensor_tflops", s.fp64_tensor_tflops);
    r.num("tf32_tensor_tflops", s.tf32_tensor_tflops);
    r.num("fp16_tensor_tflops", s.fp16_tensor_tflops);
    r.num("bf16_tensor_tflops", s.bf16_tensor_tflops);
    r.num("fp8_tensor_tflops", s.fp8_tensor_tflops);
    r.num("int8_tensor_tops", s.int8_tensor_tops);
    r.num("tdp_w", s.tdp_w);
    r.integer("pcie_generation", s.pcie_generation);
    r.integer("pcie_lanes", s.pcie_lanes);
    r.integer("nvlink_generation", s.nvlink_generation);
    r.integer("nvlink_links", s.nvlink_links);
    r.num("nvlink_bandwidth_gbps", s.nvlink_bandwidth_gbps);
    r.integer("xgmi_links", s.xgmi_links);
    r.num("xgmi_link_bandwidth_gbps", s.xgmi_link_bandwidth_gbps);
    r.boolean("ecc", s.ecc);
    r.nonneg_int("mig_instances_max", s.mig_instances_max);
    r.str("form_factor", s.form_factor);
    r.str("source", s.source);
    r.str("notes", s.notes);
    r.reject_unknown();
}

void require_complete(const GpuSpec& s, const std::string& origin, const toml::table& t) {
    auto missing = [&](const char* k) { bad(origin, t, "SKU '" + s.key + "' needs '" + k + "'"); };
    if (s.name.empty()) missing("name");
    if (s.architecture.empty()) missing("architecture");
    if (s.vendor != "NVIDIA" && s.vendor != "AMD")
        bad(origin, t, "SKU '" + s.key + "': vendor '" + s.vendor + "' is neither \"NVIDIA\" nor \"AMD\"");
    if (s.vendor == "NVIDIA" && s.compute_capability.empty()) missing("compute_capability");
    if (s.vendor == "AMD" && s.gfx_target.empty()) missing("gfx_target");
    if (!(s.memory_size_gib > 0)) missing("memory_size_gib");
    if (s.memory_type.empty()) missing("memory_type");
    if (s.source.empty()) missing("source");
    if ((s.driver_memory_ecc_on_mib || s.driver_memory_ecc_off_mib) && s.driver_memory_source.empty())
        missing("driver_memory_source");
    if (s.driver_memory_ecc_off_mib && !ecc_changes_capacity(s.memory_type))
        bad(origin, t,
            "SKU '" + s.key + "' has " + s.memory_type +
                " memory, whose capacity ECC does not change: give driver_memory_ecc_on_mib only");
    // A published figure far from the size as sold is a typo (MB for MiB, another SKU's value).
    // It is per GPU as the driver lists it: a die of a multi-die board has its share.
    const double per_device = s.memory_per_device_gib();
    for (auto& v : {s.driver_memory_ecc_on_mib, s.driver_memory_ecc_off_mib})
        if (v && (*v > per_device * 1024 * 1.02 || *v < per_device * 1024 * 0.9))
            bad(origin, t,
                "SKU '" + s.key + "': driver memory " + std::to_string(*v) + " MiB does not fit " +
                    format_number(per_device) + " GiB per GPU as sold (MiB = 1024 x 1024 bytes)");
}

// Words that say nothing about which SKU is meant.
bool noise_word(const std::string& t) {
    static const std::set<std::string> noise = {"nvidia",   "geforce", "tesla", "tensor", "core",    "gpu",
                                                "graphics", "card",    "the",   "amd",    "instinct"};
    return noise.count(t) > 0;
}

std::string compact(std::string_view s) {
    std::string out;
    for (auto& t : spec_name_tokens(s)) out += t;
    return out;
}

std::vector<std::string> names_of(const GpuSpec& s) {
    std::vector<std::string> n = {s.key, s.name};
    n.insert(n.end(), s.aliases.begin(), s.aliases.end());
    n.insert(n.end(), s.driver_names.begin(), s.driver_names.end());
    return n;
}

// Ranking among several fitting SKUs: the flagship form factor, then the larger memory.
int form_rank(const GpuSpec& s) {
    std::string f = to_lower(s.form_factor);
    if (f.rfind("sxm", 0) == 0) return 0;
    if (f == "oam" || f == "superchip") return 2;
    if (f == "pcie") return 1;
    return 3;
}

// A SKU that claims another SKU's PCI id, alias or driver name would silently change what the
// inventory and --expect resolve to; overriding that SKU by its key is the way to change it.
// `prior`: the SKU as it was before this file overrode it; what it already had is not a claim.
void check_no_takeover(const std::vector<GpuSpec>& specs, std::size_t before, const GpuSpec& s, const GpuSpec* prior,
                       const std::string& at) {
    auto same = [](const std::string& a, const std::string& b) { return to_lower(trim(a)) == to_lower(trim(b)); };
    auto had = [&](auto member, const auto& v) {
        return prior && std::find((prior->*member).begin(), (prior->*member).end(), v) != (prior->*member).end();
    };
    for (std::size_t i = 0; i < before && i < specs.size(); ++i) {
        const GpuSpec& o = specs[i];
        if (o.key == s.key) continue;
        auto refuse = [&](const std::string& what) {
            throw input_error(at + ": SKU '" + s.key + "' claims " + what + " of SKU '" + o.key + "'",
                              "to change that SKU, write key = \"" + o.key +
                                  "\" in the [[gpu]] table: it then overrides just the fields it sets");
        };
        for (auto id : s.pci_device_ids)
            for (auto oid : o.pci_device_ids)
                if (id == oid && s.vendor == o.vendor && !had(&GpuSpec::pci_device_ids, id)) {
                    char hex[16];
                    std::snprintf(hex, sizeof hex, "0x%04x", unsigned(id));
                    refuse(std::string("PCI device id ") + hex);
                }
        for (auto& a : s.aliases)
            for (auto& n : names_of(o))
                if (same(a, n) && !had(&GpuSpec::aliases, a)) refuse("the name '" + a + "'");
        for (auto& d : s.driver_names)
            for (auto& od : o.driver_names)
                if (same(d, od) && !had(&GpuSpec::driver_names, d)) refuse("the driver name '" + d + "'");
    }
}

}  // namespace

std::vector<std::string> spec_name_tokens(std::string_view name) {
    std::vector<std::string> out;
    std::string cur;
    auto flush = [&] {
        if (cur.empty()) return;
        std::string t = cur;
        cur.clear();
        if (noise_word(t)) return;
        // Memory sizes: 80g, 80gb, 80gib, 141g -> "80gb".
        std::size_t d = 0;
        while (d < t.size() && std::isdigit(static_cast<unsigned char>(t[d]))) ++d;
        if (d > 0 && d < t.size()) {
            std::string suffix = t.substr(d);
            if (suffix == "g" || suffix == "gb" || suffix == "gib") {
                out.push_back(t.substr(0, d) + "gb");
                return;
            }
        }
        out.push_back(t);
        // "sxm5" is also an "sxm"; "pcie4" is also a "pcie".
        for (const char* base : {"sxm", "pcie"}) {
            std::string b = base;
            if (t.size() > b.size() && t.rfind(b, 0) == 0 && std::all_of(t.begin() + b.size(), t.end(), [](char c) {
                    return std::isdigit(static_cast<unsigned char>(c));
                }))
                out.push_back(b);
        }
    };
    for (char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c))) cur += char(std::tolower(static_cast<unsigned char>(c)));
        else flush();
    }
    flush();
    return out;
}

SpecDb SpecDb::embedded() {
    SpecDb db;
    db.merge_toml(embedded::gpus_toml(), "data/gpus.toml");
    return db;
}

void SpecDb::merge_toml(std::string_view text, const std::string& origin) {
    toml::table root = parse_toml_document(text, origin, "fix the TOML syntax at that place");
    for (auto& [k, v] : root) {
        if (k.str() != "gpu") {
            bad(origin, v, "unknown top-level key '" + std::string(k.str()) + "'; SKUs go in [[gpu]] tables");
        }
    }
    auto* list = root.get("gpu");
    if (!list) return;
    const std::size_t before = specs_.size();  // SKUs of earlier files: a later file may not take theirs
    auto* arr = list->as_array();
    if (!arr) bad(origin, *list, "'gpu' must be an array of tables: write [[gpu]]");
    for (auto& node : *arr) {
        auto* t = node.as_table();
        if (!t) bad(origin, node, "each [[gpu]] entry must be a table");
        auto* keynode = t->get("key");
        if (!keynode || !keynode->is_string())
            bad(origin, *t, "each [[gpu]] needs key = \"...\" (a stable lowercase id)");
        std::string key = *keynode->value<std::string>();
        if (key.empty()) bad(origin, *keynode, "'key' must not be empty");
        GpuSpec* existing = nullptr;
        for (auto& s : specs_)
            if (s.key == key) existing = &s;
        GpuSpec spec = existing ? *existing : GpuSpec{};
        Reader r{*t, origin, {}};
        read_spec(r, spec);
        require_complete(spec, origin, *t);
        check_no_takeover(specs_, before, spec, existing, where(origin, t->source()));
        if (existing) *existing = std::move(spec);
        else specs_.push_back(std::move(spec));
    }
}

void SpecDb::merge_file(const std::filesystem::path& path) {
    merge_toml(read_input_file(path, "--specs"), path.string());
}

const GpuSpec* SpecDb::by_key(std::string_view key) const {
    for (auto& s : specs_)
        if (s.key == key) return &s;
    return nullptr;
}

std::vector<const GpuSpec*> SpecDb::by_pci_device_id(std::uint32_t id, std::uint32_t vendor_id) const {
    std::vector<const GpuSpec*> out;
    for (auto& s : specs_)
        if (s.pci_vendor_id() == vendor_id &&
            std::find(s.pci_device_ids.begin(), s.pci_device_ids.end(), id) != s.pci_device_ids.end())
            out.push_back(&s);
    return out;
}

std::vector<const GpuSpec*> SpecDb::by_driver_name(std::string_view reported) const {
    std::vector<const GpuSpec*> out;
    std::string want = to_lower(trim(reported));
    for (auto& s : specs_)
        for (auto& n : s.driver_names)
            if (to_lower(n) == want) {
                out.push_back(&s);
                break;
            }
    return out;
}

std::optional<SpecMatch> SpecDb::try_match(std::string_view query) const {
    std::string q = compact(query);
    if (q.empty()) return std::nullopt;
    // 1. The whole name, however punctuated, equals a key, name, alias or driver name.
    for (auto& s : specs_)
        for (auto& n : names_of(s))
            if (compact(n) == q) return SpecMatch{&s, n == s.key ? "key" : "name", {}};
    // 2. Every word of the query appears among the SKU's words.
    auto qt = spec_name_tokens(query);
    std::vector<const GpuSpec*> fits;
    for (auto& s : specs_) {
        std::set<std::string> words;
        for (auto& n : names_of(s))
            for (auto& t : spec_name_tokens(n)) words.insert(t);
        // "80gb" in the query must match memory exactly, not only a name string.
        bool all = std::all_of(qt.begin(), qt.end(), [&](const std::string& t) { return words.count(t) > 0; });
        if (all) fits.push_back(&s);
    }
    if (fits.empty()) return std::nullopt;
    std::stable_sort(fits.begin(), fits.end(), [](const GpuSpec* a, const GpuSpec* b) {
        if (form_rank(*a) != form_rank(*b)) return form_rank(*a) < form_rank(*b);
        return a->memory_size_gib > b->memory_size_gib;
    });
    SpecMatch m{fits.front(), fits.size() == 1 ? "words" : "preferred of " + std::to_string(fits.size()), {}};
    m.alternatives.assign(fits.begin() + 1, fits.end());
    return m;
}

SpecMatch SpecDb::match(std::string_view query) const {
    if (auto m = try_match(query)) return *m;
    auto near = closest(query);
    std::string list;
    for (auto& n : near) list += (list.empty() ? "" : ", ") + n;
    throw input_error("unknown GPU model '" + std::string(query) + "'" + (list.empty() ? "" : "; closest: " + list),
                      "run 'gpuvet specs list' for every known SKU, or add one with --specs FILE");
}

std::vector<std::string> SpecDb::closest(std::string_view query, std::size_t n) const {
    // Word by word: each query word costs its distance to the nearest word of the SKU's names,
    // so "h1OO" lands on H100 rather than on a short name like A10.
    auto qt = spec_name_tokens(query);
    std::string q = compact(query);
    struct Scored {
        std::size_t words, whole;
        const GpuSpec* spec;
    };
    std::vector<Scored> scored;
    for (auto& s : specs_) {
        std::set<std::string> words;
        std::size_t whole = SIZE_MAX;
        for (auto& name : names_of(s)) {
            for (auto& t : spec_name_tokens(name)) words.insert(t);
            whole = std::min(whole, edit_distance(q, compact(name)));
        }
        std::size_t cost = 0;
        for (auto& t : qt) {
            std::size_t best = t.size();
            for (auto& w : words) best = std::min(best, edit_distance(t, w));
            cost += best;
        }
        scored.push_back({cost, whole, &s});
    }
    std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
        return a.words != b.words ? a.words < b.words : a.whole < b.whole;
    });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && out.size() < n; ++i) out.push_back(scored[i].spec->name);
    return out;
}

}  // namespace gpuvet
