#include "monitor/export_server.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace gpuvet {

struct ExportServer::Impl {
    Impl(const ExportSampler& s, std::chrono::milliseconds i) : sampler(s), interval(i) {}
    const ExportSampler& sampler;
    std::chrono::milliseconds interval;
    httplib::Server http;
    std::atomic<bool> listen_returned{false};
};

namespace {

constexpr const char* kIndex =
    "<!doctype html><html><head><title>gpuvet export</title></head><body>"
    "<h1>gpuvet export</h1><p>Prometheus metrics of this machine's GPUs, with dcgm-exporter's names.</p>"
    "<ul><li><a href=\"/metrics\">/metrics</a> the exposition</li>"
    "<li><a href=\"/healthz\">/healthz</a> ok while the sampler runs and its last sample is fresh</li></ul>"
    "</body></html>\n";

std::string bind_problem(int err, const ListenAddress& a) {
    const std::string where = a.host + ":" + std::to_string(a.port);
    if (err == EADDRINUSE)
        return "port " + std::to_string(a.port) + " on " + a.host +
               " is already in use (another exporter, such as "
               "dcgm-exporter, or a second gpuvet export?)";
    if (err == EACCES) return "no permission to listen on " + where + " (ports below 1024 need root)";
    if (err == EADDRNOTAVAIL) return a.host + " is not an address of this machine";
    if (err != 0) return "cannot listen on " + where + ": " + std::strerror(err);
    return "cannot listen on " + where + " (the address does not resolve or cannot be bound)";
}

}  // namespace

HealthAnswer health_answer(const SamplerStatus& st, const ExportView& v, std::chrono::steady_clock::time_point now,
                           std::chrono::milliseconds interval) {
    switch (st.health) {
        case SamplerHealth::Failed: return {503, "failed: " + st.message + "\n"};
        case SamplerHealth::Ended: return {503, "stopped: the sampler has ended\n"};
        case SamplerHealth::Starting: return {503, "starting: the first sample of the GPUs has not completed yet\n"};
        case SamplerHealth::Running: break;
    }
    if (now - v.tick_done > stale_after(interval))
        return {503, fmt::format("stale: the last sample ended {:.1f} s ago, more than the bound of {:.1f} s; the "
                                 "driver is not answering in time\n",
                                 std::chrono::duration<double>(now - v.tick_done).count(),
                                 stale_after(interval).count() / 1000.0)};
    return {200, "ok\n"};
}

ExportServer::ExportServer(const ExportSampler& sampler, std::chrono::milliseconds interval)
    : impl_(std::make_unique<Impl>(sampler, interval)) {
    Impl* im = impl_.get();
    im->http.Get("/metrics", [im](const httplib::Request&, httplib::Response& res) {
        std::string body = render_metrics(im->sampler.view(), std::chrono::steady_clock::now(), im->interval);
        res.set_content(std::move(body), "text/plain; version=0.0.4; charset=utf-8");
    });
    im->http.Get("/healthz", [im](const httplib::Request&, httplib::Response& res) {
        HealthAnswer a =
            health_answer(im->sampler.status(), im->sampler.view(), std::chrono::steady_clock::now(), im->interval);
        res.status = a.status;
        res.set_content(a.body, "text/plain; charset=utf-8");
    });
    im->http.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kIndex, "text/html"); });
}

ExportServer::~ExportServer() { stop(); }

void ExportServer::bind(const ListenAddress& a) {
    errno = 0;
    if (!impl_->http.bind_to_port(a.host, a.port)) {
        int err = errno;
        std::string host = is_loopback(a.host) ? a.host : std::string("127.0.0.1");
        if (host.find(':') != std::string::npos) host = "[" + host + "]";
        throw usage_error(bind_problem(err, a), "choose a free port with --listen " + host +
                                                    ":PORT, or stop the program that holds it (ss -ltnp shows it)");
    }
}

void ExportServer::start() {
    Impl* im = impl_.get();
    thread_ = std::thread([im] {
        im->http.listen_after_bind();
        im->listen_returned.store(true);
    });
    // httplib's stop() does nothing before its loop runs: wait for it, so an early Ctrl-C is not lost.
    while (!im->http.is_running() && !im->listen_returned.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ExportServer::stop() {
    impl_->http.stop();
    if (thread_.joinable()) thread_.join();
}

}  // namespace gpuvet
