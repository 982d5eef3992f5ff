// The order file: flat TOML, one key per order item (docs/order.md). Unknown keys are errors,
// so a typo never silently drops an item from the verification.
#include <sstream>
#include <toml++/toml.h>

#include "specs/toml_input.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/text_limits.hpp"
#include "order/order.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

const char* const kKeys =
    "gpu_model, gpu_count, gpu_memory_gib, nvlink_required, mig_expected, cpu_cores, ram_gib, disk_gb, "
    "network_gbitps";

std::string where(const std::string& origin, const toml::source_region& src) { return toml_where(origin, src); }

[[noreturn]] void bad(const std::string& origin, const toml::node& n, const std::string& what) {
    throw input_error(where(origin, n.source()) + ": " + what,
                      std::string("docs/order.md lists the keys with their units: ") + kKeys);
}

// Amounts (GiB, GB, Gbit/s) of a real server: positive and far below 10^9.
constexpr NumberRule kAmountRule{.min = 0, .max = 1e9, .min_open = true, .what = "an amount", .example = "80"};
constexpr NumberRule kGpuCountRule{.min = 1, .max = 1024, .whole = true, .what = "a GPU count", .example = "8"};
constexpr NumberRule kCoresRule{.min = 1, .max = 1000000, .whole = true, .what = "a core count", .example = "64"};

std::string advice() { return std::string("docs/order.md lists the keys with their units: ") + kKeys; }

double positive(const std::string& origin, const toml::node& n, const char* k) {
    double v = 0;
    if (n.is_integer()) v = double(*n.value<std::int64_t>());
    else if (n.is_floating_point()) v = *n.value<double>();
    else bad(origin, n, std::string("'") + k + "' must be a number");
    return check_number_field(where(origin, n.source()), k, v, kAmountRule, advice());
}

int whole(const std::string& origin, const toml::node& n, const char* k, const NumberRule& rule) {
    if (!n.is_integer()) bad(origin, n, std::string("'") + k + "' must be a whole number");
    if ((n.as_integer()->flags() & toml::value_flags::format_as_hexadecimal) != toml::value_flags::none)
        bad(origin, n, std::string("'") + k + "' is written in hexadecimal; write it in decimal");
    return int(check_whole_field(where(origin, n.source()), k, double(*n.value<std::int64_t>()), rule, advice()));
}

bool boolean(const std::string& origin, const toml::node& n, const char* k) {
    if (!n.is_boolean()) bad(origin, n, std::string("'") + k + "' must be true or false");
    return *n.value<bool>();
}

}  // namespace

Order parse_order_toml(std::string_view text, const std::string& origin, const SpecDb& specs) {
    toml::table root =
        parse_toml_document(text, origin, "fix the TOML syntax at that place; docs/order.md has an example");
    Order o;
    o.origin = origin;
    for (auto& [key, node] : root) {
        std::string k(key.str());
        if (k == "gpu_model") {
            auto v = node.value<std::string>();
            if (!node.is_string() || !v || v->empty())
                bad(origin, node, "'gpu_model' must be a GPU name like \"H100 SXM5 80GB\"");
            try {
                resolve_gpu_model(o, *v, specs);
            } catch (const Error& e) {
                throw input_error(where(origin, node.source()) + ": " + e.what(), e.advice());
            }
        } else if (k == "gpu_count") {
            o.gpu_count = whole(origin, node, "gpu_count", kGpuCountRule);
        } else if (k == "gpu_memory_gib") {
            o.gpu_memory_gib = positive(origin, node, "gpu_memory_gib");
        } else if (k == "nvlink_required") {
            o.nvlink_required = boolean(origin, node, "nvlink_required");
        } else if (k == "mig_expected") {
            o.mig_expected = boolean(origin, node, "mig_expected");
        } else if (k == "cpu_cores") {
            o.cpu_cores = whole(origin, node, "cpu_cores", kCoresRule);
        } else if (k == "ram_gib") {
            o.ram_gib = positive(origin, node, "ram_gib");
        } else if (k == "disk_gb") {
            o.disk_gb = positive(origin, node, "disk_gb");
        } else if (k == "network_gbitps") {
            o.network_gbitps = positive(origin, node, "network_gbitps");
        } else {
            bad(origin, node, "unknown key '" + k + "'; known keys: " + kKeys);
        }
    }
    if (o.empty())
        throw input_error(origin + ": the order names no item to check", std::string("set at least one of: ") + kKeys);
    return o;
}

Order load_order_file(const std::string& path, const SpecDb& specs) {
    return parse_order_toml(read_input_file(path, "--order"), path, specs);
}

}  // namespace gpuvet
