#include <algorithm>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "checks/gpu_nvlink.hpp"
#include "gpu/identify.hpp"
#include "checks/gpu_inventory_check.hpp"
#include "checks/gpu_requirements.hpp"
#include "order/order.hpp"
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

// The smallest memory among the SKUs the ordered model fits (what the order promises at least).
std::optional<double> ordered_memory_gib(const Order& o, const SpecDb& db) {
    if (o.gpu_memory_gib) return o.gpu_memory_gib;
    std::optional<double> m;
    for (auto& k : o.gpu_skus)
        if (auto* s = db.by_key(k)) m = m ? std::min(*m, s->memory_size_gib) : s->memory_size_gib;
    return m;
}

std::string plural(int n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

std::vector<CheckResult> verify_gpu_items(const Order& o, const CheckContext& ctx) {
    std::vector<CheckResult> out;
    const SpecDb& db = *ctx.specs;
    std::optional<double> mem_gib = ordered_memory_gib(o, db);
    bool gpus_ordered = o.gpu_count || o.gpu_model || mem_gib || o.nvlink_required.value_or(false) || o.mig_expected.value_or(false);
    if (!gpus_ordered) return out;

    // Ordered GPUs but none can be seen: every GPU item fails with the driver's reason.
    auto absent = gpu_requirement(ctx, GpuNeed::Inventory, true);
    const std::vector<GpuInfo> none;
    const std::vector<GpuInfo>& gpus = absent ? none : ctx.facts->all_gpus();
    int n = int(gpus.size());
    auto fail_absent = [&](CheckResult& r, const std::string& what) {
        r.verdict = Verdict::Fail;
        r.summary = "Ordered " + what + ", but " + *absent + ".";
    };

    if (o.gpu_count) {
        CheckResult r = order_item("order.gpu_count", "Order: GPU count");
        Measurement m = absent ? Measurement::absent("gpu_count", "GPUs", "count", *absent)
                               : Measurement::number("gpu_count", "GPUs", n, "count");
        r.measurements.push_back(m.against(ordered(std::to_string(*o.gpu_count), *o.gpu_count)));
        if (absent) fail_absent(r, plural(*o.gpu_count, "GPU"));
        else if (n == *o.gpu_count) {
            r.verdict = Verdict::Pass;
            r.summary = plural(n, "GPU") + " as ordered.";
        } else {
            r.verdict = Verdict::Fail;
            r.summary = plural(n, "GPU") + " where " + std::to_string(*o.gpu_count) + " were ordered.";
        }
        out.push_back(r);
    }

    if (o.gpu_model) {
        CheckResult r = order_item("order.gpu_model", "Order: GPU model");
        std::string want = skus_text(o, db);
        if (o.gpu_skus.size() > 1)
            r.details.push_back("'" + *o.gpu_model + "' fits several SKUs; any of " + want +
                                " is accepted (write the full name to require one)");
        else
            r.details.push_back("'" + *o.gpu_model + "' is the " + want + " in the spec database");
        int right = 0;
        std::string first_wrong;
        for (const GpuInfo& g : gpus) {
            Identification id = identify_gpu(g, db);
            bool ok = id.spec && std::find(o.gpu_skus.begin(), o.gpu_skus.end(), id.spec->key) != o.gpu_skus.end();
            right += ok ? 1 : 0;
            if (!ok) {
                std::string is = id.spec ? with_article(id.spec->name) : (g.name ? "'" + *g.name + "' (not in the spec database)" : "unidentified");
                r.details.push_back("GPU " + std::to_string(g.index) + " is " + is);
                if (first_wrong.empty()) first_wrong = "GPU " + std::to_string(g.index) + " is " + is;
            }
        }
        Measurement m = absent ? Measurement::absent("gpus_as_ordered", "GPUs of the ordered model", "count", *absent)
                               : Measurement::number("gpus_as_ordered", "GPUs of the ordered model", right, "count");
        r.measurements.push_back(m.against(ordered(want, o.gpu_count ? std::optional<double>(*o.gpu_count) : std::nullopt)));
        if (absent) fail_absent(r, want);
        else if (n == 0) {
            r.verdict = Verdict::Fail;
            r.summary = "Ordered " + want + ", but the driver sees no GPU.";
        } else if (right == n) {
            r.verdict = Verdict::Pass;
            r.summary = (n == 1 ? "The GPU is " : "All " + std::to_string(n) + " GPUs are ") + "of the ordered model (" + want + ").";
        } else {
            r.verdict = Verdict::Fail;
            r.summary = std::to_string(n - right) + " of " + plural(n, "GPU") + " are not the ordered " + want + ": " + first_wrong + ".";
        }
        out.push_back(r);
    }

    if (mem_gib) out.push_back(verify_gpu_memory(*mem_gib, o.gpu_memory_gib.has_value(), gpus, absent, db));

    if (o.nvlink_required.value_or(false)) {
        CheckResult r = order_item("order.nvlink", "Order: NVLink");
        int with = 0;
        std::string without;
        for (const GpuInfo& g : gpus) {
            if (active_nvlinks(g) > 0) ++with;
            else without += (without.empty() ? "" : ", ") + std::to_string(g.index);
        }
        Measurement m = absent ? Measurement::absent("gpus_with_nvlink", "GPUs with active NVLink", "count", *absent)
                               : Measurement::number("gpus_with_nvlink", "GPUs with active NVLink", with, "count");
        r.measurements.push_back(m.against(ordered("every GPU", n)));
        if (absent) fail_absent(r, "NVLink");
        else if (n == 1) {
            // NVLink joins GPUs to each other: with one GPU there is nothing to verify, and an SXM GPU
            // rented alone from an HGX board shows its links present but untrained.
            r.verdict = Verdict::Warn;
            r.summary = "NVLink was ordered, but the box has one GPU: NVLink only carries traffic between GPUs, so it "
                        "cannot be used or verified here (" + std::to_string(int(gpus[0].nvlinks.size())) +
                        " links present, " + std::to_string(active_nvlinks(gpus[0])) +
                        " active); order two or more GPUs of one NVLink domain if you need it.";
            r.details.push_back("a one-GPU slice of an NVLink board keeps its links untrained: there is no peer to link to");
        } else if (n > 0 && without.empty()) {
            r.verdict = Verdict::Pass;
            r.summary = "Every GPU has active NVLink links, as ordered.";
        } else {
            r.verdict = Verdict::Fail;
            r.summary = n == 0 ? "NVLink was ordered, but the driver sees no GPU." : "NVLink was ordered, but GPU " + without + " has no active NVLink link.";
        }
        out.push_back(r);
    }

    if (o.mig_expected.value_or(false)) {
        CheckResult r = order_item("order.mig", "Order: MIG");
        int with = 0;
        std::string without;
        for (const GpuInfo& g : gpus) {
            if (g.mig_enabled.value_or(false)) ++with;
            else without += (without.empty() ? "" : ", ") + std::to_string(g.index);
        }
        Measurement m = absent ? Measurement::absent("gpus_with_mig", "GPUs in MIG mode", "count", *absent)
                               : Measurement::number("gpus_with_mig", "GPUs in MIG mode", with, "count");
        r.measurements.push_back(m.against(ordered("every GPU", n)));
        if (absent) fail_absent(r, "MIG");
        else if (n > 0 && without.empty()) {
            r.verdict = Verdict::Pass;
            r.summary = "Every GPU is in MIG mode, as ordered.";
        } else {
            r.verdict = Verdict::Fail;
            r.summary = n == 0 ? "MIG was ordered, but the driver sees no GPU." : "MIG was ordered, but GPU " + without + " is not in MIG mode.";
        }
        out.push_back(r);
    }
    return out;
}

}  // namespace gpuvet
