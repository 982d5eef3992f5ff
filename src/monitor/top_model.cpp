#include "monitor/top_model.hpp"

#include <algorithm>

#include "specs/spec_db.hpp"

namespace gpuvet {

const GpuSpec* spec_for(const DeviceFacts& f, const SpecDb& db) {
    std::vector<const GpuSpec*> by_id =
        f.pci_device_id ? db.by_pci_device_id(*f.pci_device_id & 0xffffu, f.pci_vendor_id.value_or(kPciVendorNvidia))
                        : std::vector<const GpuSpec*>{};
    std::vector<const GpuSpec*> by_name = f.name ? db.by_driver_name(*f.name) : std::vector<const GpuSpec*>{};
    for (const GpuSpec* a : by_id)
        if (std::find(by_name.begin(), by_name.end(), a) != by_name.end()) return a;
    if (!by_id.empty()) return by_id.front();
    return by_name.empty() ? nullptr : by_name.front();
}

TopModel::TopModel(const std::vector<MonitoredGpu>& gpus, const SpecDb& db, SystemFacts system, std::string host_name) {
    frame_.host_name = std::move(host_name);
    frame_.system = std::move(system);
    for (const auto& g : gpus) {
        TopGpu t;
        t.gpu = &g;
        t.spec = spec_for(g.facts, db);
        t.reading.index = g.index;
        frame_.gpus.push_back(std::move(t));
    }
}

namespace {

void push(std::deque<Fact<double>>& h, Fact<double> v) {
    h.push_back(std::move(v));
    while (h.size() > kTopHistoryLength) h.pop_front();
}

Fact<double> percent_of(const Fact<double>& part, const Fact<double>& whole) {
    if (!part) return Fact<double>::absent(part.absent_reason);
    if (!whole || *whole <= 0) return Fact<double>::absent(whole ? "no limit" : whole.absent_reason);
    return 100.0 * *part / *whole;
}

template <class T>
Fact<double> as_double(const Fact<T>& f) {
    return f ? Fact<double>(static_cast<double>(*f)) : Fact<double>::absent(f.absent_reason);
}

}  // namespace

void TopModel::update(const MonitorTick& tick, HostLoad host, std::vector<ProcessRow> processes) {
    frame_.t_s = tick.t_s;
    frame_.wall_time = tick.wall_time;
    frame_.host = std::move(host);
    frame_.processes = std::move(processes);
    frame_.processes_absent_reason.clear();
    for (std::size_t k = 0; k < frame_.gpus.size() && k < tick.gpus.size(); ++k) {
        TopGpu& t = frame_.gpus[k];
        t.reading = tick.gpus[k];
        const DeviceSample& s = t.reading.sample;
        t.hints = gpu_hints(t.gpu->facts, s, t.spec);
        push(t.utilization_percent, as_double(s.utilization_gpu_percent));
        push(t.memory_used_percent,
             percent_of(as_double(s.memory_used_bytes), as_double(t.gpu->facts.memory_total_bytes)));
        push(t.power_percent_of_limit, percent_of(s.power_draw_w, s.power_limit_w));
        if (!s.processes_absent_reason.empty() && !t.reading.lost && frame_.processes_absent_reason.empty())
            frame_.processes_absent_reason =
                std::string("GPU ") + std::to_string(t.gpu->index) + ": " + s.processes_absent_reason;
    }
}

}  // namespace gpuvet
