// The --expect grammar (docs/order.md): items separated by commas or semicolons.
//   item := [COUNT ["x"]] MODEL | NUMBER[UNIT] NOUN | "nvlink" | "mig" (or AMD's "partitioned", "cpx"...)
// An item that is neither a known flag nor NUMBER+NOUN is a GPU model, resolved through the spec DB.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/strings.hpp"
#include "order/order.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

const char* const kExpectForms =
    "accepted forms, items separated by commas:\n"
    "    8x H100-SXM-80GB   COUNT x MODEL (also '8 x h100 sxm 80g', '8xH100', '8 H100')\n"
    "    H100               a model alone: any number of them\n"
    "    80GB VRAM          memory per GPU\n"
    "    nvlink             NVLink between the GPUs is required\n"
    "    mig                the GPUs are sliced into MIG instances on purpose (AMD: partitioned, cpx, nps4)\n"
    "    64 cores           physical CPU cores\n"
    "    1TB RAM            system memory (memory GB are GiB)\n"
    "    4TB disk           size of the --data-dir filesystem (decimal GB/TB, as disks are sold)\n"
    "    100G network       network throughput in Gbit/s (measured with --net-server)\n"
    "  example: --expect \"8x H100-SXM-80GB, nvlink, 128 cores, 2TB RAM, 8TB disk, 100G network\"";

namespace {

[[noreturn]] void bad_item(std::string_view item, const std::string& why) {
    throw input_error("--expect: cannot use '" + std::string(item) + "': " + why, kExpectForms);
}

struct Quantity {
    double number = 0;
    std::string unit;  // letters and '/' right after the number: "tb", "g", "gbit/s", "x"
    std::string noun;  // the words after it, lower case, single-spaced
};

// "1TB RAM" -> {1, "tb", "ram"}. nullopt when the item does not start with a number.
std::optional<Quantity> read_quantity(std::string_view item) {
    std::string s = to_lower(trim(item));
    std::size_t i = 0;
    Quantity q;
    std::string digits;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
        digits += s[i++];
    }
    // However long, a number followed by a noun is a quantity: its range is judged by its noun.
    if (digits.empty() || digits.front() == '.' || std::count(digits.begin(), digits.end(), '.') > 1)
        return std::nullopt;
    q.number = std::strtod(digits.c_str(), nullptr);
    while (i < s.size() && s[i] == ' ') ++i;
    while (i < s.size() && (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '/')) q.unit += s[i++];
    for (auto& w : split(s.substr(i), ' '))
        if (!w.empty()) q.noun += (q.noun.empty() ? "" : " ") + w;
    // "100gbe": the unit names the network.
    if (q.noun.empty() && q.unit == "gbe") q.noun = "network";
    // "64 cores": the noun was read as the unit.
    if (q.noun.empty() && !q.unit.empty() && q.unit != "x") std::swap(q.noun, q.unit);
    return q;
}

bool one_of(const std::string& s, std::initializer_list<const char*> words) {
    for (auto* w : words)
        if (s == w) return true;
    return false;
}

// Memory is sold in binary units: "GB" of RAM or VRAM means GiB.
double binary_gib(std::string_view item, const Quantity& q) {
    if (one_of(q.unit, {"g", "gb", "gib"})) return q.number;
    if (one_of(q.unit, {"t", "tb", "tib"})) return q.number * 1024;
    if (one_of(q.unit, {"m", "mb", "mib"})) return q.number / 1024;
    bad_item(item, q.unit.empty() ? "give a unit, e.g. 512GB or 1TB" : "unknown size unit '" + q.unit + "'");
}

// Disks are sold in decimal units: "4TB" = 4000 GB.
double decimal_gb(std::string_view item, const Quantity& q) {
    if (one_of(q.unit, {"g", "gb"})) return q.number;
    if (one_of(q.unit, {"t", "tb"})) return q.number * 1000;
    if (q.unit == "gib") return q.number * 1.073741824;
    if (q.unit == "tib") return q.number * 1099.511627776;
    bad_item(item, q.unit.empty() ? "give a unit, e.g. 960GB or 4TB" : "unknown size unit '" + q.unit + "'");
}

// Network speeds are bits: "100G", "100 Gb/s", "100Gbit", "100GbE".
double gbitps(std::string_view item, const Quantity& q) {
    if (one_of(q.unit, {"g", "gb", "gbit", "gbits", "gbit/s", "gb/s", "gbps", "gbe"})) return q.number;
    if (one_of(q.unit, {"m", "mb", "mbit", "mbits", "mbit/s", "mb/s", "mbps"})) return q.number / 1000;
    bad_item(item, q.unit.empty() ? "give a unit, e.g. 100G or 25Gbit/s" : "unknown speed unit '" + q.unit + "'");
}

// The amount in the unit the order is kept in, within what a real server has.
double amount(std::string_view item, double v, const NumberRule& r) {
    if (auto p = number_problem(v, r))
        bad_item(item, *p + "; give " + std::string(r.what) + " " + describe_range(r) + ", e.g. '" +
                           std::string(r.example) + "'");
    return v;
}
constexpr NumberRule kCoresRule{.min = 1, .max = 1000000, .whole = true, .what = "a core count", .example = "64 cores"};
constexpr NumberRule kMemoryRule{
    .min = 0, .max = 1e9, .min_open = true, .what = "a size", .suffix = "GiB", .example = "1TB RAM"};
constexpr NumberRule kVramRule{
    .min = 0, .max = 1e6, .min_open = true, .what = "a size", .suffix = "GiB", .example = "80GB VRAM"};
constexpr NumberRule kDiskRule{
    .min = 0, .max = 1e9, .min_open = true, .what = "a size", .suffix = "GB", .example = "4TB disk"};
constexpr NumberRule kNetworkRule{
    .min = 0, .max = 1e6, .min_open = true, .what = "a speed", .suffix = "Gbit/s", .example = "100G network"};

void set_once(std::string_view item, bool already) {
    if (already) bad_item(item, "this item was already given");
}

void read_gpu_item(std::string_view item, Order& o, const SpecDb& specs) {
    std::string s = trim(item);
    std::size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] == ' ') ++j;
    bool has_x = false;
    if (i > 0 && j < s.size() && (s[j] == 'x' || s[j] == 'X' || s[j] == '*')) {
        has_x = true;
        ++j;
    } else if (i > 0 && s.compare(j, 2, "\xC3\x97") == 0) {  // UTF-8 multiplication sign
        has_x = true;
        j += 2;
    }
    std::string model = s;
    // A leading count needs a separator ("8x", "8 ") so that "4090" stays a model name.
    if (i > 0 && (has_x || j > i)) {
        if (i > 4) bad_item(item, "a GPU count must be between 1 and 1024");
        int n = std::atoi(s.substr(0, i).c_str());
        if (n < 1 || n > 1024) bad_item(item, "a GPU count must be between 1 and 1024");
        model = trim(s.substr(j));
        if (model.empty()) bad_item(item, "which GPU? write e.g. '" + std::to_string(n) + "x H100'");
        set_once(item, o.gpu_count.has_value());
        o.gpu_count = n;
    }
    set_once(item, o.gpu_model.has_value());
    try {
        resolve_gpu_model(o, model, specs);
    } catch (const Error& e) {
        throw input_error(std::string("--expect: ") + e.what(), e.advice() + "\n" + kExpectForms);
    }
}

void read_item(std::string_view item, Order& o, const SpecDb& specs) {
    std::string low = to_lower(trim(item));
    if (one_of(low, {"nvlink", "with nvlink", "nvlink required"})) {
        set_once(item, o.nvlink_required.has_value());
        o.nvlink_required = true;
        return;
    }
    // AMD's counterpart: the GPUs delivered in compute or memory partitions on purpose.
    if (one_of(low, {"mig", "with mig", "mig enabled", "partitioned", "cpx", "dpx", "qpx", "tpx", "nps4"})) {
        set_once(item, o.mig_expected.has_value());
        o.mig_expected = true;
        return;
    }
    if (auto q = read_quantity(item)) {
        const std::string& n = q->noun;
        if (one_of(n, {"core", "cores", "cpu", "cpus", "cpu cores", "vcpu", "vcpus", "cpu core"})) {
            if (!q->unit.empty()) bad_item(item, "write a whole number of cores, e.g. 64 cores");
            double cores = amount(item, q->number, kCoresRule);
            set_once(item, o.cpu_cores.has_value());
            o.cpu_cores = int(cores);
            return;
        }
        if (one_of(n, {"ram", "memory", "mem", "system memory", "system ram"})) {
            double gib = amount(item, binary_gib(item, *q), kMemoryRule);
            set_once(item, o.ram_gib.has_value());
            o.ram_gib = gib;
            return;
        }
        if (one_of(n, {"vram", "gpu memory", "hbm", "vram per gpu", "per gpu"})) {
            double gib = amount(item, binary_gib(item, *q), kVramRule);
            set_once(item, o.gpu_memory_gib.has_value());
            o.gpu_memory_gib = gib;
            return;
        }
        if (one_of(n, {"disk", "disks", "storage", "ssd", "nvme", "data disk"})) {
            double gb = amount(item, decimal_gb(item, *q), kDiskRule);
            set_once(item, o.disk_gb.has_value());
            o.disk_gb = gb;
            return;
        }
        if (one_of(n, {"network", "net", "nic", "ethernet", "bandwidth", "uplink"})) {
            double g = amount(item, gbitps(item, *q), kNetworkRule);
            set_once(item, o.network_gbitps.has_value());
            o.network_gbitps = g;
            return;
        }
    }
    read_gpu_item(item, o, specs);
}

}  // namespace

Order parse_expect(std::string_view text, const SpecDb& specs) {
    Order o;
    o.origin = "--expect \"" + std::string(text) + "\"";
    for (auto& part : split(text, ';')) {
        for (auto& item : split(part, ',')) {
            if (trim(item).empty()) {
                if (trim(text).empty()) bad_item(text, "nothing to expect");
                continue;  // a trailing comma is harmless
            }
            if (item.size() > 200) bad_item(item.substr(0, 40) + "...", "an item this long is not an order item");
            read_item(item, o, specs);
        }
    }
    if (o.empty()) bad_item(text, "nothing to expect");
    return o;
}

}  // namespace gpuvet
