// gpuvet fleet: vet every node of a Slurm cluster. `fleet check` runs gpuvet check on each node of an
// allocation as one job step (src/fleet/step.hpp), brings the node reports back over the step's
// output, judges the fleet (report/fleet.hpp) and, with --drain/--resume, keeps failing nodes out of
// jobs. `fleet allreduce` measures the all-reduce between the nodes (one rank per GPU).
// `fleet health-check` and `fleet prolog` are what slurm.conf's HealthCheckProgram and Prolog
// run on one node. `fleet agent` is the node side of a step, `fleet allreduce-rank` one rank.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/fleet_cmd.hpp"
#include "cli/fleet_run.hpp"
#include "core/error.hpp"
#include "fleet/step.hpp"
#include "gpu/burn.hpp"

namespace gpuvet {

namespace {

std::string self_path() {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "gpuvet";
    return std::string(buf, std::size_t(n));
}

void add_check_passthrough(CLI::App& sub, FleetCheckArgs& a) {
    sub.add_flag("--quick", a.quick, "check's shortest tier on every node");
    sub.add_flag("--full", a.full, "check's longest tier on every node")->excludes("--quick");
    sub.add_option("--only", a.only, "check keys or areas to run on every node, as for check --only");
    sub.add_option("--expect", a.expect, "what every node should be, as for check --expect");
    sub.add_option("--order", a.order, "order file, as for check --order (the path must exist on every node)");
    sub.add_option("--burn-duration", a.burn_duration, "gpu.burn duration on every node, as for check");
}

void add_allocation_options(CLI::App& sub, FleetCheckArgs& a) {
    sub.add_option("-N,--nodes", a.nodes, "ask Slurm for this many nodes (outside an allocation)");
    sub.add_option("-p,--partition", a.partition, "the partition to ask nodes of");
    sub.add_option("-w,--nodelist", a.nodelist, "these nodes, e.g. gpu[01-16]");
    sub.add_option("--reservation", a.reservation, "the reservation to run in");
    sub.add_option("-t,--time", a.time, "the allocation's time limit, as srun takes it (30:00)");
    sub.add_option("--gpus-per-node", a.gpus_per_node, "GPUs to give each node's check (default: what Slurm gives)");
    sub.add_option("--node-timeout", a.node_timeout,
                   "a node not done by then is an ERROR and the step is cancelled (default 30m)");
}

void add_allreduce_options(CLI::App& sub, FleetCheckArgs& a, const char* size_option) {
    sub.add_option(size_option, a.max_size, "the largest all-reduce message (default 8G; bounded by GPU memory)")
        ->type_name("BYTES");
    sub.add_flag("--allow-fallback", a.allow_fallback,
                 "do not ask NCCL for RDMA (NCCL_NET=IB): see whether it falls back to sockets by itself");
    sub.add_flag("--no-rdma-write", a.no_rdma_write,
                 "leave out the RDMA write per NIC between the nodes (the ports stay free for other jobs)");
    sub.add_option("--rendezvous-host", a.rendezvous_host,
                   "the address the ranks reach this host at (default: srun's own, SLURM_LAUNCH_NODE_IPADDR)");
}

void add_fleet_allreduce(CLI::App& fleet, Cli cli) {
    auto* sub = fleet.add_subcommand(
        "allreduce", "The all-reduce between the nodes: busbw against their RDMA NICs, a slow rail or node pinned");
    auto a = std::make_shared<FleetCheckArgs>();
    add_allocation_options(*sub, *a);
    add_allreduce_options(*sub, *a, "--max-size");
    sub->add_option("--out", a->out, "write fleet.json, fleet.md, fleet.html and ranks/<node>.json here")
        ->type_name("DIR");
    sub->add_flag("--json", cli.global.json, "the fleet as a JSON document on stdout");
    sub->add_option("--gpuvet", a->gpuvet, "gpuvet's path on the nodes (default: this binary's path)");
    sub->add_flag("--no-color", cli.global.no_color, "no colour (colour is used only on a terminal)");
    sub->footer(
        "One rank per GPU on every node (srun --ntasks-per-node=GPUs), NCCL bootstrapped over a rendezvous this\n"
        "process serves; all-reduce busbw from 8 MiB to --max-size, every result checked; then each rail (the k-th\n"
        "GPU of every node) and each node paired with the next, so a slow rail or node is named. NCCL is asked\n"
        "for RDMA (NCCL_NET=IB) where the nodes have RDMA NICs, and its log is read for the transport and GPUDirect.\n"
        "Then each GPU's NIC writes to the same rail of the next node (RDMA WRITE through libibverbs, from GPU\n"
        "memory with GPUDirect RDMA, else host memory), judged against the ports' data rate: a slow NIC is named.\n"
        "Examples:\n"
        "  salloc -N 4 --gpus-per-node 8 gpuvet fleet allreduce --out fabric/   inside an allocation\n"
        "  gpuvet fleet allreduce -N 2 -p gpu --gpus-per-node 8 --max-size 1G   asks Slurm for 2 nodes itself\n"
        "Exit codes: 0 the fabric passes, 1 it fails (a slow rail, node, pair or NIC, sockets, no GPUDirect RDMA,\n"
        "wrong sums), 2 bad usage, 3 it could not be measured (a node did not report, deadline, Ctrl-C).");
    on_chosen(cli, *sub, "fleet allreduce",
              [a](const GlobalOptions& g) { return run_fleet_allreduce(g, *a, self_path()); });

    auto* rk = fleet.add_subcommand("allreduce-rank", "One rank of fleet allreduce (started by srun)");
    rk->group("");  // not for users: fleet allreduce starts it
    auto r = std::make_shared<FleetRankArgs>();
    rk->add_option("--board-host", r->board_host, "the rendezvous board's address");
    rk->add_option("--board-port", r->board_port, "the rendezvous board's port")->required();
    rk->add_option("--token", r->token, "the job's rendezvous token")->required();
    rk->add_option("--max-size", r->max_size, "the largest message");
    rk->add_flag("--allow-fallback", r->allow_fallback, "leave NCCL_NET alone");
    rk->add_flag("--no-rdma-write", r->no_rdma_write, "no RDMA write per NIC");
    on_chosen(cli, *rk, "fleet allreduce-rank", [r](const GlobalOptions&) { return run_fleet_rank(*r); });
}

void add_fleet_check(CLI::App& fleet, Cli cli) {
    auto* sub =
        fleet.add_subcommand("check", "gpuvet check on every node of a Slurm allocation, then the fleet verdict");
    auto a = std::make_shared<FleetCheckArgs>();
    add_check_passthrough(*sub, *a);
    add_allocation_options(*sub, *a);
    sub->add_option("--out", a->out, "write <node>.json, fleet.json, fleet.md and fleet.html here (atomically)")
        ->type_name("DIR");
    sub->add_flag("--nhc", a->nhc, "print only the NHC-style lines: 'node | Healthy' or 'node | ERROR: gpuvet: ...'");
    sub->add_flag("--json", cli.global.json, "the fleet as a JSON document on stdout");
    sub->add_flag("--drain", a->drain, "drain NO-GO nodes (scontrol, reason 'gpuvet: ...'); without it: printed only");
    sub->add_flag("--resume", a->resume, "resume nodes gpuvet drained that pass now; without it: printed only");
    sub->add_option("--gpuvet", a->gpuvet, "gpuvet's path on the nodes (default: this binary's path)");
    sub->add_flag("--no-color", cli.global.no_color, "no colour (colour is used only on a terminal)");
    add_history_flags(*sub, a->history);
    sub->add_flag("--allreduce", a->allreduce,
                  "then the all-reduce between the nodes (as gpuvet fleet allreduce), in the fleet's verdict");
    add_allreduce_options(*sub, *a, "--allreduce-max-size");
    sub->footer(
        "Examples:\n"
        "  salloc -N 16 --gpus-per-node 8 gpuvet fleet check --quick --out fleet/   inside an allocation\n"
        "  gpuvet fleet check -N 4 -p gpu --gpus-per-node 8 --quick --nhc   asks Slurm for 4 nodes itself\n"
        "  gpuvet fleet check -w gpu[01-08] --only gpu. --drain --resume   drain failing nodes, resume repaired ones\n"
        "Exit codes: 0 every node GO, 1 a node NO-GO (a failed check or a low outlier), 2 bad usage, 3 a node did not "
        "report (deadline, Ctrl-C, no report).");
    on_chosen(cli, *sub, "fleet check", [a](const GlobalOptions& g) { return run_fleet_check(g, *a, self_path()); });
}

void add_fleet_node_modes(CLI::App& fleet, Cli cli) {
    auto hc =
        fleet.add_subcommand("health-check", "For slurm.conf's HealthCheckProgram: passive checks, drain this node");
    auto h = std::make_shared<NodeModeArgs>();
    hc->add_flag("--dry-run", h->dry_run, "print the scontrol command (drain or resume) instead of running it");
    hc->add_option("--node-timeout", h->timeout,
                   "the whole run, sinfo and scontrol included (default 50s; Slurm 22.05 kills it at 60 s)");
    hc->footer(
        "slurm.conf:\n  HealthCheckProgram=/usr/local/bin/gpuvet-healthcheck   (a script: exec gpuvet fleet "
        "health-check)\n"
        "  HealthCheckInterval=300\n"
        "It resumes only a node gpuvet drained for these passive checks, once they pass; a node drained for GEMM,\n"
        "burn or an outlier by fleet check stays drained until a fleet check that runs those passes it.\n"
        "Exit codes: 0 healthy, 1 a check failed (the node was drained with 'gpuvet: ...'), 3 the checks could not run "
        "(nothing drained).");
    on_chosen(cli, *hc, "fleet health-check",
              [h](const GlobalOptions& g) { return run_node_mode(g, *h, NodeMode::HealthCheck, self_path()); });
    auto pr =
        fleet.add_subcommand("prolog", "For slurm.conf's Prolog/Epilog: seconds of passive checks, no Slurm calls");
    auto p = std::make_shared<NodeModeArgs>();
    pr->add_option("--details", p->details, "write <node>.json (the report) into this folder")->type_name("DIR");
    pr->add_option("--node-timeout", p->timeout, "stop the checks after this long (default 40s)");
    pr->footer(
        "slurm.conf:\n  Prolog=/usr/local/bin/gpuvet-prolog   (a script: exec gpuvet fleet prolog --details "
        "/var/log/gpuvet)\n"
        "Exit codes: 0 healthy, or the checks could not run: a tool error (a bad option, an unwritable --details\n"
        "folder, a driver that does not answer) is logged to stderr and syslog and never drains a node;\n"
        "1 a check failed (Slurm drains the node, 'Prolog error', and requeues the job).");
    on_chosen(cli, *pr, "fleet prolog",
              [p](const GlobalOptions& g) { return run_node_mode(g, *p, NodeMode::Prolog, self_path()); });
}

void add_fleet_agent(CLI::App& fleet, Cli cli) {
    auto* ag = fleet.add_subcommand("agent", "The node side of a fleet step (started by srun)");
    ag->group("");  // not for users: fleet check starts it
    auto version = std::make_shared<std::string>();
    auto args = std::make_shared<std::vector<std::string>>();
    ag->add_option("--expect-version", *version, "refuse to run when this node's gpuvet is another version");
    ag->add_option("command", *args, "the gpuvet subcommand and its arguments")->required();
    on_chosen(cli, *ag, "fleet agent", [version, args](const GlobalOptions&) {
        return run_agent(self_path(), *args, GPUVET_VERSION, *version);
    });
}

}  // namespace

void add_fleet_command(Cli cli) {
    auto* fleet = cli.app.add_subcommand("fleet", "Vet every node of a Slurm cluster, keep bad nodes out of jobs");
    fleet->require_subcommand(1);
    add_fleet_check(*fleet, cli);
    add_fleet_allreduce(*fleet, cli);
    add_fleet_node_modes(*fleet, cli);
    add_fleet_agent(*fleet, cli);
}

}  // namespace gpuvet
