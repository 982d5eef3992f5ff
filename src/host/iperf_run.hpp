// iperf3-compatible client and server through libiperf. Each test runs in a child process:
// libiperf prints its JSON to stdout and keeps global state, so the child's stdout is a pipe the
// parent reads, and the parent can end a test cleanly on Ctrl-C by ending the child.
#pragma once
#include <atomic>
#include <optional>
#include <string>

namespace gpuvet {

inline constexpr int kIperfDefaultPort = 5201;

struct HostPort {
    std::string host;
    int port = kIperfDefaultPort;
};
// "host", "host:5201", "[::1]:5201". Throws a usage error when malformed.
HostPort parse_host_port(const std::string& s);
// parse_host_port, then a name lookup, before any work: an unknown host is a usage error naming
// `flag` ("--net-server"), not a measurement that fails later with the resolver's errno.
HostPort resolve_server(const std::string& s, const std::string& flag);

struct IperfClientOptions {
    HostPort server;
    int seconds = 3;       // libiperf takes whole seconds
    int streams = 1;       // parallel TCP streams, as iperf3 -P
    bool reverse = false;  // server sends, client receives (iperf3 -R)
    int connect_timeout_ms = 3000;
};

struct IperfOutcome {
    std::optional<double> received_gbitps;  // what arrived at the receiver, Gbit/s (decimal)
    std::optional<double> sent_gbitps;
    std::optional<double> retransmits;  // TCP retransmits of the sender
    std::string error;                  // set when the test did not complete
    bool stopped = false;               // a stop request ended it (error says so)
    bool timed_out = false;             // it did not finish in its time limit (error says so)
    std::string json;                   // libiperf's JSON document
};

// Reads throughput and retransmits from an iperf3 JSON document (as `iperf3 -J` writes).
IperfOutcome parse_iperf_json(const std::string& json);

IperfOutcome iperf_client(const IperfClientOptions& o, const std::atomic<bool>* stop);

// Serves one test on `port` (bind address optional), waiting until a client comes or `stop`.
IperfOutcome iperf_serve_one(int port, const std::string& bind, const std::atomic<bool>* stop);

}  // namespace gpuvet
