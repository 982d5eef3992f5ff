// gpuvet inventory: everything the driver and the OS say about this box, no measurements.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/common.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "gpu/inventory.hpp"
#include "cli/check_run.hpp"
#include "host/identity.hpp"
#include "report/inventory_view.hpp"

namespace gpuvet {

namespace {

int run_inventory(const GlobalOptions& g) {
    Envelope env = new_envelope(g);
    const std::filesystem::path root = host_root();
    Inventory inv = collect_inventory(InventoryOptions{root});
    MachineInfo host = read_machine_info(HostFs(root));
    host.driver = driver_info_of(inv);
    const InventoryFacts facts = inventory_facts_of(inv);

    close_envelope(env);
    std::string json_text = render_document(env, inventory_to_json(facts, host));

    if (g.report_dir) {
        std::filesystem::path dir = report_folder(*g.report_dir);
        write_file_atomically(dir / "gpuvet-inventory.json", json_text);
        write_file_atomically(dir / "gpuvet-inventory.txt", render_inventory(facts, host, Style{false, 100}));
    }
    if (g.json) std::cout << json_text;
    else std::cout << render_inventory(facts, host, detect_style(g.no_color));
    std::cout.flush();
    return exit_code::ok;  // no driver is a fact about the box, not a failure
}

}  // namespace

void add_inventory_command(Cli cli) {
    auto* sub =
        cli.app.add_subcommand("inventory", "What the driver and the OS report about this box (no measurements)");
    add_output_flags(*sub, cli.global, true, false);
    sub->footer(
        "Examples:\n"
        "  gpuvet inventory                 every GPU's identity, health counters, links and limits\n"
        "  gpuvet inventory --json          the same as a JSON document (docs/report-schema.md)\n"
        "  gpuvet inventory --report out/   also write out/gpuvet-inventory.{json,txt}\n"
        "Exit codes: 0 listed (also when no driver is found), 2 bad input, 3 could not run.");
    on_chosen(cli, *sub, "inventory", run_inventory);
}

}  // namespace gpuvet
