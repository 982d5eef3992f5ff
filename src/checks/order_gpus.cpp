#include <algorithm>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "checks/gpu_nvlink.hpp"
#include "gpu/identify.hpp"
#include "checks/gpu_inventory_check.hpp"
#include "checks/gpu_requirements.hpp"
#include "order/order.hpp"
#include "checks/order_gpus.hpp"
#include "checks/order_verify.hpp"
#include "checks/order_memory.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

Reference ordered(std::string text, std::optional<double> spec = std::nullopt) {
    Reference ref;
    ref.expected_text = std::move(text);
    ref.spec = spec;
    ref.source = "the order";
    return ref;
}

std::string skus_text(const Order& o, const SpecDb& db) {
    std::string s;
    for (auto& k : o.gpu_skus)
        if (auto* spec = db.by_key(k)) s += (s.empty() ? "" : " or ") + spec->name;
    return s;
}

// The smallest memory per listed GPU among the SKUs the ordered model fits (what the order promises
// at least): a die's share on a multi-die board.
std::optional<double> ordered_memory_gib(const Order& o, const SpecDb& db) {
    if (o.gpu_memory_gib) return o.gpu_memory_gib;
    std::optional<double> m;
    for (auto& k : o.gpu_skus)
        if (auto* s = db.by_key(k)) m = m ? std::min(*m, s->memory_per_device_gib()) : s->memory_per_device_gib();
    return m;
}

// GPUs the driver lists per ordered board (2 for an MI250X); 1 when the SKUs disagree or are unknown.
int devices_per_board(const Order& o, const SpecDb& db) {
    int n = 0;
    for (auto& k : o.gpu_skus)
        if (auto* s = db.by_key(k)) {
            if (n && n != s->devices_per_board) return 1;
            n = s->devices_per_board;
        }
    return n ? n : 1;
}

std::string plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// A count measurement, or absent with why no GPU can be seen.
Measurement gpu_tally(const char* key, const char* label, int n, const std::optional<std::string>& absent) {
    return absent ? Measurement::absent(key, label, "count", *absent) : Measurement::number(key, label, n, "count");
}

void fail_absent(CheckResult& r, const std::string& what, const std::string& absent) {
    r.verdict = Verdict::Fail;
    r.summary = "Ordered " + what + ", but " + absent + ".";
}

// How many GPUs have a property, and the indexes of those without it ("1, 3").
template <class Has>
std::pair<int, std::string> coverage(const std::vector<GpuInfo>& gpus, Has has) {
    int with = 0;
    std::string without;
    for (const GpuInfo& g : gpus) {
        if (has(g)) ++with;
        else without += (without.empty() ? "" : ", ") + std::to_string(g.index);
    }
    return {with, without};
}

// "GPU 3 is an H100 PCIe 80GB" for a GPU that is not of the ordered model, or empty when it is.
std::string wrong_model(const GpuInfo& g, const Order& o, const SpecDb& db) {
    Identification id = identify_gpu(g, db);
    if (id.spec && std::find(o.gpu_skus.begin(), o.gpu_skus.end(), id.spec->key) != o.gpu_skus.end()) return {};
    std::string is = id.spec ? with_article(id.spec->name)
                             : (g.name ? "'" + *g.name + "' (not in the spec database)" : "unidentified");
    return "GPU " + std::to_string(g.index) + " is " + is;
}

}  // namespace

CheckResult verify_gpu_count(int ordered_boards, const std::vector<GpuInfo>& gpus,
                             const std::optional<std::string>& absent, int devices_per_board) {
    CheckResult r = order_item("order.gpu_count", "Order: GPU count");
    const int n = int(gpus.size());
    // A multi-die board (MI250X) is listed as one GPU per die.
    const int ordered_count = ordered_boards * devices_per_board;
    if (devices_per_board > 1)
        r.details.push_back(std::to_string(ordered_boards) + " boards ordered, of " +
                            std::to_string(devices_per_board) + " dies each, which the driver lists as " +
                            std::to_string(ordered_count) + " GPUs");
    r.measurements.push_back(
        gpu_tally("gpu_count", "GPUs", n, absent).against(ordered(std::to_string(ordered_count), ordered_count)));
    if (absent) {
        fail_absent(r, plural(ordered_count, "GPU"), *absent);
    } else if (n == ordered_count) {
        r.verdict = Verdict::Pass;
        r.summary = plural(n, "GPU") + " as ordered.";
    } else {
        r.verdict = Verdict::Fail;
        r.summary = plural(n, "GPU") + " where " + std::to_string(ordered_count) + " were ordered.";
    }
    return r;
}

CheckResult verify_gpu_model(const Order& o, const std::vector<GpuInfo>& gpus, const std::optional<std::string>& absent,
                             const SpecDb& db) {
    CheckResult r = order_item("order.gpu_model", "Order: GPU model");
    const std::string want = skus_text(o, db);
    if (o.gpu_skus.size() > 1)
        r.details.push_back("'" + *o.gpu_model + "' fits several SKUs; any of " + want +
                            " is accepted (write the full name to require one)");
    else r.details.push_back("'" + *o.gpu_model + "' is the " + want + " in the spec database");
    int right = 0;
    std::string first_wrong;
    for (const GpuInfo& g : gpus) {
        std::string wrong = wrong_model(g, o, db);
        if (wrong.empty()) ++right;
        else r.details.push_back(wrong);
        if (first_wrong.empty()) first_wrong = wrong;
    }
    const int n = int(gpus.size());
    r.measurements.push_back(
        gpu_tally("gpus_as_ordered", "GPUs of the ordered model", right, absent)
            .against(ordered(want, o.gpu_count ? std::optional<double>(*o.gpu_count) : std::nullopt)));
    if (absent) {
        fail_absent(r, want, *absent);
    } else if (n == 0) {
        r.verdict = Verdict::Fail;
        r.summary = "Ordered " + want + ", but the driver sees no GPU.";
    } else if (right == n) {
        r.verdict = Verdict::Pass;
        r.summary = (n == 1 ? "The GPU is " : "All " + std::to_string(n) + " GPUs are ") + "of the ordered model (" +
                    want + ").";
    } else {
        r.verdict = Verdict::Fail;
        r.summary = std::to_string(n - right) + " of " + plural(n, "GPU") + " are not the ordered " + want + ": " +
                    first_wrong + ".";
    }
    return r;
}

CheckResult verify_nvlink(const std::vector<GpuInfo>& gpus, const std::optional<std::string>& absent) {
    CheckResult r = order_item("order.nvlink", "Order: NVLink");
    const int n = int(gpus.size());
    // AMD's GPUs have xGMI (Infinity Fabric) links where NVIDIA's have NVLink.
    auto [with, without] = coverage(gpus, [](const GpuInfo& g) {
        return active_nvlinks(g) > 0 || std::any_of(g.xgmi_links.begin(), g.xgmi_links.end(),
                                                    [](const XgmiLinkInfo& l) { return l.active.value_or(false); });
    });
    r.measurements.push_back(
        gpu_tally("gpus_with_nvlink", "GPUs with active NVLink", with, absent).against(ordered("every GPU", n)));
    if (absent) {
        fail_absent(r, "NVLink", *absent);
    } else if (n == 1) {
        // NVLink joins GPUs to each other: with one GPU there is nothing to verify, and an SXM GPU
        // rented alone from an HGX board shows its links present but untrained.
        r.verdict = Verdict::Warn;
        r.summary =
            "NVLink was ordered, but the box has one GPU: NVLink only carries traffic between GPUs, so it "
            "cannot be used or verified here (" +
            std::to_string(int(gpus[0].nvlinks.size())) + " links present, " + std::to_string(active_nvlinks(gpus[0])) +
            " active); order two or more GPUs of one NVLink domain if you need it.";
        r.details.push_back(
            "a one-GPU slice of an NVLink board keeps its links untrained: there is no peer to link to");
    } else if (n > 0 && without.empty()) {
        r.verdict = Verdict::Pass;
        r.summary = "Every GPU has active NVLink links, as ordered.";
    } else {
        r.verdict = Verdict::Fail;
        r.summary = n == 0 ? "NVLink was ordered, but the driver sees no GPU."
                           : "NVLink was ordered, but GPU " + without + " has no active NVLink link.";
    }
    return r;
}

CheckResult verify_mig(const std::vector<GpuInfo>& gpus, const std::optional<std::string>& absent) {
    CheckResult r = order_item("order.mig", "Order: MIG");
    const int n = int(gpus.size());
    // AMD's GPUs count as sliced when partitioned (compute not SPX, or memory not NPS1).
    auto [with, without] = coverage(gpus, [](const GpuInfo& g) {
        return g.mig_enabled.value_or(false) || amd_partitioned(g) ||
               (g.memory_partition && *g.memory_partition != "NPS1");
    });
    r.measurements.push_back(
        gpu_tally("gpus_with_mig", "GPUs in MIG mode", with, absent).against(ordered("every GPU", n)));
    if (absent) {
        fail_absent(r, "MIG", *absent);
    } else if (n > 0 && without.empty()) {
        r.verdict = Verdict::Pass;
        r.summary = "Every GPU is in MIG mode, as ordered.";
    } else {
        r.verdict = Verdict::Fail;
        r.summary = n == 0 ? "MIG was ordered, but the driver sees no GPU."
                           : "MIG was ordered, but GPU " + without + " is not in MIG mode.";
    }
    return r;
}

std::vector<CheckResult> verify_gpu_items(const Order& o, const CheckContext& ctx) {
    std::vector<CheckResult> out;
    const SpecDb& db = *ctx.specs;
    std::optional<double> mem_gib = ordered_memory_gib(o, db);
    bool gpus_ordered =
        o.gpu_count || o.gpu_model || mem_gib || o.nvlink_required.value_or(false) || o.mig_expected.value_or(false);
    if (!gpus_ordered) return out;

    // Ordered GPUs but none can be seen: every GPU item fails with the driver's reason.
    auto absent = gpu_requirement(ctx, GpuNeed::Inventory, true);
    const std::vector<GpuInfo> none;
    const std::vector<GpuInfo>& gpus = absent ? none : ctx.facts->all_gpus();
    if (o.gpu_count) out.push_back(verify_gpu_count(*o.gpu_count, gpus, absent, devices_per_board(o, db)));
    if (o.gpu_model) out.push_back(verify_gpu_model(o, gpus, absent, db));
    if (mem_gib) out.push_back(verify_gpu_memory(*mem_gib, o.gpu_memory_gib.has_value(), gpus, absent, db));
    if (o.nvlink_required.value_or(false)) out.push_back(verify_nvlink(gpus, absent));
    if (o.mig_expected.value_or(false)) out.push_back(verify_mig(gpus, absent));
    return out;
}

}  // namespace gpuvet
