#include "host/iperf_run.hpp"

#include <fcntl.h>
#include <iperf_api.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace gpuvet {

namespace {
// The iperf test runs in a child process; without one, nothing can be measured.
const char* const kNoChildAdvice = "the system is out of processes or file descriptors: check ulimit -u and -n";
}  // namespace

HostPort parse_host_port(const std::string& s) {
    HostPort hp;
    std::string port;
    if (!s.empty() && s.front() == '[') {
        auto close = s.find(']');
        if (close == std::string::npos) throw usage_error("bad server address '" + s + "'", "write [IPv6]:PORT");
        hp.host = s.substr(1, close - 1);
        if (close + 1 < s.size()) {
            if (s[close + 1] != ':') throw usage_error("bad server address '" + s + "'", "write [IPv6]:PORT");
            port = s.substr(close + 2);
        }
    } else if (auto c = s.find(':'); c != std::string::npos && s.find(':', c + 1) == std::string::npos) {
        hp.host = s.substr(0, c);
        port = s.substr(c + 1);
    } else {
        hp.host = s;
    }
    if (hp.host.empty()) throw usage_error("no host in server address '" + s + "'", "write HOST or HOST:PORT");
    if (!port.empty()) {
        constexpr NumberRule kPortRule{1, 65535, false, false, true, NumberUnit::None, "a TCP port", "", "5201"};
        NumberRead n = read_number(port, kPortRule);
        if (n.problem)
            throw usage_error("bad port '" + port.substr(0, 40) + "' in the server address (" + *n.problem + ")",
                              "a port is a whole number between 1 and 65535, e.g. 10.0.0.2:5201");
        hp.port = int(n.value);
    }
    return hp;
}

IperfOutcome parse_iperf_json(const std::string& text) {
    IperfOutcome o;
    o.json = text;
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        o.error = "iperf output is not JSON";
        return o;
    }
    if (j.contains("error") && j["error"].is_string()) o.error = j["error"].get<std::string>();
    if (!j.contains("end") || !j["end"].is_object()) {
        if (o.error.empty()) o.error = "iperf output has no end summary";
        return o;
    }
    const auto& end = j["end"];
    auto num = [](const nlohmann::json& obj, const char* k) -> std::optional<double> {
        if (obj.is_object() && obj.contains(k) && obj[k].is_number()) return obj[k].get<double>();
        return std::nullopt;
    };
    if (end.contains("sum_received")) {
        if (auto v = num(end["sum_received"], "bits_per_second")) o.received_gbitps = *v / 1e9;
    }
    if (end.contains("sum_sent")) {
        if (auto v = num(end["sum_sent"], "bits_per_second")) o.sent_gbitps = *v / 1e9;
        o.retransmits = num(end["sum_sent"], "retransmits");
    }
    if (!o.received_gbitps && o.error.empty()) o.error = "iperf output has no received throughput";
    return o;
}

namespace {

// Runs `body` in a child whose stdout goes to a pipe; returns (stdout text, error text, stopped).
// The child writes an error message to a second pipe when the test fails.
struct ChildRun {
    std::string out, err;
    bool stopped = false, timed_out = false;
};

ChildRun run_in_child(const std::function<std::string()>& body, double timeout_s, const std::atomic<bool>* stop) {
    ChildRun r;
    int outp[2], errp[2];
    if (pipe2(outp, O_CLOEXEC) != 0) throw runtime_error(std::string("pipe: ") + std::strerror(errno), kNoChildAdvice);
    if (pipe2(errp, O_CLOEXEC) != 0) {
        close(outp[0]);
        close(outp[1]);
        throw runtime_error(std::string("pipe: ") + std::strerror(errno), kNoChildAdvice);
    }
    std::cout.flush();
    std::fflush(nullptr);  // else buffered parent output would be printed twice
    pid_t pid = fork();
    if (pid < 0) throw runtime_error(std::string("fork: ") + std::strerror(errno), kNoChildAdvice);
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        dup2(outp[1], STDOUT_FILENO);
        std::string e = body();
        std::fflush(stdout);
        if (!e.empty()) (void)!write(errp[1], e.data(), e.size());
        _exit(e.empty() ? 0 : 1);
    }
    close(outp[1]);
    close(errp[1]);
    auto t0 = std::chrono::steady_clock::now();
    pollfd fds[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
    int open_fds = 2;
    bool killed = false;
    char buf[65536];
    while (open_fds > 0) {
        int n = poll(fds, 2, 200);
        if (n > 0) {
            for (int i = 0; i < 2; ++i) {
                if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                ssize_t k = read(fds[i].fd, buf, sizeof buf);
                if (k > 0) (i == 0 ? r.out : r.err).append(buf, std::size_t(k));
                else {
                    close(fds[i].fd);
                    fds[i].fd = -1;
                    --open_fds;
                }
            }
        }
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!killed && ((stop && stop->load()) || (timeout_s > 0 && el > timeout_s))) {
            r.stopped = stop && stop->load();
            r.timed_out = !r.stopped;
            kill(pid, SIGTERM);  // our own child, by its id
            killed = true;
        }
    }
    for (auto& f : fds)
        if (f.fd >= 0) close(f.fd);
    int status = 0;
    waitpid(pid, &status, 0);
    return r;
}

std::string iperf_error() { return iperf_strerror(i_errno); }

}  // namespace

IperfOutcome iperf_client(const IperfClientOptions& o, const std::atomic<bool>* stop) {
    auto body = [&]() -> std::string {
        iperf_test* t = iperf_new_test();
        if (!t || iperf_defaults(t) < 0) return "libiperf could not create a test";
        iperf_set_test_role(t, 'c');
        iperf_set_test_server_hostname(t, o.server.host.c_str());
        iperf_set_test_server_port(t, o.server.port);
        iperf_set_test_duration(t, std::max(1, o.seconds));
        iperf_set_test_num_streams(t, std::max(1, o.streams));
        iperf_set_test_reverse(t, o.reverse ? 1 : 0);
        iperf_set_test_connect_timeout(t, o.connect_timeout_ms);
        iperf_set_test_json_output(t, 1);
        int rc = iperf_run_client(t);
        std::string e = rc < 0 ? iperf_error() : "";
        iperf_free_test(t);
        return e;
    };
    // Bound: the test itself, connection setup and the end exchange.
    ChildRun c = run_in_child(body, o.seconds + o.connect_timeout_ms / 1000.0 + 15, stop);
    IperfOutcome out;
    if (c.stopped) out.error = "interrupted";
    else if (c.timed_out) out.error = "the test did not finish in time";
    else if (!c.err.empty()) out.error = c.err;
    if (!out.error.empty()) return out;
    out = parse_iperf_json(c.out);
    return out;
}

IperfOutcome iperf_serve_one(int port, const std::string& bind, const std::atomic<bool>* stop) {
    auto body = [&]() -> std::string {
        iperf_test* t = iperf_new_test();
        if (!t || iperf_defaults(t) < 0) return "libiperf could not create a test";
        iperf_set_test_role(t, 's');
        iperf_set_test_server_port(t, port);
        if (!bind.empty()) iperf_set_test_bind_address(t, bind.c_str());
        iperf_set_test_one_off(t, 1);
        iperf_set_test_json_output(t, 1);
        int rc = iperf_run_server(t);
        std::string e = rc < 0 ? iperf_error() : "";
        iperf_free_test(t);
        return e;
    };
    ChildRun c = run_in_child(body, 0, stop);
    IperfOutcome out;
    if (c.stopped) out.error = "stopped";
    else if (!c.err.empty()) out.error = c.err;
    if (!out.error.empty()) return out;
    return parse_iperf_json(c.out);
}

}  // namespace gpuvet
