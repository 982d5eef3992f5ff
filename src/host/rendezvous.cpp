#include "host/rendezvous.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "core/error.hpp"

namespace gpuvet {

namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'V', 'E', 'T', 'R', '1'};
constexpr std::uint32_t kMaxBlobBytes = 1 << 16;
constexpr int kSliceMs = 50;  // how often a wait looks at the stop flag

struct Fd {
    int fd = -1;
    explicit Fd(int f = -1) : fd(f) {}
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    Fd& operator=(Fd&&) = delete;
};

bool expired(const RendezvousDeadline& d) {
    return std::chrono::steady_clock::now() >= d.until || (d.stop && d.stop->load());
}

// Waits for `events` on fd in slices; false at the deadline or a stop.
bool wait_for(int fd, short events, const RendezvousDeadline& d) {
    while (!expired(d)) {
        pollfd p{fd, events, 0};
        int n = ::poll(&p, 1, kSliceMs);
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
    return false;
}

bool send_all(int fd, const void* data, std::size_t size, const RendezvousDeadline& d) {
    auto* p = static_cast<const char*>(data);
    while (size > 0) {
        if (!wait_for(fd, POLLOUT, d)) return false;
        ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return false;
        p += n;
        size -= std::size_t(n);
    }
    return true;
}

bool recv_all(int fd, void* data, std::size_t size, const RendezvousDeadline& d) {
    auto* p = static_cast<char*>(data);
    while (size > 0) {
        if (!wait_for(fd, POLLIN, d)) return false;
        ssize_t n = ::recv(fd, p, size, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return false;
        p += n;
        size -= std::size_t(n);
    }
    return true;
}

struct Hello {
    char magic[8];
    std::uint32_t rank, world;  // network byte order
};

std::string ranks_text(const std::set<int>& missing) {
    std::string s;
    int shown = 0;
    for (int r : missing) {
        if (++shown > 8) return s + ", ...";
        s += (s.empty() ? "" : ", ") + std::to_string(r);
    }
    return s;
}

// One connection: read its hello, check it, send the blob; the rank served, or -1.
int serve_one(int fd, const std::string& blob, int world, const std::set<int>& missing, const RendezvousDeadline& d) {
    Hello h{};
    if (!recv_all(fd, &h, sizeof h, d) || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return -1;
    const int rank = int(ntohl(h.rank)), their_world = int(ntohl(h.world));
    if (their_world != world)
        throw runtime_error("rank " + std::to_string(rank) + " belongs to a job of " + std::to_string(their_world) +
                                " ranks, this one has " + std::to_string(world),
                            "start every rank with the same world size (SLURM_NTASKS), or use another port");
    if (!missing.count(rank)) return -1;  // a duplicate or out-of-range rank is not served
    const std::uint32_t len = htonl(std::uint32_t(blob.size()));
    if (!send_all(fd, &len, sizeof len, d) || !send_all(fd, blob.data(), blob.size(), d)) return -1;
    return rank;
}

}  // namespace

namespace {

// A listening socket on `bind_host` ("" = every address, IPv4 and IPv6) and `port` (0: the kernel
// picks); the port it got in `bound`.
int listen_on(const std::string& bind_host, int port, int& bound) {
    Fd s(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.fd < 0) throw runtime_error(std::string("cannot open a socket: ") + std::strerror(errno), "");
    int one = 1, zero = 0;
    ::setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    ::setsockopt(s.fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 too, as ::ffff:a.b.c.d
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(std::uint16_t(port));
    a.sin6_addr = in6addr_any;
    if (!bind_host.empty()) {
        in_addr v4{};
        if (::inet_pton(AF_INET, bind_host.c_str(), &v4) == 1) {
            std::string mapped = "::ffff:" + bind_host;
            ::inet_pton(AF_INET6, mapped.c_str(), &a.sin6_addr);
        } else if (::inet_pton(AF_INET6, bind_host.c_str(), &a.sin6_addr) != 1)
            throw usage_error("'" + bind_host + "' is not an IP address to listen on", "give an IPv4 or IPv6 address");
    }
    if (::bind(s.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s.fd, 128) != 0)
        throw runtime_error("cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno),
                            "choose another rendezvous port, or stop the program using it");
    socklen_t len = sizeof a;
    ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&a), &len);
    bound = ntohs(a.sin6_port);
    int fd = s.fd;
    s.fd = -1;
    return fd;
}

}  // namespace

RendezvousServer::RendezvousServer(const std::string& bind_host, int port) { fd_ = listen_on(bind_host, port, port_); }

RendezvousServer::~RendezvousServer() {
    if (fd_ >= 0) ::close(fd_);
}

void RendezvousServer::serve(const std::string& blob, int world, const RendezvousDeadline& d) {
    if (blob.size() > kMaxBlobBytes) throw internal_error("rendezvous blob too large");
    std::set<int> missing;
    for (int r = 1; r < world; ++r) missing.insert(r);
    while (!missing.empty()) {
        if (!wait_for(fd_, POLLIN, d)) {
            if (d.stop && d.stop->load()) throw Interrupted();
            throw runtime_error("rank(s) " + ranks_text(missing) + " of " + std::to_string(world) +
                                    " did not reach the rendezvous on port " + std::to_string(port_) + " in time",
                                "check that every rank was started and that this host's port is reachable from the "
                                "others (firewall)");
        }
        Fd c(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
        if (c.fd < 0) continue;
        // One silent client must not hold the others up: each gets a few seconds of its own.
        RendezvousDeadline one{std::min(d.until, std::chrono::steady_clock::now() + std::chrono::seconds(5)), d.stop};
        const int rank = serve_one(c.fd, blob, world, missing, one);
        if (rank > 0) missing.erase(rank);
    }
}

namespace {

// One connection attempt to the first address that accepts, within the deadline.
Fd connect_once(const std::string& host, int port, const RendezvousDeadline& d, std::string& why) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
        why = std::string("cannot resolve ") + host + ": " + ::gai_strerror(rc);
        return Fd();
    }
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
        Fd s(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        if (s.fd < 0) continue;
        if (::connect(s.fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            why = std::strerror(errno);
            continue;
        }
        if (!wait_for(s.fd, POLLOUT, d)) continue;
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            why = std::strerror(err);
            continue;
        }
        ::freeaddrinfo(res);
        return s;
    }
    ::freeaddrinfo(res);
    return Fd();
}

}  // namespace

std::string rendezvous_fetch(const std::string& host, int port, int rank, int world, const RendezvousDeadline& d) {
    const std::string where = host + ":" + std::to_string(port);
    std::string why = "no answer";
    while (!expired(d)) {
        Fd s = connect_once(host, port, d, why);
        if (s.fd < 0) {
            // Rank 0 may not listen yet: try again shortly, until the deadline.
            RendezvousDeadline pause{
                std::min(d.until, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)), d.stop};
            while (!expired(pause)) ::poll(nullptr, 0, 10);
            continue;
        }
        Hello h{};
        std::memcpy(h.magic, kMagic, sizeof kMagic);
        h.rank = htonl(std::uint32_t(rank));
        h.world = htonl(std::uint32_t(world));
        std::uint32_t len = 0;
        if (!send_all(s.fd, &h, sizeof h, d) || !recv_all(s.fd, &len, sizeof len, d)) {
            why = "the connection closed before the id came (rank " + std::to_string(rank) +
                  " refused: outside the job, or given twice)";
            continue;
        }
        len = ntohl(len);
        if (len > kMaxBlobBytes)
            throw runtime_error(where + " is not a gpuvet rendezvous", "check the address and port");
        std::string blob(len, '\0');
        if (!recv_all(s.fd, blob.data(), len, d)) {
            why = "the connection closed mid-transfer";
            continue;
        }
        return blob;
    }
    if (d.stop && d.stop->load()) throw Interrupted();
    throw runtime_error(
        "rank " + std::to_string(rank) + " could not get the NCCL id from rank 0 at " + where + ": " + why,
        "check that rank 0 runs on that host and that the port is reachable from this node");
}

// ---- the key-value board ------------------------------------------------------------------------

namespace {

constexpr char kBoardMagic[8] = {'G', 'P', 'U', 'V', 'E', 'T', 'B', '1'};
constexpr std::uint32_t kBoardPut = 1, kBoardGet = 2;
constexpr std::uint32_t kBoardOk = 0, kBoardNotYet = 1, kBoardRefused = 2;
constexpr std::uint32_t kMaxKeyBytes = 256;
constexpr std::size_t kMaxBoardBytes = std::size_t(64) << 20;  // every blob together

struct BoardHead {
    char magic[8];
    std::uint32_t op, token_len, key_len, blob_len;  // network byte order
};

bool send_u32(int fd, std::uint32_t v, const RendezvousDeadline& d) {
    v = htonl(v);
    return send_all(fd, &v, sizeof v, d);
}

bool recv_u32(int fd, std::uint32_t& v, const RendezvousDeadline& d) {
    if (!recv_all(fd, &v, sizeof v, d)) return false;
    v = ntohl(v);
    return true;
}

bool recv_text(int fd, std::uint32_t len, std::string& out, const RendezvousDeadline& d) {
    out.assign(len, '\0');
    return len == 0 || recv_all(fd, out.data(), len, d);
}

// One request: a put stores, a get answers the blob or "not yet"; a wrong token is refused.
void board_request(int fd, const std::string& token, std::map<std::string, std::string>& blobs, std::size_t& total,
                   const RendezvousDeadline& d) {
    BoardHead h{};
    if (!recv_all(fd, &h, sizeof h, d) || std::memcmp(h.magic, kBoardMagic, sizeof kBoardMagic) != 0) return;
    const std::uint32_t op = ntohl(h.op), token_len = ntohl(h.token_len), key_len = ntohl(h.key_len),
                        blob_len = ntohl(h.blob_len);
    if (token_len > kMaxKeyBytes || key_len > kMaxKeyBytes || blob_len > kMaxBlobBytes) return;
    std::string their_token, key, blob;
    if (!recv_text(fd, token_len, their_token, d) || !recv_text(fd, key_len, key, d) ||
        !recv_text(fd, blob_len, blob, d))
        return;
    if (their_token != token) {
        send_u32(fd, kBoardRefused, d);
        return;
    }
    if (op == kBoardPut) {
        if (auto it = blobs.find(key); it != blobs.end()) {  // a retried put whose answer was lost is fine
            send_u32(fd, it->second == blob ? kBoardOk : kBoardRefused, d);
            return;
        }
        if (total + blob.size() > kMaxBoardBytes) {
            send_u32(fd, kBoardRefused, d);
            return;
        }
        total += blob.size();
        blobs[key] = std::move(blob);
        send_u32(fd, kBoardOk, d);
        return;
    }
    auto it = blobs.find(key);
    if (op != kBoardGet || it == blobs.end()) {
        send_u32(fd, op == kBoardGet ? kBoardNotYet : kBoardRefused, d);
        return;
    }
    if (send_u32(fd, kBoardOk, d) && send_u32(fd, std::uint32_t(it->second.size()), d))
        send_all(fd, it->second.data(), it->second.size(), d);
}

// One request to the board: its status, and for a get the blob. False: no answer this time.
bool board_call(const std::string& host, int port, const std::string& token, std::uint32_t op, const std::string& key,
                const std::string& blob, std::uint32_t& status, std::string& out, std::string& why,
                const RendezvousDeadline& d) {
    Fd s = connect_once(host, port, d, why);
    if (s.fd < 0) return false;
    BoardHead h{};
    std::memcpy(h.magic, kBoardMagic, sizeof kBoardMagic);
    h.op = htonl(op);
    h.token_len = htonl(std::uint32_t(token.size()));
    h.key_len = htonl(std::uint32_t(key.size()));
    h.blob_len = htonl(std::uint32_t(blob.size()));
    if (!send_all(s.fd, &h, sizeof h, d) || !send_all(s.fd, token.data(), token.size(), d) ||
        !send_all(s.fd, key.data(), key.size(), d) || !send_all(s.fd, blob.data(), blob.size(), d) ||
        !recv_u32(s.fd, status, d)) {
        why = "the board closed the connection";
        return false;
    }
    if (op != kBoardGet || status != kBoardOk) return true;
    std::uint32_t len = 0;
    if (!recv_u32(s.fd, len, d) || len > kMaxBlobBytes || !recv_text(s.fd, len, out, d)) {
        why = "the board's answer was cut short";
        return false;
    }
    return true;
}

void pause_100ms(const RendezvousDeadline& d) {
    RendezvousDeadline pause{std::min(d.until, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)),
                             d.stop};
    while (!expired(pause)) ::poll(nullptr, 0, 10);
}

std::string board_exchange(const std::string& host, int port, const std::string& token, std::uint32_t op,
                           const std::string& key, const std::string& blob, const RendezvousDeadline& d) {
    if (key.size() > kMaxKeyBytes || blob.size() > kMaxBlobBytes)
        throw internal_error("rendezvous key or blob too large");
    const std::string where = host + ":" + std::to_string(port);
    std::string why = "no answer";
    while (!expired(d)) {
        std::uint32_t status = kBoardNotYet;
        std::string out;
        if (board_call(host, port, token, op, key, blob, status, out, why, d)) {
            if (status == kBoardOk) return out;
            if (status == kBoardRefused)
                throw runtime_error("the rendezvous at " + where + " refused " + key +
                                        (op == kBoardPut ? " (put twice, or the board is full)" : "") +
                                        ": another job's board, or a wrong token",
                                    "start the ranks from gpuvet fleet, which gives them its board and token");
            why = key + " was not put yet";
        }
        pause_100ms(d);
    }
    if (d.stop && d.stop->load()) throw Interrupted();
    throw runtime_error("no answer from the rendezvous at " + where + " for " + key + ": " + why,
                        "check that this node reaches the host gpuvet fleet runs on (srun's own address, "
                        "SLURM_LAUNCH_NODE_IPADDR) on that port, and that every rank of the step started");
}

}  // namespace

RendezvousBoard::RendezvousBoard(const std::string& bind_host, int port, std::string token) : token_(std::move(token)) {
    fd_ = listen_on(bind_host, port, port_);
}

RendezvousBoard::~RendezvousBoard() {
    if (fd_ >= 0) ::close(fd_);
}

void RendezvousBoard::serve_until(const std::atomic<bool>& stop) {
    std::map<std::string, std::string> blobs;
    std::size_t total = 0;
    while (!stop.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, kSliceMs) <= 0) continue;
        Fd c(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
        if (c.fd < 0) continue;
        // One silent client must not hold the others up: each gets a few seconds.
        board_request(c.fd, token_, blobs, total,
                      RendezvousDeadline{std::chrono::steady_clock::now() + std::chrono::seconds(5), &stop});
    }
}

void board_put(const std::string& host, int port, const std::string& token, const std::string& key,
               const std::string& blob, const RendezvousDeadline& deadline) {
    board_exchange(host, port, token, kBoardPut, key, blob, deadline);
}

std::string board_get(const std::string& host, int port, const std::string& token, const std::string& key,
                      const RendezvousDeadline& deadline) {
    return board_exchange(host, port, token, kBoardGet, key, "", deadline);
}

}  // namespace gpuvet
