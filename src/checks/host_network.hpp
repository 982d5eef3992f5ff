// host.network: TCP throughput to an iperf3 server, both directions (iperf3 and iperf3 -R).
#pragma once
#include "core/check.hpp"
#include "host/iperf_run.hpp"

namespace gpuvet {

// What `--net-server`, `--seconds` and `--streams` asked for.
struct NetworkSettings {
    std::optional<std::string> server;  // HOST[:PORT]; absent: the check SKIPs with how to give one
    double seconds = 3;                 // per direction
    int streams = 1;                    // parallel TCP streams, as iperf3 -P
};

class HostNetworkCheck final : public Check {
public:
    explicit HostNetworkCheck(NetworkSettings s = {}) : settings_(std::move(s)) {}
    std::string_view key() const override { return "host.network"; }
    std::string_view title() const override { return "Host network (iperf3)"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;

private:
    NetworkSettings settings_;
};

// Folds the two directions into a result (testable without a network).
CheckResult network_result(const HostPort& server, int streams, int seconds, const IperfOutcome& upload,
                           const IperfOutcome& download);

}  // namespace gpuvet
