// A libibverbs double, built on rdma-core's <infiniband/verbs.h> (so its structures are the real
// ones), for the RDMA write test between the nodes of tests/slurm. Its devices and ports are those of
// the sysfs fixture under GPUVET_ROOT (fake_fabric.hpp). An RDMA WRITE moves real bytes between the
// processes: a buffer registered for remote writes is remapped onto a shared-memory file named by
// its rkey, which the writer maps and copies into; a queue pair's state and its NIC's speed are in a
// small shared file named by its QPN, which the writer reads to find whether the other end is
// connected and how fast it takes data. Completions are paced to the slower NIC's data rate x
// [fabric] write_efficiency (x node_factor, x slow_nic_factor for slow_nics), so a figure above
// that is impossible and a slower copy shows as it is. Knobs ([fabric] of GPUVET_FAKE_SCENARIO,
// tests/fakes/README.md): fail_connect (those NICs' queue pairs fail to reach RTR), gdr = false
// (GPU memory is refused, as without nvidia-peermem), ib = "no_device" (no device opens),
// dmabuf_mr = false (ibv_reg_dmabuf_mr refuses). ibv_reg_dmabuf_mr maps the fd it is given (the fake
// libcuda's export: a shared-memory file holding the allocation's pages), so what a writer puts there
// is what cuMemcpyDtoH reads back. Built a second time with FAKE_VERBS_NO_DMABUF: an rdma-core older
// than v34, without ibv_reg_dmabuf_mr.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fake_fabric.hpp"
#include "fake_hooks.hpp"
#include "scenario.hpp"

#undef ibv_get_device_list
#undef ibv_reg_mr
#undef ibv_query_port

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using Clock = std::chrono::steady_clock;
// The MR file's first page: its address and length; for a DMA-BUF MR also the offset (at 16) and
// name (at 24) of the shared-memory file holding its bytes, which then do not follow the header.
constexpr std::size_t kHeader = 4096;
constexpr std::size_t kDataOffsetAt = 16, kDataNameAt = 24, kDataNameBytes = 256;

struct Device {
    ibv_device dev{};
    fake::FabricPort port;
};

struct Context {
    ibv_context ctx{};  // first: the caller's ibv_context* is this object
    Device* dev = nullptr;
    double limit_gbitps = 0;  // what this NIC moves, after encoding and the scenario's factors
    bool fail_connect = false;
};

struct Completion {
    Clock::time_point due;
    ibv_wc wc;
};
struct Cq {
    ibv_cq cq{};
    std::deque<Completion> pending;
    Clock::time_point last_due{};
};

// A queue pair's shared state: what the writer on another node reads.
struct QpShared {
    std::atomic<int> state;
    double limit_gbitps;
};
struct Qp {
    ibv_qp qp{};
    QpShared* shared = nullptr;
    std::uint32_t dest_qpn = 0;
};

struct Mr {
    ibv_mr mr{};
    unsigned char* host = nullptr;  // where the bytes are in this process
    bool remote = false;
    bool dmabuf = false;  // host is this double's own mapping of the dma-buf
};

std::mutex g_mu;
std::vector<Device*> g_devices;
std::map<std::uint32_t, Mr*> g_by_lkey;
// The other processes' queue pairs and buffers this process writes to, mapped once (the test's few).
std::map<std::uint32_t, QpShared*> g_remote_qps;
struct RemoteMr {
    unsigned char* map = nullptr;
    std::size_t bytes = 0;
};
std::map<std::uint32_t, RemoteMr> g_remote_mrs;

const fake::Fabric& fabric() {
    static fake::Fabric f = [] {
        std::string err;
        auto sc = fake::load_scenario_from_env(err);
        return sc ? sc->fabric : fake::Fabric{};
    }();
    return f;
}

std::string shm_name(const char* kind, std::uint32_t id) {
    return "/gpuvet-fakeverbs-" + std::to_string(::getuid()) + "-" + kind + "-" + std::to_string(id);
}

std::uint32_t random_id(std::uint32_t mask) {
    static std::mt19937 rng(std::random_device{}());
    std::uint32_t v = 0;
    while (v == 0) v = rng() & mask;
    return v;
}

bool listed(const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
}

// Maps the shared file of a queue pair (create: a new one) under its number.
QpShared* map_qp(std::uint32_t qpn, bool create) {
    const std::string name = shm_name("qp", qpn);
    int fd = ::shm_open(name.c_str(), create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0) return nullptr;
    if (create && ::ftruncate(fd, sizeof(QpShared)) != 0) {
        ::close(fd);
        return nullptr;
    }
    void* p = ::mmap(nullptr, sizeof(QpShared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    return p == MAP_FAILED ? nullptr : static_cast<QpShared*>(p);
}

int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
    auto* c = reinterpret_cast<Cq*>(cq);
    std::lock_guard lk(g_mu);
    int got = 0;
    const auto now = Clock::now();
    while (got < n && !c->pending.empty() && c->pending.front().due <= now) {
        wc[got++] = c->pending.front().wc;
        c->pending.pop_front();
    }
    return got;
}

void complete(Qp* q, const ibv_send_wr* wr, int status, double seconds) {
    auto* c = reinterpret_cast<Cq*>(q->qp.send_cq);
    const auto now = Clock::now();
    const auto start = std::max(now, c->last_due);
    c->last_due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    ibv_wc w{};
    w.wr_id = wr->wr_id;
    w.status = static_cast<ibv_wc_status>(status);
    w.opcode = IBV_WC_RDMA_WRITE;
    w.qp_num = q->qp.qp_num;
    c->pending.push_back({c->last_due, w});
}

// One RDMA WRITE: the bytes copied into the remote buffer's shared file now, its completion due
// when the slower NIC would have moved them.
int write_one(Qp* q, const ibv_send_wr* wr) {
    auto* ctx = reinterpret_cast<Context*>(q->qp.context);
    QpShared*& remote = g_remote_qps[q->dest_qpn];
    if (!remote) remote = map_qp(q->dest_qpn, false);
    const int remote_state = remote ? remote->state.load() : -1;
    const double remote_limit = remote ? remote->limit_gbitps : 0;
    if (remote_state != IBV_QPS_RTR && remote_state != IBV_QPS_RTS) {
        // The other end never answers: the retries run out (timeout 14, retry_cnt 7).
        complete(q, wr, IBV_WC_RETRY_EXC_ERR, 0.5);
        return 0;
    }
    std::uint64_t bytes = 0;
    for (int i = 0; i < wr->num_sge; ++i) bytes += wr->sg_list[i].length;
    const std::string name = shm_name("mr", wr->wr.rdma.rkey);
    int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) {
        complete(q, wr, IBV_WC_REM_ACCESS_ERR, 0);
        return 0;
    }
    struct stat st {};
    ::fstat(fd, &st);
    void* map = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
        complete(q, wr, IBV_WC_REM_ACCESS_ERR, 0);
        return 0;
    }
    std::uint64_t base = 0, length = 0, data_offset = 0;
    std::memcpy(&base, map, 8);
    std::memcpy(&length, static_cast<char*>(map) + 8, 8);
    std::memcpy(&data_offset, static_cast<char*>(map) + kDataOffsetAt, 8);
    char data_name[kDataNameBytes] = {};
    std::memcpy(data_name, static_cast<char*>(map) + kDataNameAt, kDataNameBytes - 1);
    // The bytes follow the header, or (a DMA-BUF MR) lie in the file the header names.
    unsigned char* data = static_cast<unsigned char*>(map) + kHeader;
    void* data_map = MAP_FAILED;
    if (data_name[0]) {
        const int dfd = ::shm_open(data_name, O_RDWR, 0600);
        if (dfd >= 0) {
            data_map = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, off_t(data_offset));
            ::close(dfd);
        }
        data = data_map == MAP_FAILED ? nullptr : static_cast<unsigned char*>(data_map);
    }
    int status = IBV_WC_SUCCESS;
    const std::uint64_t at = wr->wr.rdma.remote_addr;
    if (!data || at < base || at + bytes > base + length ||
        (!data_name[0] && kHeader + length > std::uint64_t(st.st_size))) {
        status = IBV_WC_REM_ACCESS_ERR;
    } else {
        unsigned char* dst = data + (at - base);
        for (int i = 0; i < wr->num_sge && status == IBV_WC_SUCCESS; ++i) {
            const ibv_sge& s = wr->sg_list[i];
            auto it = g_by_lkey.find(s.lkey);
            if (it == g_by_lkey.end() || s.addr < std::uint64_t(uintptr_t(it->second->mr.addr)) ||
                s.addr + s.length > std::uint64_t(uintptr_t(it->second->mr.addr)) + it->second->mr.length) {
                status = IBV_WC_LOC_PROT_ERR;
                break;
            }
            std::memcpy(dst, it->second->host + (s.addr - std::uint64_t(uintptr_t(it->second->mr.addr))), s.length);
            dst += s.length;
        }
    }
    if (data_map != MAP_FAILED) ::munmap(data_map, length);
    ::munmap(map, std::size_t(st.st_size));
    const double gbitps = std::min(ctx->limit_gbitps, remote_limit);
    complete(q, wr, status, status == IBV_WC_SUCCESS && gbitps > 0 ? double(bytes) * 8 / (gbitps * 1e9) : 0);
    return 0;
}

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    auto* q = reinterpret_cast<Qp*>(qp);
    std::lock_guard lk(g_mu);
    for (; wr; wr = wr->next) {
        if (q->shared->state.load() != IBV_QPS_RTS || wr->opcode != IBV_WR_RDMA_WRITE) {
            if (bad) *bad = wr;
            return EINVAL;
        }
        write_one(q, wr);
    }
    return 0;
}

}  // namespace

EXPORT ibv_device** ibv_get_device_list(int* num) {
    std::lock_guard lk(g_mu);
    if (g_devices.empty()) {
        for (const fake::FabricPort& p : fake::active_nics(fake::read_fabric_ports(fake::fabric_root()))) {
            auto* d = new Device;
            std::snprintf(d->dev.name, sizeof d->dev.name, "%s", p.device.c_str());
            d->dev.node_type = IBV_NODE_CA;
            d->dev.transport_type = IBV_TRANSPORT_IB;
            d->port = p;
            g_devices.push_back(d);
        }
    }
    auto** list = static_cast<ibv_device**>(std::calloc(g_devices.size() + 1, sizeof(ibv_device*)));
    for (std::size_t i = 0; i < g_devices.size(); ++i) list[i] = &g_devices[i]->dev;
    if (num) *num = int(g_devices.size());
    return list;
}

EXPORT void ibv_free_device_list(ibv_device** list) { std::free(list); }

EXPORT const char* ibv_get_device_name(ibv_device* d) { return d ? d->name : nullptr; }

EXPORT ibv_context* ibv_open_device(ibv_device* d) {
    const std::string root = fake::fabric_root();
    if (!d || fabric().ib != "ok" || !fake::verbs_devices_present(root)) {
        errno = ENODEV;
        return nullptr;
    }
    auto* dev = reinterpret_cast<Device*>(d);
    auto* c = new Context;
    c->ctx.device = d;
    c->ctx.ops.poll_cq = poll_cq;
    c->ctx.ops.post_send = post_send;
    c->dev = dev;
    const fake::Fabric& f = fabric();
    c->limit_gbitps = dev->port.data_gbitps * f.write_efficiency * f.node_factor *
                      (listed(f.slow_nics, dev->port.device) ? f.slow_nic_factor : 1);
    c->fail_connect = listed(f.fail_connect, dev->port.device);
    return &c->ctx;
}

EXPORT int ibv_close_device(ibv_context* c) {
    delete reinterpret_cast<Context*>(c);
    return 0;
}

// The exported symbol fills the older layout (rdma-core's _compat_ibv_port_attr): ibv_port_attr up
// to link_layer.
EXPORT int ibv_query_port(ibv_context* c, std::uint8_t port, _compat_ibv_port_attr* compat) {
    auto* ctx = reinterpret_cast<Context*>(c);
    if (port != ctx->dev->port.port) return EINVAL;
    auto* a = reinterpret_cast<ibv_port_attr*>(compat);
    std::memset(a, 0, offsetof(ibv_port_attr, link_layer) + 1);
    a->state = IBV_PORT_ACTIVE;
    a->max_mtu = a->active_mtu = IBV_MTU_4096;
    a->lid = static_cast<std::uint16_t>(ctx->dev->port.roce ? 0 : 1);
    a->link_layer = ctx->dev->port.roce ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    a->phys_state = 5;
    return 0;
}

EXPORT int ibv_query_gid(ibv_context*, std::uint8_t, int index, ibv_gid* g) {
    std::memset(g, 0, sizeof *g);
    g->raw[0] = 0xfe, g->raw[1] = 0x80, g->raw[15] = static_cast<std::uint8_t>(index + 1);
    return 0;
}

EXPORT ibv_pd* ibv_alloc_pd(ibv_context* c) {
    auto* pd = new ibv_pd{};
    pd->context = c;
    return pd;
}

EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
    delete pd;
    return 0;
}

EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access) {
    if (!pd || !addr || length == 0) {
        errno = EINVAL;
        return nullptr;
    }
    // GPU memory (the fake libcuda's device pointers): its host view, and only with GPUDirect RDMA.
    unsigned char* host = static_cast<unsigned char*>(addr);
    const auto& h = fake::cuda_hooks();
    if (h.ok()) {
        if (void* v = h.host_view(reinterpret_cast<unsigned long long>(addr), length)) {
            const fake::Fabric& f = fabric();
            if (!f.gdr.value_or(fake::gdr_available(fake::fabric_root()))) {
                errno = EFAULT;  // what ibv_reg_mr says for device memory without a peer-memory client
                return nullptr;
            }
            host = static_cast<unsigned char*>(v);
        }
    }
    auto* m = new Mr;
    m->mr.context = pd->context;
    m->mr.pd = pd;
    m->mr.addr = addr;
    m->mr.length = length;
    m->host = host;
    std::lock_guard lk(g_mu);
    m->mr.lkey = m->mr.rkey = random_id(0xffffffffu);
    if (access & IBV_ACCESS_REMOTE_WRITE) {
        // The buffer's pages become a shared file's, so a writer in another process reaches them.
        const long page = ::sysconf(_SC_PAGESIZE);
        if (uintptr_t(host) % std::uintptr_t(page) != 0 || length % std::size_t(page) != 0) {
            delete m;
            errno = EINVAL;
            return nullptr;
        }
        const std::string name = shm_name("mr", m->mr.rkey);
        int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ::ftruncate(fd, off_t(kHeader + length)) != 0 ||
            ::pwrite(fd, host, length, off_t(kHeader)) != ssize_t(length)) {
            if (fd >= 0) ::close(fd), ::shm_unlink(name.c_str());
            delete m;
            errno = ENOMEM;
            return nullptr;
        }
        const std::uint64_t head[2] = {std::uint64_t(uintptr_t(addr)), length};
        (void)!::pwrite(fd, head, sizeof head, 0);
        void* p = ::mmap(host, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off_t(kHeader));
        ::close(fd);
        if (p == MAP_FAILED) {
            ::shm_unlink(name.c_str());
            delete m;
            errno = ENOMEM;
            return nullptr;
        }
        m->remote = true;
    }
    g_by_lkey[m->mr.lkey] = m;
    return &m->mr;
}

#ifndef FAKE_VERBS_NO_DMABUF
// The NIC's view of a dma-buf: the fd's pages from `offset`, at the addresses from `iova`. A buffer
// for remote writes gets an MR file whose header names the dma-buf's shared-memory file, so the
// writer in another process copies straight into those pages.
EXPORT ibv_mr* ibv_reg_dmabuf_mr(ibv_pd* pd, std::uint64_t offset, std::size_t length, std::uint64_t iova, int fd,
                                 int access) {
    const std::uint64_t page = std::uint64_t(::sysconf(_SC_PAGESIZE));
    if (!pd || fd < 0 || length == 0 || offset % page != 0 || length % page != 0) {
        errno = EINVAL;
        return nullptr;
    }
    if (!fabric().dmabuf_mr) {
        errno = EOPNOTSUPP;  // what a NIC driver without dma-buf support answers
        return nullptr;
    }
    // The file behind the fd, by name: only the fake libcuda's shared-memory exports are reachable.
    char link[64], target[PATH_MAX] = {};
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(link, target, sizeof target - 1);
    const std::string shm_dir = "/dev/shm/";
    const std::string path = n > 0 ? std::string(target, std::size_t(n)) : std::string();
    if (path.rfind(shm_dir, 0) != 0 || path.size() - shm_dir.size() + 1 >= kDataNameBytes) {
        errno = EINVAL;
        return nullptr;
    }
    char data_name[kDataNameBytes] = {};
    std::snprintf(data_name, sizeof data_name, "/%s", path.c_str() + shm_dir.size());
    void* host = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset));
    if (host == MAP_FAILED) {
        errno = EINVAL;
        return nullptr;
    }
    auto* m = new Mr;
    m->mr.context = pd->context;
    m->mr.pd = pd;
    m->mr.addr = reinterpret_cast<void*>(iova);
    m->mr.length = length;
    m->host = static_cast<unsigned char*>(host);
    m->dmabuf = true;
    std::lock_guard lk(g_mu);
    m->mr.lkey = m->mr.rkey = random_id(0xffffffffu);
    if (access & IBV_ACCESS_REMOTE_WRITE) {
        const std::string name = shm_name("mr", m->mr.rkey);
        int mfd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        char head[kHeader] = {};
        const std::uint64_t base_len_off[3] = {iova, length, offset};
        std::memcpy(head, base_len_off, sizeof base_len_off);
        std::memcpy(head + kDataNameAt, data_name, sizeof data_name);
        if (mfd < 0 || ::pwrite(mfd, head, sizeof head, 0) != ssize_t(sizeof head)) {
            if (mfd >= 0) ::close(mfd), ::shm_unlink(name.c_str());
            ::munmap(host, length);
            delete m;
            errno = ENOMEM;
            return nullptr;
        }
        ::close(mfd);
        m->remote = true;
    }
    g_by_lkey[m->mr.lkey] = m;
    return &m->mr;
}
#endif

EXPORT int ibv_dereg_mr(ibv_mr* mr) {
    auto* m = reinterpret_cast<Mr*>(mr);
    std::lock_guard lk(g_mu);
    g_by_lkey.erase(m->mr.lkey);
    if (m->remote) ::shm_unlink(shm_name("mr", m->mr.rkey).c_str());  // the pages stay the caller's
    if (m->dmabuf) ::munmap(m->host, m->mr.length);                   // the dma-buf stays the exporter's
    delete m;
    return 0;
}

EXPORT ibv_cq* ibv_create_cq(ibv_context* c, int cqe, void* user, ibv_comp_channel* ch, int vector) {
    auto* q = new Cq;
    q->cq.context = c;
    q->cq.cq_context = user;
    q->cq.channel = ch;
    q->cq.cqe = cqe;
    q->cq.comp_events_completed = 0;
    (void)vector;
    return &q->cq;
}

EXPORT int ibv_destroy_cq(ibv_cq* cq) {
    delete reinterpret_cast<Cq*>(cq);
    return 0;
}

EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
    if (!pd || !init || init->qp_type != IBV_QPT_RC) {
        errno = EINVAL;
        return nullptr;
    }
    auto* q = new Qp;
    q->qp.context = pd->context;
    q->qp.pd = pd;
    q->qp.send_cq = init->send_cq;
    q->qp.recv_cq = init->recv_cq;
    q->qp.qp_type = IBV_QPT_RC;
    q->qp.state = IBV_QPS_RESET;
    std::lock_guard lk(g_mu);
    for (int tries = 0; tries < 16 && !q->shared; ++tries) {
        q->qp.qp_num = random_id(0xffffff);
        q->shared = map_qp(q->qp.qp_num, true);
    }
    if (!q->shared) {
        delete q;
        errno = ENOMEM;
        return nullptr;
    }
    q->shared->state = IBV_QPS_RESET;
    q->shared->limit_gbitps = reinterpret_cast<Context*>(pd->context)->limit_gbitps;
    return &q->qp;
}

EXPORT int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* a, int mask) {
    auto* q = reinterpret_cast<Qp*>(qp);
    auto* ctx = reinterpret_cast<Context*>(qp->context);
    if (!(mask & IBV_QP_STATE)) return 0;
    const int from = q->shared->state.load(), to = a->qp_state;
    const bool step = (from == IBV_QPS_RESET && to == IBV_QPS_INIT) || (from == IBV_QPS_INIT && to == IBV_QPS_RTR) ||
                      (from == IBV_QPS_RTR && to == IBV_QPS_RTS);
    if (!step) return EINVAL;
    if (to == IBV_QPS_RTR) {
        if (ctx->fail_connect || !(mask & IBV_QP_DEST_QPN) || !(mask & IBV_QP_AV)) return EINVAL;
        q->dest_qpn = a->dest_qp_num;
    }
    q->shared->state = to;
    qp->state = static_cast<ibv_qp_state>(to);
    return 0;
}

EXPORT int ibv_destroy_qp(ibv_qp* qp) {
    auto* q = reinterpret_cast<Qp*>(qp);
    std::lock_guard lk(g_mu);
    ::munmap(q->shared, sizeof(QpShared));
    ::shm_unlink(shm_name("qp", qp->qp_num).c_str());
    delete q;
    return 0;
}
