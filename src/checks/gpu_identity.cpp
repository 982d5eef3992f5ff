#include "checks/gpu_identity.hpp"

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "gpu/identify.hpp"
#include "specs/driver_memory.hpp"
#include "specs/spec_db.hpp"
#include "core/units.hpp"

namespace gpuvet {

CheckResult GpuIdentityCheck::lost(const GpuInfo& g) {
    CheckResult r;
    r.verdict = Verdict::Fail;
    r.summary =
        "GPU " + std::to_string(g.index) + " fell off the bus while its facts were read: it needs a reset or repair.";
    for (auto& e : g.errors) r.details.push_back(e);
    return r;
}

namespace {

const std::string kDbSource = "gpuvet spec database (data/gpus.toml)";

Measurement text_or_absent(const char* key, const char* label, const Fact<std::string>& f) {
    return f ? Measurement::textual(key, label, *f) : Measurement::absent(key, label, "", f.absent_reason);
}

// The board's own ids: what the history recognises this GPU by when it moves or is swapped, and the
// PCI device id held against the SKU's.
void add_board_ids(const GpuInfo& g, const GpuSpec* s, CheckResult& r) {
    r.measurements.push_back(text_or_absent("name", "Name (driver)", g.name));
    r.measurements.push_back(text_or_absent("serial", "Serial", g.serial));
    r.measurements.push_back(text_or_absent("vbios_version", "VBIOS", g.vbios_version));
    // A backend without this reading (AMD SMI) leaves it unread: no line rather than a blank one.
    if (g.inforom_image_version.read)
        r.measurements.push_back(text_or_absent("inforom_image_version", "InfoROM image", g.inforom_image_version));
    Measurement pci = g.pci_device_id
                          ? Measurement::textual("pci_device_id", "PCI device id", hex_device_id(*g.pci_device_id))
                          : Measurement::absent("pci_device_id", "PCI device id", "", g.pci_device_id.absent_reason);
    if (s) {
        Reference ref;
        for (auto d : s->pci_device_ids)
            ref.expected_text += (ref.expected_text.empty() ? "" : " or ") + hex_device_id(d);
        ref.source = kDbSource;
        pci.against(ref);
    }
    r.measurements.push_back(pci);
}

Measurement sm_count_measurement(const GpuInfo& g, const GpuSpec* s) {
    Measurement sm =
        g.sm_count ? Measurement::number("sm_count", "Streaming multiprocessors", *g.sm_count, "count")
                   : Measurement::absent("sm_count", "Streaming multiprocessors", "count", g.sm_count.absent_reason);
    if (s && s->sm_count) {
        Reference ref;
        ref.spec = *s->sm_count;
        ref.fail_below = *s->sm_count;
        ref.source = kDbSource + ": " + s->name;
        sm.against(ref);
    }
    return sm;
}

Measurement memory_measurement(const GpuInfo& g, const GpuSpec* s, const Identification& id) {
    Measurement mem =
        g.memory_total_bytes
            ? Measurement::number("memory_total_gib", "Memory (driver)", double(*g.memory_total_bytes) / kGiB, "GiB")
            : Measurement::absent("memory_total_gib", "Memory (driver)", "GiB", g.memory_total_bytes.absent_reason);
    if (s && !id.partitioned) {
        // The driver's figure for this SKU in its ECC state, not the size as sold (docs/gpu-specs.md).
        DriverMemoryExpectation want =
            expected_driver_memory(*s, g.ecc_enabled ? std::optional<bool>(*g.ecc_enabled) : std::nullopt);
        Reference ref;
        ref.spec = want.expected_mib / 1024;
        ref.fail_below = want.low_mib / 1024;
        ref.fail_above = want.high_mib / 1024;
        ref.source = kDbSource + ": " + s->name + " with " + want.ecc_state + ", " + want.basis;
        mem.against(ref);
    }
    return mem;
}

// The verdict: a conflict fails, an unknown SKU or device id warns, a match passes.
void identity_verdict(const GpuInfo& g, const GpuSpec* s, const Identification& id, CheckResult& r) {
    r.details = id.conflicts;
    r.details.insert(r.details.end(), id.unknowns.begin(), id.unknowns.end());
    std::string label = "GPU " + std::to_string(g.index);
    if (!id.conflicts.empty()) {
        r.verdict = Verdict::Fail;
        r.summary = id.conflicts.front() + ".";
    } else if (!s) {
        r.verdict = Verdict::Warn;
        r.summary =
            label + " is not in the spec database, so it cannot be checked against a datasheet; use --specs FILE.";
    } else if (!id.unknowns.empty()) {
        r.verdict = Verdict::Warn;
        r.summary = label + " looks like " + with_article(s->name) +
                    " by its name, but its PCI device id is not in the database.";
    } else if (id.partitioned) {
        r.verdict = Verdict::Pass;
        r.summary = label + " is a " + g.compute_partition.value_or("") + " partition of " + with_article(s->name) +
                    ": PCI device id and name agree; its compute units and memory are the partition's share "
                    "(gpu.tenancy judges the partitioning).";
    } else {
        r.verdict = Verdict::Pass;
        r.summary = label + " is " + with_article(s->name) + ": PCI device id, name, " +
                    (is_amd_gpu(g) ? "compute-unit count" : "SM count") + " and memory size agree.";
    }
}

}  // namespace

CheckResult GpuIdentityCheck::assess(const GpuInfo& g, const GpuSpec*, CheckContext& ctx) {
    const Identification& id = ctx.facts->identification(g.index);
    const GpuSpec* s = id.spec;
    CheckResult r;
    add_board_ids(g, s, r);
    if (is_amd_gpu(g)) add_amd_identity(g, s, id, r);
    else r.measurements.push_back(sm_count_measurement(g, s));
    r.measurements.push_back(memory_measurement(g, s, id));
    if (s) r.measurements.push_back(Measurement::textual("sku", "SKU", s->name));
    identity_verdict(g, s, id, r);
    return r;
}

// AMD: the compute units against the SKU's (per die on a multi-die board), the gfx target, and the
// PCI vendor. A partition (CPX, DPX...) has its share of the compute units: shown, not judged.
void GpuIdentityCheck::add_amd_identity(const GpuInfo& g, const GpuSpec* s, const Identification& id, CheckResult& r) {
    Measurement cu =
        g.compute_units ? Measurement::number("compute_units", "Compute units", *g.compute_units, "count")
                        : Measurement::absent("compute_units", "Compute units", "count", g.compute_units.absent_reason);
    if (s && s->compute_units_per_device() && !id.partitioned) {
        Reference ref;
        ref.spec = *s->compute_units_per_device();
        ref.fail_below = ref.spec;
        ref.source = kDbSource + ": " + s->name + (s->devices_per_board > 1 ? " (per die)" : "");
        cu.against(ref);
    }
    r.measurements.push_back(cu);
    Measurement gfx = g.gfx_target ? Measurement::textual("gfx_target", "gfx target", *g.gfx_target)
                                   : Measurement::absent("gfx_target", "gfx target", "", g.gfx_target.absent_reason);
    if (s && !s->gfx_target.empty()) {
        Reference ref;
        ref.expected_text = s->gfx_target;
        ref.source = kDbSource + ": " + s->name;
        gfx.against(ref);
    }
    r.measurements.push_back(gfx);
    if (id.partitioned)
        r.details.push_back("compute partition " + g.compute_partition.value_or("?") + ", memory partition " +
                            g.memory_partition.value_or("?") +
                            ": the driver lists each partition as a GPU with its share of the compute units and "
                            "memory, so they are not held to the whole GPU's figures");
}

}  // namespace gpuvet
