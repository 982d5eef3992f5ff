#include "monitor/export_sampler.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "core/error.hpp"
#include "monitor/gpu_monitor.hpp"
#include "monitor/sampling_loop.hpp"

namespace gpuvet {

struct ExportSampler::Shared {
    const DeviceBackend& backend;
    std::unique_ptr<GpuMonitor> monitor;
    std::chrono::milliseconds interval;
    std::unique_ptr<CheckReportWatch> report;

    std::atomic<bool> stop{false};
    mutable std::mutex m;
    std::condition_variable ended;
    bool done = false;
    ExportView view;
    SamplerStatus status;

    Shared(const DeviceBackend& b, std::unique_ptr<GpuMonitor> mon, std::chrono::milliseconds i,
           std::unique_ptr<CheckReportWatch> r)
        : backend(b), monitor(std::move(mon)), interval(i), report(std::move(r)) {}
};

namespace {

// At most this many events are taken per tick, so a storm of Xids cannot stall the sampler.
constexpr int kEventsPerTick = 64;

void publish_report(ExportSampler::Shared& s) {
    if (!s.report) return;
    bool changed = s.report->refresh();
    std::lock_guard<std::mutex> lock(s.m);
    if (changed || !s.view.report) {
        s.view.report =
            s.report->summary() ? std::make_shared<const CheckReportSummary>(*s.report->summary()) : nullptr;
        s.view.report_problem = s.report->problem();
    }
}

void run(ExportSampler::Shared& s) {
    GpuMonitor& monitor = *s.monitor;
    // The watch holds its own handles: GpuDevice objects are not shared between readers.
    std::vector<std::unique_ptr<GpuDevice>> watched;
    std::vector<const GpuDevice*> ptrs;
    for (const MonitoredGpu& g : monitor.gpus()) {
        watched.push_back(s.backend.open(g.index));
        ptrs.push_back(watched.back().get());
    }
    std::unique_ptr<EventWatch> watch = s.backend.watch_critical_errors(ptrs);
    {
        std::lock_guard<std::mutex> lock(s.m);
        s.view.xid_absent_reason = watch->absent_reason();
    }
    std::map<int, std::uint64_t> xids;
    run_sampling_loop({s.interval, std::nullopt}, s.stop, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        auto tick = std::make_shared<const MonitorTick>(monitor.sample());
        for (int k = 0; k < kEventsPerTick && watch->absent_reason().empty(); ++k) {
            std::optional<DeviceEvent> e = watch->next(std::chrono::milliseconds(0));
            if (!e) break;
            xids[e->gpu] = e->code;
        }
        const auto t1 = std::chrono::steady_clock::now();
        {
            std::lock_guard<std::mutex> lock(s.m);
            s.view.tick = std::move(tick);
            s.view.tick_done = t1;
            s.view.tick_duration_s = std::chrono::duration<double>(t1 - t0).count();
            ++s.view.ticks;
            s.view.last_xid = xids;
            s.status.health = SamplerHealth::Running;
        }
        publish_report(s);
        return !s.stop.load();
    });
}

void thread_main(const std::shared_ptr<ExportSampler::Shared>& sp) {
    ExportSampler::Shared& s = *sp;
    std::string failure;
    try {
        publish_report(s);
        run(s);
    } catch (const Error& e) {
        failure = std::string(e.what()) + (e.advice().empty() ? "" : " (" + e.advice() + ")");
    } catch (const std::exception& e) {
        failure = std::string("internal error: ") + e.what();
    }
    std::lock_guard<std::mutex> lock(s.m);
    s.status.health = failure.empty() ? SamplerHealth::Ended : SamplerHealth::Failed;
    s.status.message = failure;
    s.done = true;
    s.ended.notify_all();
}

}  // namespace

ExportSampler::ExportSampler(const DeviceBackend& backend, std::unique_ptr<GpuMonitor> monitor,
                             std::chrono::milliseconds interval, std::string hostname,
                             std::unique_ptr<CheckReportWatch> report)
    : s_(std::make_shared<Shared>(backend, std::move(monitor), interval, std::move(report))) {
    s_->view.hostname = std::move(hostname);
    SystemFacts sys = backend.system();
    s_->view.driver_version = sys.driver_version.value_or("");
    s_->view.gpus = std::make_shared<const std::vector<MonitoredGpu>>(s_->monitor->gpus());
}

ExportSampler::~ExportSampler() {
    if (thread_.joinable()) stop(std::chrono::milliseconds(0));
}

void ExportSampler::start() {
    thread_ = std::thread([sp = s_] { thread_main(sp); });
}

bool ExportSampler::stop(std::chrono::milliseconds grace) {
    s_->stop.store(true);
    if (!thread_.joinable()) return true;
    std::unique_lock<std::mutex> lock(s_->m);
    bool ended = s_->ended.wait_for(lock, grace, [this] { return s_->done; });
    lock.unlock();
    if (ended) thread_.join();
    else thread_.detach();  // stuck in a driver call: the shared state stays alive with it
    return ended;
}

ExportView ExportSampler::view() const {
    std::lock_guard<std::mutex> lock(s_->m);
    return s_->view;
}

SamplerStatus ExportSampler::status() const {
    std::lock_guard<std::mutex> lock(s_->m);
    return s_->status;
}

}  // namespace gpuvet
