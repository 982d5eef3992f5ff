#include "host/iperf_run.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <iperf_api.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/result.hpp"

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
        constexpr NumberRule kPortRule{.min = 1, .max = 65535, .whole = true, .what = "a TCP port", .example = "5201"};
        NumberRead n = read_number(port, kPortRule);
        if (n.problem)
            throw usage_error("bad port '" + port.substr(0, 40) + "' in the server address (" + *n.problem + ")",
                              "a port is a whole number between 1 and 65535, e.g. 10.0.0.2:5201");
        hp.port = int(n.value);
    }
    return hp;
}

HostPort resolve_server(const std::string& s, const std::string& flag) {
    HostPort hp = parse_host_port(s);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(hp.host.c_str(), nullptr, &hints, &res);
    if (res) ::freeaddrinfo(res);
    if (rc != 0)
        throw usage_error(flag + " " + s + ": cannot resolve host '" + hp.host + "' (" + ::gai_strerror(rc) + ")",
                          "check the name, or give the server's IP address");
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

// Our child, killed and reaped whatever path the parent leaves by (return, exception).
struct ChildGuard {
    pid_t pid = -1;
    ~ChildGuard() {
        if (pid <= 0) return;
        kill(pid, SIGKILL);  // our own child, by its id
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    }
    // Gives the child `grace_s` to exit (asked with SIGTERM when `ask`), then kills it; reaps it either way.
    void end(bool ask, double grace_s) {
        if (pid <= 0) return;
        if (ask) kill(pid, SIGTERM);
        auto t0 = std::chrono::steady_clock::now();
        int status = 0;
        for (;;) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid || (w < 0 && errno != EINTR)) {
                pid = -1;
                return;
            }
            if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > grace_s) break;
            usleep(10000);
        }
        // ~ChildGuard kills and reaps
    }
};

struct Pipe {
    int fd[2] = {-1, -1};
    ~Pipe() {
        for (int f : fd)
            if (f >= 0) close(f);
    }
    void close_end(int i) {
        if (fd[i] >= 0) close(fd[i]);
        fd[i] = -1;
    }
};

ChildRun run_in_child(const std::function<std::string()>& body, double timeout_s, const std::atomic<bool>* stop) {
    ChildRun r;
    Pipe outp, errp;
    if (pipe2(outp.fd, O_CLOEXEC) != 0 || pipe2(errp.fd, O_CLOEXEC) != 0)
        throw runtime_error(std::string("pipe: ") + std::strerror(errno), kNoChildAdvice);
    std::cout.flush();
    std::fflush(nullptr);  // else buffered parent output would be printed twice
    const pid_t parent = getpid();
    ChildGuard child;
    child.pid = fork();
    if (child.pid < 0) throw runtime_error(std::string("fork: ") + std::strerror(errno), kNoChildAdvice);
    if (child.pid == 0) {
        // The child dies with gpuvet, even when gpuvet is killed (SIGKILL runs no cleanup): a
        // server child would otherwise hold its port forever. The getppid() test closes the race
        // of a parent that died before prctl.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        dup2(outp.fd[1], STDOUT_FILENO);
        std::string e = body();
        std::fflush(stdout);
        if (!e.empty()) (void)!write(errp.fd[1], e.data(), e.size());
        _exit(e.empty() ? 0 : 1);
    }
    outp.close_end(1);
    errp.close_end(1);
    auto t0 = std::chrono::steady_clock::now();
    pollfd fds[2] = {{outp.fd[0], POLLIN, 0}, {errp.fd[0], POLLIN, 0}};
    int open_fds = 2;
    char buf[65536];
    auto stopped = [&] { return stop && stop->load(); };
    while (open_fds > 0) {
        int n = poll(fds, 2, 100);
        if (n > 0) {
            for (int i = 0; i < 2; ++i) {
                if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                ssize_t k = read(fds[i].fd, buf, sizeof buf);
                if (k > 0) (i == 0 ? r.out : r.err).append(buf, std::size_t(k));
                else if (k == 0 || errno != EINTR) {
                    fds[i].fd = -1;  // closed by the Pipe guards
                    --open_fds;
                }
            }
        }
        double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (stopped() || (timeout_s > 0 && el > timeout_s)) break;
    }
    // Ctrl-C on a terminal reaches the child too, which then ends with a partial document: a stop
    // seen at any point means the test was cut short, not that it failed.
    r.stopped = stopped();
    r.timed_out = !r.stopped && open_fds > 0;
    // A child that closed its pipes is exiting on its own; one cut short is asked to stop.
    if (r.stopped || r.timed_out) child.end(true, 0.3);
    else child.end(false, 5.0);
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
    out.stopped = c.stopped, out.timed_out = c.timed_out;
    if (c.stopped) out.error = kInterrupted;
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
    out.stopped = c.stopped;
    if (c.stopped) out.error = "stopped";
    else if (!c.err.empty()) out.error = c.err;
    if (!out.error.empty()) return out;
    return parse_iperf_json(c.out);
}

}  // namespace gpuvet
