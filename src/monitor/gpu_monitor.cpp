#include "monitor/gpu_monitor.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace gpuvet {

namespace {

std::vector<int> all_gpus(const DeviceBackend& backend) {
    Fact<int> n = backend.device_count();
    if (!n)
        throw runtime_error("the GPUs could not be counted: " + n.absent_reason,
                            "check the GPU driver with nvidia-smi or amd-smi");
    std::vector<int> v(static_cast<std::size_t>(*n));
    for (int i = 0; i < *n; ++i) v[static_cast<std::size_t>(i)] = i;
    return v;
}

// bytes/s between two readings of a cumulative counter; absent when either is missing or the
// counter went backwards (a driver reset).
Fact<double> rate(const Fact<std::uint64_t>& before, const Fact<std::uint64_t>& now, double dt_s) {
    if (!now) return Fact<double>::absent(now.absent_reason);
    if (!before) return Fact<double>::absent("needs two samples");
    if (*now < *before || dt_s <= 0) return Fact<double>::absent("the counter was reset between two samples");
    return static_cast<double>(*now - *before) / dt_s;
}

}  // namespace

GpuMonitor::GpuMonitor(const DeviceBackend& backend, std::vector<int> gpus, unsigned readings)
    : readings_(readings), t0_(std::chrono::steady_clock::now()) {
    if (!backend.usable())
        throw runtime_error("no GPU can be read: " + backend.absent_reason(),
                            "install or load the GPU driver (nvidia-smi or amd-smi must work)");
    std::vector<int> all = all_gpus(backend);
    // An empty watch would print a header and nothing else, and look like a healthy idle box.
    if (all.empty())
        throw runtime_error("the NVIDIA driver is loaded but lists no GPU",
                            "check 'nvidia-smi -L'; in a container, pass the GPUs in (docker --gpus all, "
                            "NVIDIA_VISIBLE_DEVICES) and check that CUDA_VISIBLE_DEVICES is not empty");
    if (gpus.empty()) gpus = all;
    for (int i : gpus) {
        if (std::find(all.begin(), all.end(), i) == all.end())
            throw usage_error(
                "GPU " + std::to_string(i) + " does not exist: this machine has " + std::to_string(all.size()) +
                    " GPU(s)",
                "choose GPUs from 0 to " + std::to_string(all.empty() ? 0 : all.size() - 1) + " with --gpus");
        Open o;
        o.device = backend.open(i);
        MonitoredGpu g;
        g.index = i;
        g.unopened_reason = o.device->unopened_reason();
        g.facts = o.device->describe();
        gpus_.push_back(std::move(g));
        open_.push_back(std::move(o));
    }
}

void GpuMonitor::read(Open& o, GpuReading& r) {
    unsigned bits = readings_;
    const auto now = std::chrono::steady_clock::now();
    const bool pcie_due = !o.pcie_at || now - *o.pcie_at >= kPcieThroughputPeriod;
    if (!pcie_due) bits &= ~kReadPcieThroughput;
    r.sample = o.device->sample(bits);
    r.lost = o.device->lost();
    r.no_answer = o.device->no_answer();
    if (readings_ & kReadPcieThroughput) {
        if (pcie_due) {
            o.pcie_rx = r.sample.pcie_rx_bytes_per_s;
            o.pcie_tx = r.sample.pcie_tx_bytes_per_s;
            o.pcie_at = now;
        } else if (!r.lost) {
            r.sample.pcie_rx_bytes_per_s = o.pcie_rx;
            r.sample.pcie_tx_bytes_per_s = o.pcie_tx;
        }
    }
    if (!(readings_ & kReadNvLinkThroughput)) return;
    double dt_s = std::chrono::duration<double>(r.sample.taken_at - o.last_at).count();
    r.nvlink_rx_bytes_per_s = rate(o.last_rx, r.sample.nvlink_rx_bytes_total, dt_s);
    r.nvlink_tx_bytes_per_s = rate(o.last_tx, r.sample.nvlink_tx_bytes_total, dt_s);
    o.last_rx = r.sample.nvlink_rx_bytes_total;
    o.last_tx = r.sample.nvlink_tx_bytes_total;
    o.last_at = r.sample.taken_at;
}

MonitorTick GpuMonitor::sample() {
    MonitorTick t;
    t.wall_time = std::chrono::system_clock::now();
    t.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    t.gpus.resize(open_.size());
    for (std::size_t k = 0; k < open_.size(); ++k) {
        t.gpus[k].index = gpus_[k].index;
        read(open_[k], t.gpus[k]);
    }
    return t;
}

std::vector<std::string> GpuMonitor::errors(int index) const {
    for (std::size_t k = 0; k < gpus_.size(); ++k)
        if (gpus_[k].index == index) return open_[k].device->errors();
    return {};
}

}  // namespace gpuvet
