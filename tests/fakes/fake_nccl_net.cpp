#include "fake_nccl_net.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_fabric.hpp"
#include "fake_hooks.hpp"

namespace fakenccl {

namespace {

constexpr int kMaxRanks = 1024;
constexpr char kIdMagic[8] = {'g', 'v', 'f', 'n', 'c', 'c', 'l', '1'};
constexpr int kChannels = 2;

// ---- the log (NCCL_DEBUG, NCCL_DEBUG_FILE) -----------------------------------------------------

std::mutex g_log_mu;
std::string g_last_warn;

struct Log {
    FILE* f = nullptr;
    int level = 0;  // 0 none, 1 WARN, 2 INFO and above
    Log() {
        const char* d = std::getenv("NCCL_DEBUG");
        std::string v = d ? d : "";
        for (char& c : v) c = char(std::toupper(static_cast<unsigned char>(c)));
        level = v == "WARN" ? 1 : (v == "INFO" || v == "TRACE" || v == "ABORT") ? 2 : 0;
        if (level == 0) return;
        const char* file = std::getenv("NCCL_DEBUG_FILE");
        if (!file || !*file) {
            f = stdout;
            return;
        }
        // NCCL's %h (host name) and %p (pid) in the file name.
        std::string path;
        for (const char* p = file; *p; ++p) {
            if (p[0] == '%' && p[1] == 'h') path += host(), ++p;
            else if (p[0] == '%' && p[1] == 'p') path += std::to_string(::getpid()), ++p;
            else path += *p;
        }
        f = std::fopen(path.c_str(), "w");
        if (!f) f = stdout;
    }
    static std::string host() {
        char h[256] = "";
        ::gethostname(h, sizeof h - 1);
        std::string s = h;
        return s.substr(0, s.find('.'));
    }
    void line(int dev, const char* kind, const std::string& text) {
        std::lock_guard<std::mutex> lock(g_log_mu);
        std::fprintf(f, "%s:%d:%ld [%d] NCCL %s %s\n", host().c_str(), int(::getpid()), long(::syscall(SYS_gettid)),
                     dev, kind, text.c_str());
        std::fflush(f);
    }
};

Log& log() {
    static Log l;
    return l;
}

void info(int dev, const std::string& text) {
    if (log().level >= 2) log().line(dev, "INFO", text);
}

void warn(int dev, const std::string& text) {
    {
        std::lock_guard<std::mutex> lock(g_log_mu);
        g_last_warn = text;
    }
    if (log().level >= 1) log().line(dev, "WARN", text);
}

std::string format(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

// ---- the shared control file ------------------------------------------------------------------

enum Net : int32_t { kNone = 0, kIb = 1, kSocket = 2 };

// What one rank says about itself; written before `joined` is set.
struct Member {
    int32_t joined;  // 1 once filled
    int32_t left;    // 1 once its communicator was destroyed
    int32_t dev, pid, net, nic, gdr, pad;
    double nic_busbw_gbps;     // its NIC's inter-node figure (net == kIb)
    double socket_busbw_gbps;  // its node's socket figure (net == kSocket)
    double intra_busbw_gbps;   // its GPU's scenario nccl_busbw_gbps
    char machine[64];
};

// One rank's progress through the all-reduces and the layout of its buffer file.
struct Progress {
    uint64_t posted, reduced, taken;  // all-reduces whose input / share / result it has handled
    uint64_t cap_bytes;               // each of the file's four regions (in 0, in 1, out 0, out 1)
    uint64_t count[2];
    int32_t type[2], op[2];
};

struct Ctl {
    int32_t nranks;  // set by the first rank to join
    int32_t failed;  // rank + 1 of a rank that gave up
    int32_t joined, destroyed;
    Member members[kMaxRanks];
    Progress progress[kMaxRanks];
};

template <class T>
std::atomic_ref<T> at(T& x) {
    return std::atomic_ref<T>(x);
}

struct IdBytes {
    char magic[8];
    char token[24];
    char base[96];
};
static_assert(sizeof(IdBytes) == NCCL_UNIQUE_ID_BYTES);

std::string folder_of(const IdBytes& b) {
    return std::string(b.base, strnlen(b.base, sizeof b.base)) + "/gpuvet-fake-nccl-" +
           std::string(b.token, strnlen(b.token, sizeof b.token));
}

std::string base_folder() {
    for (const char* v : {"GPUVET_FAKE_NCCL_DIR", "TMPDIR"})
        if (const char* d = std::getenv(v); d && *d) return d;
    return "/tmp";
}

// Maps `path` (created at `bytes` when missing or shorter; never shrunk) read-write and shared.
void* map_file(const std::string& path, std::size_t bytes, bool create) {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
    if (fd < 0) return nullptr;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || (std::size_t(st.st_size) < bytes && ::ftruncate(fd, off_t(bytes)) != 0)) {
        ::close(fd);
        return nullptr;
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    return p == MAP_FAILED ? nullptr : p;
}

double timeout_s() {
    const char* t = std::getenv("GPUVET_FAKE_NCCL_TIMEOUT_S");
    double v = t ? std::strtod(t, nullptr) : 0;
    return v > 0 ? v : 600;
}

// Polls `done` with a growing pause; false at the deadline or when a rank gave up or left.
template <class F>
ncclResult_t wait_until(Ctl* ctl, F done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s());
    for (int spin = 0;; ++spin) {
        if (done()) return ncclSuccess;
        if (at(ctl->failed).load()) return ncclRemoteError;
        if (std::chrono::steady_clock::now() > until) return ncclSystemError;
        if (spin < 50) std::this_thread::yield();
        else std::this_thread::sleep_for(std::chrono::microseconds(std::min(1000, 20 * (spin - 49))));
    }
}

// ---- the network a rank chooses -------------------------------------------------------------

struct Choice {
    Net net = kNone;
    int nic = -1;
    std::string nic_name;
    bool gdr = false;
    double nic_busbw_gbps = 0, socket_busbw_gbps = 0;
};

bool same(const char* a, const char* b) { return strcasecmp(a, b) == 0; }

std::string nic_list(const std::vector<fake::FabricPort>& nics) {
    std::string s;
    for (std::size_t i = 0; i < nics.size(); ++i)
        s += format(" [%zu]%s:%d/%s", i, nics[i].device.c_str(), nics[i].port, nics[i].roce ? "RoCE" : "IB");
    return s;
}

// NCCL's plugin order: IB, then Socket; NCCL_NET allows one by name. False: none initialised.
bool choose_network(int dev, Choice& c) {
    const fake::Scenario* sc = fake::cuda_hooks().sc();
    const fake::Fabric fab = sc ? sc->fabric : fake::Fabric{};
    const std::string root = fake::fabric_root();
    const std::vector<fake::FabricPort> nics = fake::active_nics(fake::read_fabric_ports(root));
    const char* want = std::getenv("NCCL_NET");
    const char* disable = std::getenv("NCCL_IB_DISABLE");
    const bool ib_allowed = !want || !*want || same(want, "IB");
    const bool socket_allowed = !want || !*want || same(want, "Socket");
    if (ib_allowed && !(disable && std::strcmp(disable, "1") == 0)) {
        if (fab.ib == "ok" && !nics.empty() && !fake::verbs_devices_present(root)) {
            // The devices are in sysfs, their /dev/infiniband files are not (a container without them).
            for (const fake::FabricPort& n : nics) {
                warn(dev, "Call to ibv_open_device failed");
                warn(dev, "NET/IB : Unable to open device " + n.device);
            }
            info(dev, "NET/IB : No device found.");
        } else if (fab.ib != "ok" || nics.empty()) {
            info(dev, "NET/IB : No device found.");
        } else {
            c.net = kIb;
            c.gdr = fab.gdr.value_or(fake::gdr_available(root));
            info(dev, "NET/IB : Using" + nic_list(nics) + " [RO]; OOB lo:127.0.0.1<0>");
            for (std::size_t i = 0; i < nics.size(); ++i)
                info(dev, format("NET/IB : GPU Direct RDMA %s for HCA %zu '%s'%s", c.gdr ? "Enabled" : "Disabled", i,
                                 nics[i].device.c_str(), c.gdr ? "" : " (no module)"));
            c.nic = dev % int(nics.size());
            const fake::FabricPort& n = nics[std::size_t(c.nic)];
            c.nic_name = n.device;
            bool slow = std::find(fab.slow_nics.begin(), fab.slow_nics.end(), n.device) != fab.slow_nics.end();
            c.nic_busbw_gbps = n.rate_gbitps / 8 * fab.efficiency * fab.node_factor * (slow ? fab.slow_nic_factor : 1) *
                               (c.gdr ? 1 : fab.gdr_off_factor);
        }
    }
    if (c.net == kNone && socket_allowed) {
        c.net = kSocket;
        c.socket_busbw_gbps = fab.socket_busbw_gbps;
        info(dev, "NET/Socket : Using [0]lo:127.0.0.1<0>");
    }
    if (c.net == kNone) {
        warn(dev, "Failed to initialize any NET plugin");
        return false;
    }
    info(dev, std::string("Using network ") + (c.net == kIb ? "IB" : "Socket"));
    return true;
}

}  // namespace

// ---- a communicator ----------------------------------------------------------------------------

struct NetComm {
    std::string folder;
    Ctl* ctl = nullptr;
    int rank = 0, n = 1, dev = 0;
    double busbw_gbps = 0;
    uint64_t seq = 0;
    std::vector<char*> maps;            // each rank's buffer file, as mapped here
    std::vector<uint64_t> mapped_caps;  // the cap each mapping was made with
    std::string net_name;
};

namespace {

std::string buffer_path(const NetComm& c, int r) { return c.folder + "/buf." + std::to_string(r); }

// Rank r's buffer file mapped at its current capacity (remapped when it grew).
char* buffer_of(NetComm& c, int r) {
    uint64_t cap = at(c.ctl->progress[r].cap_bytes).load();
    if (c.maps[r] && c.mapped_caps[r] == cap) return c.maps[r];
    if (c.maps[r]) ::munmap(c.maps[r], 4 * c.mapped_caps[r]);
    c.maps[r] = static_cast<char*>(map_file(buffer_path(c, r), 4 * cap, r == c.rank));
    c.mapped_caps[r] = c.maps[r] ? cap : 0;
    return c.maps[r];
}

// The communicator's bus bandwidth from every rank's figures (fake_nccl_net.hpp).
double comm_busbw(const Ctl& ctl, int n) {
    double intra = 1e300, socket = 1e300, nic = 1e300;
    bool any_socket = false;
    std::map<std::string, std::set<int>> nics_of;  // machine -> NICs its ranks use
    for (int r = 0; r < n; ++r) {
        const Member& m = ctl.members[r];
        intra = std::min(intra, m.intra_busbw_gbps);
        nics_of[m.machine].insert(m.nic);
        if (m.net == kSocket) any_socket = true, socket = std::min(socket, m.socket_busbw_gbps);
        else nic = std::min(nic, m.nic_busbw_gbps);
    }
    if (nics_of.size() < 2) return intra;
    if (any_socket) return std::min(intra, socket);
    std::size_t k = SIZE_MAX;
    for (auto& [machine, set] : nics_of) k = std::min(k, set.size());
    return std::min(intra, double(k) * nic);
}

// NCCL's ring channels of this rank: NET to another machine, P2P within one.
void log_channels(const NetComm& c, const Choice& ch) {
    const Member* m = c.ctl->members;
    const int next = (c.rank + 1) % c.n, prev = (c.rank + c.n - 1) % c.n;
    const std::string via = ch.net == kIb ? format("NET/IB/%d%s", ch.nic, ch.gdr ? "/GDRDMA" : "") : "NET/Socket/0";
    for (int k = 0; k < kChannels && c.n > 1; ++k) {
        if (std::strcmp(m[next].machine, m[c.rank].machine) != 0)
            info(c.dev, format("Channel %02d/0 : %d[%d] -> %d[%d] [send] via %s", k, c.rank, m[c.rank].dev, next,
                               m[next].dev, via.c_str()));
        else
            info(c.dev, format("Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read", k, c.rank, m[c.rank].dev, next,
                               m[next].dev));
        if (std::strcmp(m[prev].machine, m[c.rank].machine) != 0)
            info(c.dev, format("Channel %02d/0 : %d[%d] -> %d[%d] [receive] via %s", k, prev, m[prev].dev, c.rank,
                               m[c.rank].dev, via.c_str()));
    }
}

std::string machine_name() {
    const char* m = std::getenv("GPUVET_FAKE_MACHINE");
    return m && *m ? m : Log::host();
}

}  // namespace

ncclResult_t unique_id(ncclUniqueId* id) {
    if (!id) return ncclInvalidArgument;
    IdBytes b{};
    std::memcpy(b.magic, kIdMagic, sizeof kIdMagic);
    unsigned char rnd[8] = {};
    if (::getrandom(rnd, sizeof rnd, 0) != ssize_t(sizeof rnd)) return ncclSystemError;
    std::string token;
    for (unsigned char x : rnd) token += format("%02x", x);
    if (const char* cid = std::getenv("NCCL_COMM_ID"); cid && *cid) {
        // NCCL_COMM_ID names the bootstrap root: every rank's id is the same without a hand-out.
        std::uint64_t h = 1469598103934665603ull;
        for (const char* p = cid; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
        token = format("env%016llx", static_cast<unsigned long long>(h));
    }
    std::snprintf(b.token, sizeof b.token, "%s", token.c_str());
    const std::string base = base_folder();
    if (base.size() >= sizeof b.base) return ncclInvalidUsage;
    std::memcpy(b.base, base.data(), base.size());
    const std::string folder = folder_of(b);
    if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) return ncclSystemError;
    void* ctl = map_file(folder + "/ctl", sizeof(Ctl), true);
    if (!ctl) return ncclSystemError;
    ::munmap(ctl, sizeof(Ctl));
    std::memcpy(id, &b, sizeof b);
    return ncclSuccess;
}

ncclResult_t init_rank(NetComm** out, int nranks, const ncclUniqueId& id, int rank, int dev) {
    IdBytes b{};
    std::memcpy(&b, &id, sizeof b);
    if (!out || nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks ||
        std::memcmp(b.magic, kIdMagic, sizeof kIdMagic) != 0)
        return ncclInvalidArgument;
    const auto& h = fake::cuda_hooks();
    if (!h.ok() || !h.gpu(dev)) return ncclUnhandledCudaError;
    auto c = std::make_unique<NetComm>();
    c->folder = folder_of(b);
    c->rank = rank, c->n = nranks, c->dev = dev;
    ::mkdir(c->folder.c_str(), 0700);  // NCCL_COMM_ID: no rank made it before
    c->ctl = static_cast<Ctl*>(map_file(c->folder + "/ctl", sizeof(Ctl), true));
    if (!c->ctl) return ncclSystemError;
    Ctl* ctl = c->ctl;
    struct Unmap {  // the control file, unless the communicator keeps it
        Ctl* p;
        bool keep = false;
        ~Unmap() {
            if (!keep) ::munmap(p, sizeof(Ctl));
        }
    } unmap{c->ctl};
    int expected = 0;
    if (!at(ctl->nranks).compare_exchange_strong(expected, nranks) && expected != nranks) {
        warn(dev, format("Bootstrap : rank %d was given %d ranks, another rank %d", rank, nranks, expected));
        return ncclInvalidUsage;
    }
    Choice ch;
    if (!choose_network(dev, ch)) {
        at(ctl->failed).store(rank + 1);
        return ncclInvalidUsage;
    }
    Member& me = ctl->members[rank];
    if (at(me.joined).load()) {
        warn(dev, format("Bootstrap : rank %d joined twice", rank));
        return ncclInvalidUsage;
    }
    me.dev = dev, me.pid = int(::getpid()), me.net = ch.net, me.nic = ch.nic, me.gdr = ch.gdr;
    me.nic_busbw_gbps = ch.nic_busbw_gbps;
    me.socket_busbw_gbps = ch.socket_busbw_gbps;
    me.intra_busbw_gbps = h.gpu(dev)->nccl_busbw_gbps;
    std::snprintf(me.machine, sizeof me.machine, "%s", machine_name().c_str());
    at(me.joined).store(1);
    at(ctl->joined).fetch_add(1);
    if (ncclResult_t r = wait_until(ctl, [&] { return at(ctl->joined).load() >= nranks; }); r != ncclSuccess) {
        warn(dev, r == ncclSystemError ? "Bootstrap : timeout waiting for the other ranks"
                                       : "Bootstrap : another rank failed to initialise");
        return r;
    }
    c->busbw_gbps = comm_busbw(*ctl, nranks);
    c->net_name = ch.net == kIb ? "IB" : "Socket";
    c->maps.assign(std::size_t(nranks), nullptr);
    c->mapped_caps.assign(std::size_t(nranks), 0);
    unsigned long long comm_id = 1469598103934665603ull;  // FNV-1a of the token: NCCL prints a 64-bit comm id
    for (const char* p = b.token; *p && p < b.token + sizeof b.token; ++p)
        comm_id = (comm_id ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
    info(dev,
         format("comm %p rank %d nranks %d cudaDev %d - Init START", static_cast<void*>(c.get()), rank, nranks, dev));
    log_channels(*c, ch);
    info(dev, format("comm %p rank %d nranks %d cudaDev %d commId 0x%llx - Init COMPLETE", static_cast<void*>(c.get()),
                     rank, nranks, dev, comm_id));
    *out = c.release();
    unmap.keep = true;
    return ncclSuccess;
}

namespace {

float reduce(float a, float b, ncclRedOp_t op) {
    switch (op) {
        case ncclMax: return std::max(a, b);
        case ncclMin: return std::min(a, b);
        default: return a + b;
    }
}

// Waits until every rank's counter `field` reached `target`; a rank that left before is an error.
template <class Field>
ncclResult_t wait_all(NetComm& c, Field field, uint64_t target) {
    return wait_until(c.ctl, [&] {
        for (int r = 0; r < c.n; ++r)
            if (at(c.ctl->progress[r].*field).load() < target) {
                if (at(c.ctl->members[r].left).load()) at(c.ctl->failed).store(r + 1);
                return false;
            }
        return true;
    });
}

// This rank's buffer file holds `bytes` per region; growing moves the regions, so it waits until
// every rank is done with every earlier all-reduce.
ncclResult_t ensure_capacity(NetComm& c, uint64_t bytes) {
    Progress& me = c.ctl->progress[c.rank];
    if (at(me.cap_bytes).load() >= bytes) return ncclSuccess;
    if (ncclResult_t r = wait_all(c, &Progress::taken, c.seq - 1); r != ncclSuccess) return r;
    uint64_t cap = std::max<uint64_t>(bytes, 2 * at(me.cap_bytes).load());
    at(me.cap_bytes).store(cap);
    return buffer_of(c, c.rank) ? ncclSuccess : ncclSystemError;
}

}  // namespace

ncclResult_t all_reduce(NetComm* cp, const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                        CUstream stream) {
    NetComm& c = *cp;
    const auto& h = fake::cuda_hooks();
    if (type != ncclFloat32 || (op != ncclSum && op != ncclMin && op != ncclMax)) return ncclInvalidArgument;
    const uint64_t bytes = uint64_t(count) * 4;
    auto* in = static_cast<const float*>(h.host_view(reinterpret_cast<unsigned long long>(send), bytes));
    auto* res = static_cast<float*>(h.host_view(reinterpret_cast<unsigned long long>(recv), bytes));
    if (count > 0 && (!in || !res)) return ncclUnhandledCudaError;
    const uint64_t k = ++c.seq;
    const int s = int(k % 2);
    Progress& me = c.ctl->progress[c.rank];
    ncclResult_t r = ensure_capacity(c, std::max<uint64_t>(bytes, 4));
    if (r == ncclSuccess && k > 2) r = wait_all(c, &Progress::taken, k - 2);  // slot s is free again
    if (r != ncclSuccess) return r;
    const uint64_t cap = at(me.cap_bytes).load();
    char* mine = buffer_of(c, c.rank);
    if (!mine) return ncclSystemError;
    std::memcpy(mine + s * cap, in, bytes);
    me.count[s] = count, me.type[s] = type, me.op[s] = op;
    at(me.posted).store(k);
    if ((r = wait_all(c, &Progress::posted, k)) != ncclSuccess) return r;
    for (int j = 0; j < c.n; ++j) {
        const Progress& p = c.ctl->progress[j];
        if (p.count[s] != count || p.type[s] != type || p.op[s] != op) {
            warn(c.dev,
                 format("rank %d posted an all-reduce of %llu elements, rank %d of %llu (or another type)", c.rank,
                        static_cast<unsigned long long>(count), j, static_cast<unsigned long long>(p.count[s])));
            at(c.ctl->failed).store(c.rank + 1);
            return ncclInvalidUsage;
        }
    }
    // Reduce-scatter: this rank's share of every rank's input.
    auto share = [&](int j) { return std::make_pair(count * uint64_t(j) / c.n, count * uint64_t(j + 1) / c.n); };
    auto [lo, hi] = share(c.rank);
    float* out = reinterpret_cast<float*>(mine + (2 + s) * cap);
    for (int j = 0; j < c.n; ++j) {
        char* other = buffer_of(c, j);
        if (!other) return ncclSystemError;
        const float* x = reinterpret_cast<const float*>(other + s * c.mapped_caps[j]);
        for (uint64_t e = lo; e < hi; ++e) out[e - lo] = j == 0 ? x[e] : reduce(out[e - lo], x[e], op);
    }
    at(me.reduced).store(k);
    if ((r = wait_all(c, &Progress::reduced, k)) != ncclSuccess) return r;
    // All-gather: every rank's share into this rank's result.
    for (int j = 0; j < c.n; ++j) {
        auto [a, b] = share(j);
        char* other = buffer_of(c, j);
        if (!other) return ncclSystemError;
        std::memcpy(res + a, other + (2 + s) * c.mapped_caps[j], (b - a) * 4);
    }
    at(me.taken).store(k);
    const double seconds = double(bytes) * 2.0 * (c.n - 1) / c.n / (c.busbw_gbps * 1e9);
    return h.charge(stream, seconds) == 0 ? ncclSuccess : ncclUnhandledCudaError;
}

ncclResult_t destroy(NetComm* c) {
    if (!c) return ncclInvalidArgument;
    at(c->ctl->members[c->rank].left).store(1);
    const bool last = at(c->ctl->destroyed).fetch_add(1) + 1 == c->n;
    for (int r = 0; r < c->n; ++r)
        if (c->maps[r]) ::munmap(c->maps[r], 4 * c->mapped_caps[r]);
    ::munmap(c->ctl, sizeof(Ctl));
    if (last) {
        // The others have unmapped what they no longer need; mappings outlive the names anyway.
        for (int r = 0; r < c->n; ++r) ::unlink(buffer_path(*c, r).c_str());
        ::unlink((c->folder + "/ctl").c_str());
        ::rmdir(c->folder.c_str());
    }
    delete c;
    return ncclSuccess;
}

const char* last_error() {
    static thread_local std::string copy;
    std::lock_guard<std::mutex> lock(g_log_mu);
    copy = g_last_warn;
    return copy.c_str();
}

}  // namespace fakenccl
