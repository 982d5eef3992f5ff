#include "cli/check_run.hpp"

#include <cstdlib>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/slurm_env.hpp"
#include "gpu/device/backend_choice.hpp"
#include "gpu/inventory.hpp"
#include "host/identity.hpp"
#include "report/progress.hpp"

namespace gpuvet {

std::filesystem::path host_root() {
    if (const char* root = std::getenv("GPUVET_ROOT"); root && *root) return root;
    return "/";
}

std::unique_ptr<CheckRun> start_check_run(const GlobalOptions& g, SpecDb specs, Tier tier, const std::string& gpus,
                                          GpuScope scope) {
    auto run = std::make_unique<CheckRun>();
    run->specs = std::move(specs);
    run->report = new_report(g);
    CheckContext& ctx = run->ctx;
    ctx.options.root = host_root();
    ctx.options.tier = tier;
    if (!gpus.empty()) ctx.options.gpus = parse_gpu_list(gpus);
    ctx.specs = &run->specs;
    ctx.report = &run->report;
    ctx.stop = &stop_flag();
    run->progress = make_progress(g.json);
    ctx.progress = run->progress.get();

    MachineInfo machine = read_machine_info(HostFs(ctx.options.root));
    if (scope == GpuScope::HostOnly) {
        run->facts = std::make_unique<RunFacts>(machine);
        run->report.machine = machine;
    } else {
        // A gres misconfiguration is the cluster's fault, not the GPUs': it ends the run before
        // any check measures GPUs the task was not given.
        if (auto slurm = slurm_context())
            if (auto problem = slurm_gpu_problem(*slurm))
                throw runtime_error(*problem,
                                    "make gres.conf's File= lines name the GPUs' character devices (/dev/nvidia0 ...) "
                                    "and look for 'not a valid character or block device' in the slurmd log");
        Inventory inventory = collect_inventory(InventoryOptions{ctx.options.root});
        check_gpu_indexes(ctx.options.gpus, inventory);
        machine.driver = driver_info_of(inventory);
        // The backend choice (NVIDIA, AMD, both) the inventory was read through, made once for the run.
        run->facts = std::make_unique<RunFacts>(std::move(machine), std::move(inventory), &run->specs, ctx.options.gpus,
                                                &GpuBackends::shared().devices());
        // The report's header is a copy of the facts, for the printers.
        run->report.machine = run->facts->machine();
        run->report.gpus = run->facts->gpu_summaries();
    }
    ctx.facts = run->facts.get();
    return run;
}

}  // namespace gpuvet
