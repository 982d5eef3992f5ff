// gpuvet inventory: everything the driver and the OS say about this box, no measurements.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "checks/gpu_software.hpp"
#include "checks/host_fabric.hpp"
#include "checks/host_fabric_judge.hpp"
#include "cli/common.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "core/interrupt.hpp"
#include "core/text_safety.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "gpu/inventory.hpp"
#include "gpu/inventory_facts.hpp"
#include "cli/check_run.hpp"
#include "host/identity.hpp"
#include "report/inventory_view.hpp"

namespace gpuvet {

namespace {

std::string fixed_count(double v) { return std::to_string(static_cast<long long>(v)); }

// gpu.software's reading as the inventory lists it: versions and the verdict, for a box with GPUs.
// The probe imports the framework (seconds for PyTorch), so the inventory reads it only when asked:
// --software, or --python naming the interpreter to read; `check` always runs it.
SoftwareFacts software_facts(const Inventory& inv, const std::optional<std::string>& python, bool asked,
                             const HostFs& fs) {
    SoftwareFacts sw;
    if (inv.gpus.empty()) return sw;  // no GPU: nothing for a framework to use, and no probe's seconds spent
    if (!asked) {
        sw.absent_reason =
            "not read: pass --software (it imports the framework, which takes seconds), or run gpuvet check";
        return sw;
    }
    CheckResult r = read_software(python, inv, fs, &stop_flag());
    sw.verdict = to_string(r.verdict);
    sw.summary = r.summary;
    for (const auto& m : r.measurements)
        sw.rows.emplace_back(m.label, m.text    ? *m.text
                                      : m.value ? fixed_count(*m.value)
                                                : "— (" + m.absent_reason + ")");
    for (const auto& f : r.findings) sw.findings.push_back(std::string(to_string(f.verdict)) + ": " + f.text);
    return sw;
}

int run_inventory(const GlobalOptions& g, const std::optional<std::string>& python, bool software) {
    Envelope env = new_envelope(g);
    const std::filesystem::path root = host_root();
    Inventory inv = collect_inventory(InventoryOptions{root});
    MachineInfo host = read_machine_info(HostFs(root));
    host.driver = driver_info_of(inv);
    InventoryFacts facts = inventory_facts_of(inv);
    facts.software = software_facts(inv, python, software || python.has_value(), HostFs(root));
    const FabricFacts fabric = collect_fabric(root, {});
    const FabricInventory fabric_section = fabric_inventory_of(fabric, judge_fabric(fabric));

    close_envelope(env);
    std::string json_text = render_document(env, inventory_to_json(facts, host, fabric_section));

    if (g.report_dir) {
        std::filesystem::path dir = report_folder(*g.report_dir);
        write_file_atomically(dir / "gpuvet-inventory.json", json_text);
        write_file_atomically(dir / "gpuvet-inventory.txt",
                              terminal_safe(render_inventory(facts, host, Style{false, 100}, fabric_section)));
    }
    if (g.json) std::cout << json_text;
    else std::cout << terminal_safe(render_inventory(facts, host, detect_style(g.no_color), fabric_section));
    std::cout.flush();
    // No driver is a fact about the box, not a failure; a driver that stopped answering left the
    // inventory incomplete.
    return any_driver_wedged() ? exit_code::could_not_run : exit_code::ok;
}

}  // namespace

void add_inventory_command(Cli cli) {
    auto* sub =
        cli.app.add_subcommand("inventory", "What the driver and the OS report about this box (no measurements)");
    auto python = std::make_shared<std::optional<std::string>>();
    auto software = std::make_shared<bool>(false);
    sub->add_flag("--software", *software,
                  "also list the framework stack (PyTorch, CUDA it was built for, cuDNN, NCCL) and judge it "
                  "against the driver: imports the framework, which takes seconds");
    sub->add_option("--python", *python,
                    "the Python whose framework stack to list (implies --software; default: $VIRTUAL_ENV, "
                    "$CONDA_PREFIX, then PATH)");
    add_output_flags(*sub, cli.global, {.specs = false});
    sub->footer(
        "Examples:\n"
        "  gpuvet inventory                 every GPU's identity, health counters, links and limits\n"
        "  gpuvet inventory --json          the same as a JSON document (docs/report-schema.md)\n"
        "  gpuvet inventory --software      also the framework stack and whether the driver can run it\n"
        "  gpuvet inventory --report out/   also write out/gpuvet-inventory.{json,txt}\n"
        "Exit codes: 0 listed (also when no driver is found), 2 bad input, 3 could not run.");
    on_chosen(cli, *sub, "inventory",
              [python, software](const GlobalOptions& g) { return run_inventory(g, *python, *software); });
}

}  // namespace gpuvet
