// export's HTTP side: /metrics renders the sampler's last view, /healthz says whether the sampler is
// running and fresh, / is a short index. The handlers only copy the view under the sampler's lock and
// render it: no driver call ever happens on a request.
//
// One thread serves every connection through poll(), so a slow or idle client holds a slot in a
// table, never a worker: a request's header must arrive whole within kHeaderDeadline, an idle
// keep-alive connection closes after kIdleTimeout, a reply that is not taken is dropped after
// kWriteTimeout, and past kMaxConnections the oldest unfinished connection makes room for a new one.
// Pipelined requests are answered in order. stop() returns at once, whatever the clients do.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "monitor/export_sampler.hpp"
#include "monitor/http_request.hpp"
#include "monitor/listen_address.hpp"

namespace gpuvet {

// gpuvet's own bounds (not a standard's): a scrape's request is a few hundred bytes sent at once,
// so ten seconds for its header is generous to any real client and short for one that trickles.
inline constexpr auto kHeaderDeadline = std::chrono::seconds(10);
inline constexpr auto kIdleTimeout = std::chrono::seconds(5);
inline constexpr auto kWriteTimeout = std::chrono::seconds(10);
inline constexpr std::size_t kMaxConnections = 512;

// The /healthz answer for a sampler status and view (pure, for the tests).
struct HealthAnswer {
    int status = 200;
    std::string body;
};
HealthAnswer health_answer(const SamplerStatus& st, const ExportView& v, std::chrono::steady_clock::time_point now,
                           std::chrono::milliseconds interval);

class ExportServer {
public:
    ExportServer(const ExportSampler& sampler, std::chrono::milliseconds interval);
    ~ExportServer();
    ExportServer(const ExportServer&) = delete;
    ExportServer& operator=(const ExportServer&) = delete;

    // Binds the socket; a usage error naming the address, the port and the fix when it cannot
    // (port in use, also by another gpuvet export: the port is never shared; no permission; an
    // address this machine does not have).
    void bind(const ListenAddress& a);
    // Serves on a thread of its own until stop().
    void start();
    // Closes every connection and the socket and joins the thread: bounded by one poll wake-up.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::thread thread_;
};

}  // namespace gpuvet
