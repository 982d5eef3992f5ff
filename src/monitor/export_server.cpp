#include "monitor/export_server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <list>
#include <vector>

#include "core/error.hpp"

namespace gpuvet {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxRequestsPerConnection = 1000;             // then the client reconnects: no connection lives forever
constexpr auto kPollTick = std::chrono::milliseconds(250);  // how often the deadlines are looked at
constexpr std::size_t kMaxPendingOut = 1 << 20;             // answered but unsent bytes per connection

constexpr const char* kIndex =
    "<!doctype html><html><head><title>gpuvet export</title></head><body>"
    "<h1>gpuvet export</h1><p>Prometheus metrics of this machine's GPUs, with dcgm-exporter's names.</p>"
    "<ul><li><a href=\"/metrics\">/metrics</a> the exposition</li>"
    "<li><a href=\"/healthz\">/healthz</a> ok while the sampler runs and its last sample is fresh</li></ul>"
    "</body></html>\n";

std::string bind_problem(int err, const ListenAddress& a) {
    const std::string where = a.host + ":" + std::to_string(a.port);
    if (err == EADDRINUSE)
        return "port " + std::to_string(a.port) + " on " + a.host +
               " is already in use (another exporter, such as "
               "dcgm-exporter, or a second gpuvet export?)";
    if (err == EACCES) return "no permission to listen on " + where + " (ports below 1024 need root)";
    if (err == EADDRNOTAVAIL) return a.host + " is not an address of this machine";
    if (err != 0) return "cannot listen on " + where + ": " + std::strerror(err);
    return "cannot listen on " + where + " (the address does not resolve or cannot be bound)";
}

}  // namespace

HealthAnswer health_answer(const SamplerStatus& st, const ExportView& v, std::chrono::steady_clock::time_point now,
                           std::chrono::milliseconds interval) {
    switch (st.health) {
        case SamplerHealth::Failed: return {503, "failed: " + st.message + "\n"};
        case SamplerHealth::Ended: return {503, "stopped: the sampler has ended\n"};
        case SamplerHealth::Starting: return {503, "starting: the first sample of the GPUs has not completed yet\n"};
        case SamplerHealth::Running: break;
    }
    if (now - v.tick_done > stale_after(interval))
        return {503, fmt::format("stale: the last sample ended {:.1f} s ago, more than the bound of {:.1f} s; the "
                                 "driver is not answering in time\n",
                                 std::chrono::duration<double>(now - v.tick_done).count(),
                                 stale_after(interval).count() / 1000.0)};
    // Fresh samples of GPUs that are all lost are no health: nothing is measured any more.
    if (v.tick && !v.tick->gpus.empty() &&
        std::all_of(v.tick->gpus.begin(), v.tick->gpus.end(), [](const GpuReading& g) { return g.lost; }))
        return {503,
                "lost: every GPU is lost (fallen off the bus); a lost GPU needs a reset or a reboot, and "
                "gpuvet export a restart after it\n"};
    return {200, "ok\n"};
}

struct ExportServer::Impl {
    Impl(const ExportSampler& s, std::chrono::milliseconds i) : sampler(s), interval(i) {}
    ~Impl() {
        for (int fd : {listen_fd, wake[0], wake[1]})
            if (fd >= 0) ::close(fd);
    }
    struct Conn {
        int fd = -1;
        std::string in, out;
        std::size_t out_off = 0;
        Clock::time_point request_since, last_progress;
        int requests = 0;
        bool close_after = false;  // once `out` is sent
        bool peer_done = false;    // the client shut its side: no more requests will come
        bool broken = false;       // a read failed: close at once
        bool backlog = false;      // complete requests wait for the answers before them to be sent
    };
    const ExportSampler& sampler;
    std::chrono::milliseconds interval;
    int listen_fd = -1;
    int wake[2] = {-1, -1};
    std::atomic<bool> stopping{false};
    std::list<Conn> conns;
    Clock::time_point accept_after{};  // out of descriptors: the socket waits a tick

    void serve();
    void accept_all(Clock::time_point now);
    void close_oldest();
    void read_from(Conn& c, Clock::time_point now);
    void answer(Conn& c, Clock::time_point now);
    void reply(Conn& c, int status, const char* reason, std::string_view type, std::string body, bool head);
    static bool write_to(Conn& c, Clock::time_point now);
    bool expired(const Conn& c, Clock::time_point now) const;
};

void ExportServer::Impl::reply(Conn& c, int status, const char* reason, std::string_view type, std::string body,
                               bool head) {
    std::string h =
        fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", status, reason, type, body.size());
    if (status == 405) h += "Allow: GET, HEAD\r\n";
    if (c.close_after) h += "Connection: close\r\n";
    c.out += h + "\r\n";
    if (!head) c.out += body;
}

// The complete requests at the front of the buffer, answered in order (pipelining), while less
// than kMaxPendingOut is waiting to be sent: a client that pipelines without reading gets the rest
// as it reads, not a buffer that grows without bound.
void ExportServer::Impl::answer(Conn& c, Clock::time_point now) {
    c.backlog = false;
    while (!c.close_after) {
        if (c.out.size() - c.out_off >= kMaxPendingOut) {
            c.backlog = true;
            return;
        }
        HttpRequest r = parse_http_request(c.in);
        using P = HttpRequest::Parse;
        if (r.state == P::Incomplete) return;
        if (r.state != P::Complete) {
            c.close_after = true;
            c.in.clear();
            if (r.state == P::TargetTooLong) reply(c, 414, "URI Too Long", "text/plain", "URI too long\n", false);
            else if (r.state == P::TooLarge)
                reply(c, 431, "Request Header Fields Too Large", "text/plain", "header too large\n", false);
            else reply(c, 400, "Bad Request", "text/plain", "bad request\n", false);
            return;
        }
        c.in.erase(0, r.consumed);
        c.request_since = now;
        c.close_after = !r.keep_alive || ++c.requests >= kMaxRequestsPerConnection;
        const bool head = r.method == "HEAD";
        if (r.method != "GET" && !head) {
            c.close_after = true;
            reply(c, 405, "Method Not Allowed", "text/plain", "only GET and HEAD\n", false);
        } else if (r.path == "/metrics") {
            reply(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
                  render_metrics(sampler.view(), Clock::now(), interval), head);
        } else if (r.path == "/healthz") {
            HealthAnswer a = health_answer(sampler.status(), sampler.view(), Clock::now(), interval);
            reply(c, a.status, a.status == 200 ? "OK" : "Service Unavailable", "text/plain; charset=utf-8", a.body,
                  head);
        } else if (r.path == "/") {
            reply(c, 200, "OK", "text/html", kIndex, head);
        } else {
            reply(c, 404, "Not Found", "text/plain", "not found\n", head);
        }
    }
}

// Takes what the client sent, up to twice the header bound (the parser refuses a larger header).
void ExportServer::Impl::read_from(Conn& c, Clock::time_point now) {
    char buf[16384];
    while (c.in.size() <= 2 * kMaxHeaderBytes) {
        ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n > 0) {
            if (c.in.empty() && c.out.size() == c.out_off) c.request_since = now;
            c.in.append(buf, std::size_t(n));
            c.last_progress = now;
            continue;
        }
        if (n == 0) c.peer_done = true;  // the client is done sending: answer what it sent, then close
        else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) c.broken = true;
        return;
    }
}

// Sends what is queued; false when the connection is finished (all sent and closing, or broken).
bool ExportServer::Impl::write_to(Conn& c, Clock::time_point now) {
    while (c.out_off < c.out.size()) {
        ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
        c.out_off += std::size_t(n);
        c.last_progress = now;
    }
    c.out.clear();
    c.out_off = 0;
    return !c.close_after;
}

bool ExportServer::Impl::expired(const Conn& c, Clock::time_point now) const {
    if (c.out_off < c.out.size()) return now - c.last_progress > kWriteTimeout;
    if (!c.in.empty() || c.requests == 0) return now - c.request_since > kHeaderDeadline;
    return now - c.last_progress > kIdleTimeout;
}

void ExportServer::Impl::close_oldest() {
    // The connection whose request has waited longest: a slow client loses its slot before a
    // prompt one is turned away.
    auto oldest = conns.begin();
    for (auto it = conns.begin(); it != conns.end(); ++it)
        if (it->request_since < oldest->request_since) oldest = it;
    ::close(oldest->fd);
    conns.erase(oldest);
}

void ExportServer::Impl::accept_all(Clock::time_point now) {
    for (;;) {
        int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                if (!conns.empty()) {
                    close_oldest();
                    continue;
                }
                accept_after = now + kPollTick;  // not a busy loop on a socket that stays readable
            }
            return;  // EAGAIN: all taken
        }
        if (conns.size() >= kMaxConnections) close_oldest();
        Conn c;
        c.fd = fd;
        c.request_since = c.last_progress = now;
        conns.push_back(std::move(c));
    }
}

void ExportServer::Impl::serve() {
    std::vector<pollfd> fds;
    while (!stopping.load()) {
        const short listen_events = Clock::now() >= accept_after ? POLLIN : 0;
        fds.assign({{listen_fd, listen_events, 0}, {wake[0], POLLIN, 0}});
        for (const Conn& c : conns) {
            short ev = c.out_off < c.out.size() ? POLLOUT : 0;
            if (!c.close_after && !c.peer_done && c.in.size() <= 2 * kMaxHeaderBytes) ev |= POLLIN;
            fds.push_back({c.fd, ev, 0});
        }
        if (::poll(fds.data(), fds.size(), int(kPollTick.count())) < 0 && errno != EINTR) break;
        const auto now = Clock::now();
        std::size_t i = 2;
        for (auto it = conns.begin(); it != conns.end(); ++i) {
            Conn& c = *it;
            const bool readable = fds[i].revents & (POLLIN | POLLHUP | POLLERR);
            if (readable) read_from(c, now);
            if (readable || c.backlog) answer(c, now);  // a header is parsed when something changed
            if (c.peer_done && c.out_off == c.out.size() &&
                parse_http_request(c.in).state != HttpRequest::Parse::Complete)
                c.close_after = true;  // everything the client sent is answered
            bool keep = !c.broken && write_to(c, now) && !expired(c, now);
            if (keep) {
                ++it;
                continue;
            }
            ::close(c.fd);
            it = conns.erase(it);
        }
        if (fds[0].revents & POLLIN) accept_all(now);
    }
    for (Conn& c : conns) ::close(c.fd);
    conns.clear();
}

ExportServer::ExportServer(const ExportSampler& sampler, std::chrono::milliseconds interval)
    : impl_(std::make_unique<Impl>(sampler, interval)) {}

ExportServer::~ExportServer() { stop(); }

void ExportServer::bind(const ListenAddress& a) {
    std::string host = a.host;
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    int err = 0;
    if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(a.port).c_str(), &hints, &found) == 0) {
        for (addrinfo* ai = found; ai && impl_->listen_fd < 0; ai = ai->ai_next) {
            int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) continue;
            // SO_REUSEADDR only (a restart binds past TIME_WAIT); never SO_REUSEPORT, which would let a
            // second exporter share the port and split the scrapes between the two.
            int yes = 1;
            ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
            if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) impl_->listen_fd = fd;
            else err = errno, ::close(fd);
        }
        ::freeaddrinfo(found);
    }
    if (impl_->listen_fd < 0) {
        std::string fix_host = is_loopback(a.host) ? a.host : std::string("127.0.0.1");
        if (fix_host.find(':') != std::string::npos && fix_host.front() != '[') fix_host = "[" + fix_host + "]";
        throw usage_error(bind_problem(err, a), "choose a free port with --listen " + fix_host +
                                                    ":PORT, or stop the program that holds it (ss -ltnp shows it)");
    }
}

void ExportServer::start() {
    Impl* im = impl_.get();
    if (::pipe2(im->wake, O_CLOEXEC | O_NONBLOCK) != 0)
        throw runtime_error(std::string("cannot start the HTTP server: ") + std::strerror(errno),
                            "the process is out of file descriptors");
    thread_ = std::thread([im] { im->serve(); });
}

void ExportServer::stop() {
    impl_->stopping.store(true);
    if (impl_->wake[1] >= 0) {
        char b = 1;
        [[maybe_unused]] ssize_t n = ::write(impl_->wake[1], &b, 1);
    }
    if (thread_.joinable()) thread_.join();
}

}  // namespace gpuvet
