#include "cli/check_run.hpp"

#include <cstdlib>

#include "cli/common.hpp"
#include "host/identity.hpp"
#include "report/progress.hpp"

namespace gpuvet {

std::unique_ptr<CheckRun> start_check_run(const GlobalOptions& g, SpecDb specs, Tier tier, const std::string& gpus) {
    auto run = std::make_unique<CheckRun>();
    run->specs = std::move(specs);
    run->report = new_report(g);
    CheckContext& ctx = run->ctx;
    if (const char* root = std::getenv("GPUVET_ROOT"); root && *root) ctx.options.root = root;
    ctx.options.tier = tier;
    if (!gpus.empty()) ctx.options.gpus = parse_gpu_list(gpus);
    ctx.specs = &run->specs;
    ctx.report = &run->report;
    ctx.stop = &stop_flag();
    run->progress = make_progress(g.json);
    ctx.progress = run->progress.get();

    run->report.machine = read_machine_info(HostFs(ctx.options.root));
    // The inventory supplies the driver facts and the GPU list; checks read it through ctx.
    run->inventory = collect_inventory(InventoryOptions{ctx.options.root});
    run->report.machine.driver = driver_info_of(run->inventory);
    run->report.gpus = gpu_summaries_of(run->inventory);
    ctx.inventory = &run->inventory;
    check_gpu_indexes(ctx.options.gpus, run->inventory);
    return run;
}

}  // namespace gpuvet
