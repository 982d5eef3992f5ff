#include "checks/order_memory.hpp"

#include "core/strings.hpp"
#include "gpu/identify.hpp"
#include "checks/order_verify.hpp"
#include "specs/driver_memory.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

// Sizes as sold are whole GiB figures; this only absorbs floating-point noise.
constexpr double kSoldSizeEpsilonGib = 0.01;

struct GpuMemory {
    bool fulfils = false;
    double have_mib = 0;
    double floor_mib = 0;  // the least this GPU could show and still fulfil the order
    std::string detail;
};

GpuMemory judge(const GpuInfo& g, double ordered_gib, const SpecDb& db) {
    GpuMemory m;
    m.have_mib = double(*g.memory_total_bytes) / double(1ull << 20);
    std::optional<bool> ecc = g.ecc_enabled ? std::optional<bool>(*g.ecc_enabled) : std::nullopt;
    const std::string label = "GPU " + std::to_string(g.index);
    Identification id = identify_gpu(g, db);
    DriverMemoryExpectation rule = expected_driver_memory_for_size(ordered_gib, ecc);
    if (id.spec && id.memory_matches) {
        // The SKU is known and its memory is what that SKU shows: its size as sold is what it has.
        DriverMemoryExpectation sku = expected_driver_memory(*id.spec, ecc);
        // Per GPU as listed: each die of a multi-die board (MI250X) has its share.
        const double sold = id.spec->memory_per_device_gib();
        m.fulfils = sold + kSoldSizeEpsilonGib >= ordered_gib;
        m.floor_mib = m.fulfils ? sku.low_mib : rule.low_mib;
        m.detail = label + ": " + mib_and_gib(m.have_mib) + ", what " + with_article(id.spec->name) + " with " +
                   sku.ecc_state + " shows; sold as " + format_number(sold) + " GiB" +
                   (id.spec->devices_per_board > 1 ? " per die" : "");
    } else {
        // Unknown SKU, or memory that does not match it: hold the figure to the rule for the ordered size.
        m.fulfils = m.have_mib >= rule.low_mib;
        m.floor_mib = rule.low_mib;
        m.detail = label + ": " + mib_and_gib(m.have_mib) + "; a GPU sold as " + format_number(ordered_gib) +
                   " GiB shows at least " + mib_and_gib(rule.low_mib) + " (" + rule.basis + ")";
    }
    return m;
}

}  // namespace

CheckResult verify_gpu_memory(double ordered_gib, bool from_order, const std::vector<GpuInfo>& gpus,
                              const std::optional<std::string>& absent, const SpecDb& db) {
    CheckResult r = order_item("order.gpu_memory", "Order: memory per GPU");
    std::optional<GpuMemory> smallest;
    std::string short_of, unread;
    for (const GpuInfo& g : gpus) {
        if (!g.memory_total_bytes) {
            unread += (unread.empty() ? "" : ", ") + std::to_string(g.index);
            continue;
        }
        GpuMemory m = judge(g, ordered_gib, db);
        if (!smallest || m.have_mib < smallest->have_mib) smallest = m;
        if (!m.fulfils) short_of += (short_of.empty() ? "" : ", ") + std::to_string(g.index);
        r.details.push_back(m.detail);
    }
    Reference ref;
    ref.expected_text = format_number(ordered_gib) + " GiB per GPU as sold";
    ref.spec = ordered_gib;
    if (smallest) ref.fail_below = smallest->floor_mib / 1024;
    ref.source = std::string(from_order ? "the order" : "the ordered model's datasheet") +
                 "; drivers show less than the size as sold (docs/gpu-specs.md, driver memory)";
    Measurement m = smallest ? Measurement::number("gpu_memory_min_gib", "Smallest GPU memory (driver)",
                                                   smallest->have_mib / 1024, "GiB")
                             : Measurement::absent("gpu_memory_min_gib", "Smallest GPU memory (driver)", "GiB",
                                                   absent ? *absent : "memory size not read");
    r.measurements.push_back(m.against(ref));
    const std::string want = format_number(ordered_gib) + " GiB per GPU";
    if (absent) {
        r.verdict = Verdict::Fail;
        r.summary = "Ordered " + want + ", but " + *absent + ".";
    } else if (!short_of.empty()) {
        r.verdict = Verdict::Fail;
        r.summary = "GPU " + short_of + " ha" + (short_of.find(',') == std::string::npos ? "s" : "ve") +
                    " less than the " + format_number(ordered_gib) + " GiB ordered.";
    } else if (!unread.empty() || gpus.empty()) {
        r.verdict = Verdict::Warn;
        r.summary = gpus.empty() ? "The driver sees no GPU to hold to the ordered memory."
                                 : "The memory size of GPU " + unread + " could not be read.";
    } else {
        r.verdict = Verdict::Pass;
        r.summary = "Every GPU has the " + format_number(ordered_gib) + " GiB ordered; the smallest shows " +
                    mib_and_gib(smallest->have_mib) + ", as drivers count it.";
    }
    return r;
}

}  // namespace gpuvet
