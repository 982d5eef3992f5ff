// One trial run's sampling: the GPU monitor (when a GPU is visible) and the host sampler read
// once per tick into the timeline (monitor/run_assembly builds the result from it).
#pragma once
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "monitor/gpu_monitor.hpp"
#include "monitor/run_host.hpp"
#include "core/run_result.hpp"
#include "core/run_timeline.hpp"

namespace gpuvet {

struct GpuSpec;

// What describe() said about a GPU, reduced to what the rules read; `spec` is the GPU's row of the
// spec database when known (the NVLink capacity D2 judges against).
RunGpuFacts run_gpu_facts(const MonitoredGpu& g, const GpuSpec* spec = nullptr);
// One GPU's reading as a timeline point; absent facts noted once in `tl` under "gpu<i>.<key>".
GpuPoint run_gpu_point(const GpuReading& r, const std::set<int>& tree, RunTimeline& tl);

class RunSampler {
public:
    // backend: nullptr or unusable -> host-only (no_gpu_reason() says why).
    // Opens the GPUs (a --gpus index the machine lacks is a usage error) before the job starts.
    RunSampler(const DeviceBackend* backend, const std::vector<int>& gpus, int root,
               std::size_t capacity = RunTimeline::kDefaultCapacity);
    // Host-only, for the reason given (the driver did not answer in time).
    RunSampler(std::string no_gpu_reason, int root, std::size_t capacity = RunTimeline::kDefaultCapacity);
    void set_job(int pid) { host_.set_job(pid); }
    // Reads host and GPUs once; t_s: seconds since the job started.
    const RunPoint& tick(double t_s);
    const RunTimeline& timeline() const { return timeline_; }
    const std::vector<RunGpuFacts>& gpu_facts() const { return facts_; }
    const std::string& no_gpu_reason() const { return no_gpu_; }
    const RunHostSampler& host() const { return host_; }
    // GPUs that fell off the bus or are MIG-partitioned, once each, to say so while running.
    std::vector<std::string> take_news();

private:
    std::unique_ptr<GpuMonitor> monitor_;
    RunHostSampler host_;
    RunTimeline timeline_;
    std::vector<RunGpuFacts> facts_;
    std::string no_gpu_;
    std::set<int> gpu_pids_;
    std::set<int> lost_told_;
    std::vector<std::string> news_;
    RunPoint last_;
};

}  // namespace gpuvet
