// gpuvet export: a Prometheus endpoint with dcgm-exporter's metric names plus gpuvet's own
// (the last check's verdicts and figures against the spec). Composition only: the sampler, the
// page and the server live in src/monitor/.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cli/common.hpp"
#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "core/stop_on_hangup.hpp"
#include "gpu/device/backend_choice.hpp"
#include "monitor/export_sampler.hpp"
#include "monitor/export_server.hpp"
#include "monitor/listen_address.hpp"

namespace gpuvet {

namespace {

struct ExportArgs {
    std::string listen = "127.0.0.1:9400";  // dcgm-exporter's port, but this machine only
    double interval_s = 1;
    std::string gpus;
    std::string check_report;
};

// NVML refreshes most fields about once a second; ten samples a second is as fast as it is worth.
constexpr NumberRule kIntervalRule{
    .min = 0.1, .max = 3600, .unit = NumberUnit::Seconds, .what = "an interval", .example = "1"};
// How long an orderly stop waits for a sampler inside a driver call before leaving it behind.
constexpr auto kStopGrace = std::chrono::seconds(2);

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return {};
    return buf;
}

std::string url_host(const std::string& h) { return h.find(':') != std::string::npos ? "[" + h + "]" : h; }

int run_export(const ExportArgs& a) {
    const ListenAddress addr = parse_listen_address(a.listen);
    const std::vector<int> gpus = a.gpus.empty() ? std::vector<int>{} : parse_gpu_list(a.gpus);
    std::unique_ptr<CheckReportWatch> report;
    if (!a.check_report.empty()) {
        report = std::make_unique<CheckReportWatch>(a.check_report);
        report->load();  // a wrong file is a usage problem now, not a silent gap later
    }
    const auto interval = std::chrono::milliseconds(static_cast<long long>(a.interval_s * 1000 + 0.5));

    const DeviceBackend& backend = GpuBackends::shared().devices();
    auto monitor = std::make_unique<GpuMonitor>(backend, gpus, kExportReadings);
    const std::size_t count = monitor->gpus().size();
    ExportSampler sampler(backend, std::move(monitor), interval, host_name(), std::move(report));
    ExportServer server(sampler, interval);
    server.bind(addr);
    if (!is_loopback(addr.host))
        std::cerr << "gpuvet export: warning: listening on " << addr.host
                  << ", which other machines can reach: the metrics name this host's GPUs and serial-like ids; "
                     "bind 127.0.0.1 (the default) and let a local Prometheus or a tunnel fetch them, or firewall "
                     "the port\n";
    set_first_stop_message("\ngpuvet export: stopping (again to exit at once)\n");
    also_stop_on_hangup();
    sampler.start();
    server.start();
    std::cerr << "gpuvet export: " << count << " GPU(s), sampled every " << a.interval_s << " s, on http://"
              << url_host(addr.host) << ":" << addr.port << "/metrics (Ctrl-C to stop)\n";

    SamplerStatus st;
    while (!stop_flag().load()) {
        st = sampler.status();
        if (st.health == SamplerHealth::Failed) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    server.stop();
    const bool stuck = !sampler.stop(kStopGrace);
    if (stuck)
        std::cerr << "gpuvet export: the sampler is still inside a driver call; exiting without waiting for it\n";
    if (st.health == SamplerHealth::Failed)
        throw runtime_error("the GPU sampler stopped: " + st.message, "check the NVIDIA driver with nvidia-smi");
    std::cerr << "gpuvet export: stopped\n";
    if (stuck) {
        // The normal exit would shut NVML down (a static destructor) under the thread still inside
        // it, and wait for a call that may never return: leave at once instead.
        std::cout.flush();
        std::cerr.flush();
        std::_Exit(exit_code::ok);
    }
    return exit_code::ok;
}

}  // namespace

void add_export_command(Cli cli) {
    auto* sub = cli.app.add_subcommand(
        "export", "Prometheus metrics of the GPUs (dcgm-exporter's names) and of the last check, on 127.0.0.1:9400");
    auto args = std::make_shared<ExportArgs>();
    sub->add_option("--listen", args->listen,
                    "HOST:PORT to serve on (default 127.0.0.1:9400; [::1]:PORT for IPv6, :PORT for every interface)");
    add_number_option(*sub, "--interval", args->interval_s, kIntervalRule,
                      "seconds between samples: 0.5, 2s, 1m (default 1)");
    sub->add_option("--gpus", args->gpus, "GPU indexes, comma-separated (default: all)");
    sub->add_option("--check-report", args->check_report,
                    "a `gpuvet check --json` report: its verdicts and figures become series, re-read when it changes");
    sub->footer(
        "Examples:\n"
        "  gpuvet export                                 serve http://127.0.0.1:9400/metrics\n"
        "  gpuvet export --listen 127.0.0.1:9500 --interval 5\n"
        "  gpuvet check --json > /var/lib/gpuvet/check.json; gpuvet export --check-report /var/lib/gpuvet/check.json\n"
        "Paths: /metrics (Prometheus text format), /healthz (200 \"ok\" while the sampler runs and its last sample\n"
        "is fresh and a GPU is not lost; 503 with the reason otherwise), / (an index). GET and HEAD only.\n"
        "A client gets 10 s to send its request's header and 5 s idle between requests; slow or idle\n"
        "clients never hold up others (up to 512 connections; the oldest unfinished one makes room).\n"
        "A scrape never waits for the driver: it renders the last sample. A sample older than 3 intervals + 5 s\n"
        "is stale: its GPU series are dropped and gpuvet_sample_stale is 1. A lost GPU drops its series.\n"
        "Another address than loopback is allowed, with a warning on stderr. Ctrl-C, SIGTERM or SIGHUP stops\n"
        "it. The port is never shared: a second exporter on it is exit 2.\n"
        "Exit codes: 0 stopped by Ctrl-C/SIGTERM/SIGHUP, 2 bad option, --check-report file (over 4 MiB, a check\n"
        "listed twice, an impossible GPU index), a port in use or not\n"
        "allowed, 3 no NVIDIA driver or NVML, or the sampler failed. Metric list: docs/export.md.");
    on_chosen(cli, *sub, "export", [args](const GlobalOptions&) { return run_export(*args); });
}

}  // namespace gpuvet
