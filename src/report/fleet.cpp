#include "report/fleet.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/strings.hpp"
#include "report/offer_figures.hpp"

namespace gpuvet {

namespace {

double median_of(std::vector<double> v) { return median(std::move(v)).value_or(0); }

bool is_outlier(double x, double med, double mad) {
    double dev = std::fabs(x - med);
    if (dev <= kOutlierMinDeviation * std::fabs(med)) return false;
    return mad == 0 || 0.6745 * dev / mad > kOutlierModifiedZ;
}

}  // namespace

Fleet analyse_fleet(const std::vector<OfferInput>& inputs) {
    if (inputs.size() < 3)
        throw input_error("--fleet: " + std::to_string(inputs.size()) + " report(s); the outlier rule needs at least 3",
                          "put the JSON reports of 3 or more nodes into the folder");
    Fleet f;
    f.gpu_model = gpu_model_of(inputs.front().report);
    for (auto& in : inputs) {
        std::string model = gpu_model_of(in.report);
        if (model != f.gpu_model)
            throw input_error(
                "--fleet: " + in.path + " has " + model + " GPUs, " + inputs.front().path + " has " + f.gpu_model,
                "a fleet compares nodes of one GPU model: put each model's reports in its own folder");
        FleetNode n{in.name, in.path, in.report.verdict, {}};
        for (auto& c : in.report.checks)
            if (c.verdict == Verdict::Fail || c.verdict == Verdict::Error)
                n.failed.push_back(c.key + (c.gpu ? " GPU " + std::to_string(*c.gpu) : "") + " " +
                                   to_string(c.verdict) + ": " + c.summary);
        f.nodes.push_back(std::move(n));
    }
    for (const MetricDef& def : offer_metrics()) {
        struct Point {
            std::size_t node;
            std::optional<int> gpu;
            double v;
        };
        std::vector<Point> pts;
        for (std::size_t i = 0; i < inputs.size(); ++i)
            for (auto& s : metric_samples(inputs[i].report, def)) pts.push_back({i, s.gpu, s.value});
        if (pts.size() < 3) continue;
        std::vector<double> vals;
        for (auto& p : pts) vals.push_back(p.v);
        double med = median_of(vals);
        std::vector<double> dev;
        for (double v : vals) dev.push_back(std::fabs(v - med));
        FleetMetric m{def.id,
                      def.label,
                      def.unit,
                      pts.size(),
                      med,
                      median_of(dev),
                      *std::min_element(vals.begin(), vals.end()),
                      *std::max_element(vals.begin(), vals.end())};
        for (auto& p : pts)
            if (is_outlier(p.v, m.median, m.mad))
                f.outliers.push_back(
                    {inputs[p.node].name, p.gpu, def.id, def.label, def.unit, p.v, m.median, p.v < m.median});
        f.metrics.push_back(m);
    }
    return f;
}

std::string nhc_line(const Fleet& f, const FleetNode& n) {
    std::vector<std::string> why;
    for (auto& x : n.failed) why.push_back(x);
    for (auto& o : f.outliers)
        if (o.node == n.name && o.low)
            why.push_back("low outlier: " + o.label + (o.gpu ? " GPU " + std::to_string(*o.gpu) : "") + " " +
                          format_number(o.value, 4) + " " + o.unit + " (fleet median " + format_number(o.median, 4) +
                          ")");
    if (why.empty() && (n.verdict == RunVerdict::Go || n.verdict == RunVerdict::GoWithWarnings))
        return n.name + " | Healthy";
    if (why.empty()) why.push_back(std::string("run verdict ") + to_string(n.verdict));
    std::string out = n.name + " | ERROR: ";
    for (std::size_t i = 0; i < why.size(); ++i) out += (i ? "; " : "") + why[i];
    return out;
}

}  // namespace gpuvet
