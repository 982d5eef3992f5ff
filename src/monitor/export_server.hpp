// export's HTTP side (cpp-httplib): /metrics renders the sampler's last view, /healthz says
// whether the sampler is running and fresh, / is a short index. The handlers only copy the view
// under the sampler's lock and render it: no driver call ever happens on a request.
#pragma once
#include <chrono>
#include <memory>
#include <thread>

#include "monitor/export_sampler.hpp"
#include "monitor/listen_address.hpp"

namespace gpuvet {

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
    // (port in use, no permission, an address this machine does not have).
    void bind(const ListenAddress& a);
    // Serves on a thread of its own until stop().
    void start();
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::thread thread_;
};

}  // namespace gpuvet
