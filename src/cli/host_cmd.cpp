// gpuvet host [cpu|memory|storage|net|fabric]: the host checks on their own, and an iperf3 server.
#include <cstdlib>
#include <iostream>

#include "cli/common.hpp"
#include "cli/number_option.hpp"
#include "host/storage_bench.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/runner.hpp"
#include "core/strings.hpp"
#include "cli/check_run.hpp"
#include "cli/registry.hpp"
#include "host/identity.hpp"
#include "host/iperf_run.hpp"
#include "report/progress.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

struct HostArgs {
    std::string part;  // "", "cpu", "memory", "storage", "net"
    bool quick = false, full = false;
    std::string data_dir = ".";
    std::optional<std::uint64_t> storage_bytes;
    std::optional<std::string> server;
    bool serve = false, one_off = false;
    int port = kIperfDefaultPort;
    std::string bind;
    double seconds = 3;
    int streams = 1;
};

// The storage test writes a file of this size (capped by the free space): below 1 MiB the
// measurement is cache noise; 16 TiB is beyond any single data disk.
constexpr NumberRule kStorageBytesRule{.min = kMiB,
                                       .max = 16.0 * 1024 * kGiB,
                                       .whole = true,
                                       .unit = NumberUnit::Bytes,
                                       .what = "a size",
                                       .example = "1G"};
constexpr NumberRule kSecondsRule{.min = 1, .max = 600, .what = "a time", .suffix = "s", .example = "10"};
constexpr NumberRule kStreamsRule{.min = 1, .max = 128, .whole = true, .what = "a stream count", .example = "4"};
constexpr NumberRule kPortRule{.min = 1, .max = 65535, .whole = true, .what = "a TCP port", .example = "5201"};

int serve(const GlobalOptions& g, const HostArgs& a) {
    Report report = new_report(g);
    report.machine = read_machine_info(HostFs(host_root()));
    if (!g.json)
        std::cerr << "gpuvet: iperf3 server on port " << a.port << (a.bind.empty() ? "" : " (" + a.bind + ")")
                  << (a.one_off ? ", for one test" : ", until Ctrl-C") << "\n";
    CheckResult r;
    r.key = "host.network";
    r.title = "Host network (iperf3 server)";
    int served = 0;
    IperfOutcome last;
    for (;;) {
        IperfOutcome o = iperf_serve_one(a.port, a.bind, &stop_flag());
        if (o.stopped) break;
        if (!o.error.empty() && !o.received_gbitps) {
            // A listener that cannot start is fatal; a client that went away is not.
            if (o.error.find("listen") != std::string::npos || o.error.find("in use") != std::string::npos)
                throw runtime_error("cannot serve on port " + std::to_string(a.port) + ": " + o.error,
                                    "choose another --port, or stop the program using it");
            if (!g.json) std::cerr << "gpuvet: a test did not complete: " << o.error << "\n";
        } else {
            ++served;
            last = o;
            if (!g.json)
                std::cerr << "gpuvet: served a test: received " << format_number(o.received_gbitps.value_or(0))
                          << " Gbit/s\n";
        }
        if (a.one_off || stop_flag().load()) break;
    }
    r.measurements.push_back(Measurement::number("port", "Port", a.port, ""));
    r.measurements.push_back(Measurement::number("tests_served", "Tests served", served, "count"));
    if (served == 0) {
        r.verdict = Verdict::Skip;
        r.summary = "No client completed a test.";
    } else {
        r.verdict = Verdict::Pass;
        if (last.received_gbitps)
            r.measurements.push_back(
                Measurement::number("received_gbitps", "Received (last test)", *last.received_gbitps, "Gbit/s"));
        if (last.sent_gbitps)
            r.measurements.push_back(
                Measurement::number("sent_gbitps", "Sent (last test)", *last.sent_gbitps, "Gbit/s"));
        r.summary = "Served " + std::to_string(served) + " test(s).";
    }
    report.checks.push_back(r);
    // Ctrl-C is how a server is meant to end, so it does not make the run incomplete; a server that
    // served nothing measured nothing (COULD NOT RUN).
    return emit_report(report, g);
}

int run_host(const GlobalOptions& g, const HostArgs& a) {
    if (a.serve) {
        if (a.server) throw usage_error("--serve and --server exclude each other", "be a server or a client, not both");
        return serve(g, a);
    }
    if (a.part.empty() || a.part == "storage") require_data_dir(a.data_dir);
    if (a.part == "net" && !a.server)
        throw usage_error("gpuvet host net needs --server HOST[:PORT] or --serve",
                          "run `iperf3 -s` (or `gpuvet host net --serve`) on the peer, then --server PEER");
    if (a.server) resolve_server(*a.server, "--server");  // bad or unknown addresses: usage errors, before any work
    CheckSettings settings;
    settings.data_dir = a.data_dir;
    settings.storage_bytes = a.storage_bytes;
    settings.net_server = a.server;
    settings.net_seconds = a.seconds;
    settings.net_streams = a.streams;
    // GPUs are not inventoried here: host.identity and host.balance run within `gpuvet check`.
    const std::vector<std::string> keys =
        a.part.empty()
            ? std::vector<std::string>{"host.cpu", "host.memory", "host.storage", "host.network", "host.fabric"}
            : std::vector<std::string>{a.part == "net" ? "host.network" : "host." + a.part};
    auto run = start_check_run(g, SpecDb(), tier_from_flags(a.quick, a.full), "", GpuScope::HostOnly);
    CheckList checks = select_checks(keys, settings);
    run_checks(checks, run->ctx);
    return emit_report(run->report, g);
}

}  // namespace

void add_host_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("host", "Host checks: CPU, memory, storage, network, RDMA fabric");
    auto args = std::make_shared<HostArgs>();
    auto common = [&](CLI::App* s) {
        s->add_flag("--quick", args->quick, "shortest measurements");
        s->add_flag("--full", args->full, "longest measurements")->excludes("--quick");
        add_output_flags(*s, cli.global, {.specs = false});
    };
    auto storage_flags = [&](CLI::App* s) {
        s->add_option("--data-dir", args->data_dir, "folder on the data disk to measure (default: here)");
        add_number_option(*s, "--storage-bytes", args->storage_bytes, kStorageBytesRule,
                          "cap on bytes written, e.g. 512M, 1G (default 1G)");
    };
    auto net_flags = [&](CLI::App* s) {
        s->add_option("--server", args->server, "iperf3 server HOST[:PORT] to measure against");
        add_number_option(*s, "--seconds", args->seconds, kSecondsRule, "seconds per direction (default 3)");
        add_number_option(*s, "--streams", args->streams, kStreamsRule,
                          "parallel TCP streams (default 1, as iperf3 -P)");
    };
    common(sub);
    storage_flags(sub);
    net_flags(sub);
    sub->require_subcommand(0, 1);
    for (auto [name, help] : {std::pair{"cpu", "cores, limits, governor, steal time, per-core speed"},
                              std::pair{"memory", "size and STREAM-style bandwidth"},
                              std::pair{"storage", "sequential and random throughput of the data path"},
                              std::pair{"net", "iperf3 client (--server) or server (--serve)"},
                              std::pair{"fabric", "RDMA NICs and ports, GPU-NIC pairing, GPUDirect RDMA (sysfs)"}}) {
        auto* p = sub->add_subcommand(name, help);
        common(p);
        if (std::string(name) == "storage") storage_flags(p);
        if (std::string(name) == "net") {
            net_flags(p);
            p->add_flag("--serve", args->serve, "be an iperf3 server until Ctrl-C");
            add_number_option(*p, "--port", args->port, kPortRule, "port to serve on (default 5201)");
            p->add_option("--bind", args->bind, "address to listen on (default: all)");
            p->add_flag("--one-off", args->one_off, "serve one test, then exit");
        }
        p->callback([args, n = std::string(name)] { args->part = n; });
    }
    sub->footer(
        "Examples:\n"
        "  gpuvet host                               CPU, memory and storage of this host\n"
        "  gpuvet host storage --data-dir /data      throughput of the data disk\n"
        "  gpuvet host net --server 10.0.0.2         TCP both ways to an iperf3 server\n"
        "  gpuvet host net --serve                   be the server for another host\n"
        "  gpuvet host fabric                        RDMA ports, NIC placement, GPUDirect RDMA\n"
        "Units: GB/s decimal for memory and storage, Gbit/s for the network.");
    on_chosen(
        cli, *sub, "host", [args](const GlobalOptions& g) { return run_host(g, *args); }, true);
}

}  // namespace gpuvet
