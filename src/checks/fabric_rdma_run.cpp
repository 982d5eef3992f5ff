#include "checks/fabric_rdma_run.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "checks/host_fabric.hpp"
#include "checks/host_fabric_judge.hpp"
#include "core/error.hpp"
#include "gpu/bindings/verbs_api.hpp"
#include "gpu/session.hpp"
#include "host/fabric.hpp"
#include "host/rendezvous.hpp"

namespace gpuvet::fabric_rdma {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kCompletionWaitS = 20;  // no completion for this long: the link is dead

struct Failure {
    std::string text;
};

std::string errno_text(int e) { return e ? std::string(std::strerror(e)) : std::string("no reason given"); }

// The rail's NIC on this node: host.fabric's pairing for this GPU (or the rail-th GPU).
struct RailNic {
    std::string name;
    std::optional<double> rate_gbitps;
    std::string speed;
    bool peermem = false, dmabuf = false;
};

std::optional<RailNic> rail_nic(const std::filesystem::path& root, const std::string& bus_id, int rail) {
    FabricFacts f = collect_fabric(root, [] { return std::optional<std::string>(); });
    std::vector<GpuNicPair> pairs = pair_gpus_with_nics(f);
    std::optional<std::size_t> gpu;
    for (std::size_t g = 0; g < f.gpus.size(); ++g)
        if (!bus_id.empty() && f.gpus[g].bdf == bus_id) gpu = g;
    if (!gpu && rail >= 0 && std::size_t(rail) < f.gpus.size()) gpu = std::size_t(rail);
    if (!gpu || *gpu >= pairs.size() || !pairs[*gpu].nic) return std::nullopt;
    const RdmaDevice& d = f.devices[*pairs[*gpu].nic];
    RailNic out;
    out.name = d.name;
    for (const RdmaPort& p : d.ports)
        if (p.active() && p.rate) {
            out.rate_gbitps = p.rate->gbitps;
            out.speed = p.rate->speed_name;
            break;
        }
    out.peermem = !f.peermem_evidence.empty();
    out.dmabuf = dmabuf_possible(f);
    return out;
}

std::string gid_hex(const ibv::gid& g) {
    std::string s;
    for (unsigned char b : g.raw) s += "0123456789abcdef"[b >> 4], s += "0123456789abcdef"[b & 15];
    return s;
}

ibv::gid gid_of(const std::string& hex) {
    ibv::gid g{};
    for (std::size_t i = 0; i + 1 < hex.size() && i / 2 < sizeof g.raw; i += 2)
        g.raw[i / 2] = static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16));
    return g;
}

// The registered buffer: GPU memory through nvidia-peermem (ibv_reg_mr on the device pointer), else
// GPU memory through DMA-BUF (the allocation exported as a dma-buf fd, ibv_reg_dmabuf_mr), else host
// memory. `why` gets the path taken and every step that refused, with its reason.
class Buffer {
public:
    Buffer(const VerbsApi& v, ibv::pd* pd, GpuSession* gpu, bool peermem, bool dmabuf, std::string& why) : v_(v) {
        const int access = ibv::kAccessLocalWrite | ibv::kAccessRemoteWrite;
        std::vector<std::string> refused;
        if (gpu && peermem) {
            dev_ = gpu->alloc(kGpuBytes);
            mr_ = v_.ibv_reg_mr(pd, reinterpret_cast<void*>(dev_.ptr()), kBufferBytes, access);
            if (mr_) {
                gpu_ = gpu;
                why = "GPUDirect RDMA through nvidia-peermem: GPU memory";
                return;
            }
            refused.push_back(
                "ibv_reg_mr refused GPU memory: GPUDirect RDMA does not work although nvidia-peermem is there "
                "(check dmesg, and that nvidia-peermem matches the driver)");
        }
        if (gpu && dmabuf) {
            if (register_dmabuf(pd, *gpu, access, refused)) {
                gpu_ = gpu;
                refused.push_back("GPUDirect RDMA through DMA-BUF: GPU memory");
                why = join(refused);
                return;
            }
        }
        dev_.reset();
        if (!refused.empty()) why = join(refused) + ": host memory";
        // Page-aligned, as NICs register whole pages.
        void* p = ::mmap(nullptr, kBufferBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw Failure{"no host memory for the RDMA buffer"};
        host_ = static_cast<unsigned char*>(p);
        mr_ = v_.ibv_reg_mr(pd, host_, kBufferBytes, access);
        if (!mr_) throw Failure{"ibv_reg_mr on host memory failed (check ulimit -l, the locked-memory limit)"};
    }
    ~Buffer() {
        if (mr_) v_.ibv_dereg_mr(mr_);
        if (dmabuf_fd_ >= 0) ::close(dmabuf_fd_);  // after the NIC let go of the pages
        if (host_) ::munmap(host_, kBufferBytes);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    bool on_gpu() const { return gpu_ != nullptr; }
    std::uint64_t addr() const { return on_gpu() ? std::uint64_t(dev_.ptr()) : std::uint64_t(uintptr_t(host_)); }
    const ibv::mr_view& mr() const { return ibv::view(mr_); }

    void fill(int node, int rail) {
        std::vector<unsigned char> b(kBufferBytes);
        for (std::uint64_t i = 0; i < b.size(); ++i) b[i] = fill_byte(node, rail, i);
        if (on_gpu()) gpu_->upload(dev_.ptr(), b.data(), b.size());
        else std::memcpy(host_, b.data(), b.size());
    }
    // Bytes that differ from what the writer on `node` put there.
    std::uint64_t wrong(int node, int rail) const {
        std::vector<unsigned char> b(kBufferBytes);
        if (on_gpu()) gpu_->download(b.data(), dev_.ptr(), b.size());
        else std::memcpy(b.data(), host_, b.size());
        std::uint64_t n = 0;
        for (std::uint64_t i = 0; i < b.size(); ++i) n += b[i] != fill_byte(node, rail, i);
        return n;
    }

private:
    // The GPU allocation: whole 2 MiB pages, as the export takes host-page multiples and GPU memory is
    // mapped in 2 MiB pages.
    static constexpr std::uint64_t kGpuBytes =
        (kBufferBytes + (std::uint64_t(2) << 20) - 1) & ~((std::uint64_t(2) << 20) - 1);

    static std::string join(const std::vector<std::string>& parts) {
        std::string out;
        for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
        return out;
    }

    // GPU memory through DMA-BUF; false with the refusing step's reason added to `refused`.
    bool register_dmabuf(ibv::pd* pd, const GpuSession& gpu, int access, std::vector<std::string>& refused) {
        if (!v_.ibv_reg_dmabuf_mr) {
            refused.push_back("libibverbs at " + v_.path + " lacks ibv_reg_dmabuf_mr (rdma-core older than v34)");
            return false;
        }
        if (!dev_) dev_ = gpu.alloc(kGpuBytes);
        const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
        if (page == 0 || dev_.ptr() % page != 0) {
            refused.push_back("the GPU allocation is not page-aligned, which a DMA-BUF export needs");
            return false;
        }
        GpuSession::DmaBuf buf = gpu.export_dmabuf(dev_.ptr(), kGpuBytes);
        if (buf.fd < 0) {
            refused.push_back(buf.why);
            return false;
        }
        // The iova is the device pointer, so the writes' addresses are those the GPU path would use.
        mr_ = v_.ibv_reg_dmabuf_mr(pd, 0, kBufferBytes, std::uint64_t(dev_.ptr()), buf.fd, access);
        if (!mr_) {
            ::close(buf.fd);
            refused.push_back(
                "ibv_reg_dmabuf_mr refused the GPU's DMA-BUF (rdma-core older than v34, or the NIC driver lacks "
                "dma-buf)");
            return false;
        }
        dmabuf_fd_ = buf.fd;
        return true;
    }

    const VerbsApi& v_;
    GpuSession* gpu_ = nullptr;
    DeviceBuffer dev_;
    int dmabuf_fd_ = -1;
    unsigned char* host_ = nullptr;
    ibv::mr* mr_ = nullptr;
};

// The device, its protection domain, one completion queue and the two queue pairs (writing to the
// next node, read from by the previous one).
class Endpoint {
public:
    Endpoint(const VerbsApi& v, const std::string& nic) : v_(v) {
        int n = 0;
        ibv::device** list = v_.ibv_get_device_list(&n);
        if (!list) throw Failure{"ibv_get_device_list failed"};
        ibv::device* dev = nullptr;
        std::string names;
        for (int i = 0; i < n && list[i]; ++i) {
            const char* name = v_.ibv_get_device_name(list[i]);
            if (name && nic == name) dev = list[i];
            names += (names.empty() ? "" : ", ") + std::string(name ? name : "?");
        }
        if (dev) ctx_ = v_.ibv_open_device(dev);
        v_.ibv_free_device_list(list);
        if (!dev)
            throw Failure{"libibverbs lists no device " + nic + " (it lists: " + (names.empty() ? "none" : names) +
                          "): the container lacks /dev/infiniband, or the NIC's driver is not loaded"};
        if (!ctx_) throw Failure{"ibv_open_device " + nic + " failed (may this user open /dev/infiniband/uverbs*?)"};
        for (std::uint8_t p = 1; p <= 2 && !port_; ++p) {
            ibv::port_attr a{};
            if (v_.ibv_query_port(ctx_, p, &a) == 0 && a.state == ibv::kPortActive) port_ = p, attr_ = a;
        }
        if (!port_) throw Failure{nic + " has no active port (ibv_query_port)"};
        if (roce()) {
            const char* idx = std::getenv("NCCL_IB_GID_INDEX");  // the GID NCCL would use
            gid_index_ = idx && *idx ? std::atoi(idx) : 0;
            if (v_.ibv_query_gid(ctx_, port_, gid_index_, &gid_) != 0)
                throw Failure{"ibv_query_gid " + nic + " index " + std::to_string(gid_index_) + " failed"};
        }
        pd_ = v_.ibv_alloc_pd(ctx_);
        if (!pd_) throw Failure{"ibv_alloc_pd on " + nic + " failed"};
        cq_ = v_.ibv_create_cq(ctx_, 4 * kQueueDepth, nullptr, nullptr, 0);
        if (!cq_) throw Failure{"ibv_create_cq on " + nic + " failed"};
        write_ = make_qp(nic);
        read_ = make_qp(nic);
    }
    ~Endpoint() {
        if (write_) v_.ibv_destroy_qp(write_);
        if (read_) v_.ibv_destroy_qp(read_);
        if (cq_) v_.ibv_destroy_cq(cq_);
        if (pd_) v_.ibv_dealloc_pd(pd_);
        if (ctx_) v_.ibv_close_device(ctx_);
    }
    Endpoint(const Endpoint&) = delete;
    Endpoint& operator=(const Endpoint&) = delete;

    bool roce() const { return attr_.link_layer == ibv::kLinkLayerEthernet; }
    ibv::pd* pd() const { return pd_; }
    ibv::qp* write_qp() const { return write_; }
    ibv::qp* read_qp() const { return read_; }

    QpInfo info(const ibv::qp* q, std::uint32_t psn) const {
        QpInfo i;
        i.lid = attr_.lid;
        if (roce()) i.gid_hex = gid_hex(gid_);
        i.qpn = ibv::view(q).qp_num;
        i.psn = psn;
        return i;
    }

    // INIT, RTR (to the peer's queue pair) and, for the writing end, RTS; the errno text on failure.
    std::optional<std::string> connect(ibv::qp* q, const QpInfo& peer, std::uint32_t my_psn, bool send) {
        ibv::qp_attr a{};
        a.qp_state = ibv::kQpsInit;
        a.port_num = port_;
        a.qp_access_flags = ibv::kAccessLocalWrite | ibv::kAccessRemoteWrite;
        if (int e = v_.ibv_modify_qp(q, &a, ibv::kQpState | ibv::kQpPkeyIndex | ibv::kQpPort | ibv::kQpAccessFlags))
            return "ibv_modify_qp to INIT failed: " + errno_text(e);
        a = {};
        a.qp_state = ibv::kQpsRtr;
        a.path_mtu = std::min(attr_.active_mtu, ibv::kMtu4096);
        a.dest_qp_num = peer.qpn;
        a.rq_psn = peer.psn;
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        a.ah.dlid = peer.lid;
        a.ah.port_num = port_;
        if (roce()) {
            a.ah.is_global = 1;
            a.ah.grh.dgid = gid_of(peer.gid_hex);
            a.ah.grh.sgid_index = static_cast<std::uint8_t>(gid_index_);
            a.ah.grh.hop_limit = 64;
        }
        if (int e = v_.ibv_modify_qp(q, &a,
                                     ibv::kQpState | ibv::kQpAv | ibv::kQpPathMtu | ibv::kQpDestQpn | ibv::kQpRqPsn |
                                         ibv::kQpMaxDestRdAtomic | ibv::kQpMinRnrTimer))
            return "ibv_modify_qp to RTR failed: " + errno_text(e);
        if (!send) return std::nullopt;
        a = {};
        a.qp_state = ibv::kQpsRts;
        a.timeout = 14;  // 4.096 us x 2^14 = 67 ms per try, 7 tries (perftest's defaults)
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.sq_psn = my_psn;
        a.max_rd_atomic = 1;
        if (int e = v_.ibv_modify_qp(q, &a,
                                     ibv::kQpState | ibv::kQpTimeout | ibv::kQpRetryCnt | ibv::kQpRnrRetry |
                                         ibv::kQpSqPsn | ibv::kQpMaxQpRdAtomic))
            return "ibv_modify_qp to RTS failed: " + errno_text(e);
        return std::nullopt;
    }

    // Writes kMessageBytes messages from `src` to the peer's buffer, kQueueDepth in flight, for at
    // least `seconds` after a warm-up; the bytes written in the timed part and its length.
    std::pair<std::uint64_t, double> write(const Buffer& src, const QpInfo& peer, double seconds,
                                           const std::atomic<bool>* stop) {
        const ibv::context_view& ops = ibv::view(ctx_);
        const std::uint64_t slots = std::min(kBufferBytes, peer.bytes) / kMessageBytes;
        if (slots == 0) throw Failure{"the reading end's buffer is smaller than one message"};
        std::uint64_t posted = 0, done = 0;
        auto post = [&] {
            const std::uint64_t off = (posted % slots) * kMessageBytes;
            ibv::sge sg{src.addr() + off, std::uint32_t(kMessageBytes), src.mr().lkey};
            ibv::send_wr wr{};
            wr.wr_id = posted;
            wr.sg_list = &sg;
            wr.num_sge = 1;
            wr.opcode = ibv::kWrRdmaWrite;
            wr.send_flags = ibv::kSendSignaled;
            wr.wr.rdma.remote_addr = peer.addr + off;
            wr.wr.rdma.rkey = peer.rkey;
            ibv::send_wr* bad = nullptr;
            if (int e = ops.post_send(write_, &wr, &bad)) throw Failure{"ibv_post_send failed: " + errno_text(e)};
            ++posted;
        };
        // Between empty polls the rank naps for a quarter of a message's time so far (none at 400
        // Gbit/s, where 16 writes in flight are 320 us of work; about 1 ms on a slow link), so it keeps
        // the queue full without spinning a core that the other ranks of the node need.
        const auto t0 = Clock::now();
        auto reap = [&] {
            ibv::wc wc[kQueueDepth];
            auto last = Clock::now();
            for (;;) {
                const int n = ops.poll_cq(cq_, kQueueDepth, wc);
                if (n < 0) throw Failure{"ibv_poll_cq failed"};
                for (int i = 0; i < n; ++i)
                    if (wc[i].status != ibv::kWcSuccess)
                        throw Failure{"a write completed with status " + std::to_string(wc[i].status) +
                                      (wc[i].status == ibv::kWcRetryExcErr
                                           ? " (IBV_WC_RETRY_EXC_ERR: the other end never answered)"
                                           : "")};
                done += std::uint64_t(n);
                if (n > 0) return;
                if (stop && stop->load()) throw Interrupted{};
                const auto now = Clock::now();
                if (std::chrono::duration<double>(now - last).count() > kCompletionWaitS)
                    throw Failure{"no write completed in " + std::to_string(int(kCompletionWaitS)) + " s"};
                const double per_msg_s = done > 0 ? std::chrono::duration<double>(now - t0).count() / double(done) : 0;
                std::this_thread::sleep_for(std::chrono::duration<double>(std::min(1e-3, per_msg_s / 4)));
            }
        };
        auto run = [&](std::uint64_t at_least, double for_s) {
            const auto start = Clock::now();
            const std::uint64_t first = done;
            for (;;) {
                const bool enough =
                    done - first >= at_least && std::chrono::duration<double>(Clock::now() - start).count() >= for_s;
                if (!enough)
                    while (posted - done < std::uint64_t(kQueueDepth)) post();
                if (posted == done) break;
                reap();
            }
            return std::pair((done - first) * kMessageBytes,
                             std::chrono::duration<double>(Clock::now() - start).count());
        };
        run(2 * kQueueDepth, 0);  // warm-up: the queue pair and the NIC's caches
        return run(4 * kQueueDepth, seconds);
    }

private:
    ibv::qp* make_qp(const std::string& nic) {
        ibv::qp_init_attr init{};
        init.send_cq = cq_;
        init.recv_cq = cq_;
        init.cap.max_send_wr = kQueueDepth;
        init.cap.max_recv_wr = 1;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        init.qp_type = ibv::kQptRc;
        ibv::qp* q = v_.ibv_create_qp(pd_, &init);
        if (!q) throw Failure{"ibv_create_qp on " + nic + " failed"};
        return q;
    }

    const VerbsApi& v_;
    ibv::context* ctx_ = nullptr;
    ibv::pd* pd_ = nullptr;
    ibv::cq* cq_ = nullptr;
    ibv::qp *write_ = nullptr, *read_ = nullptr;
    std::uint8_t port_ = 0;
    ibv::port_attr attr_{};
    ibv::gid gid_{};
    int gid_index_ = 0;
};

std::string key(int rail, int from, int to, const char* what) {
    return "rdma." + std::to_string(rail) + "." + std::to_string(from) + "." + std::to_string(to) + "." + what;
}

// One rank's part of its rail's ring: it writes to the next node and is written to by the previous
// one. Each step posts to the rendezvous board what the other ends wait for, so a rank that skips
// or fails still answers every key and no node waits for a message that never comes.
class LinkRun {
public:
    LinkRun(const RunSettings& s, GpuSession* gpu, const std::atomic<bool>* stop)
        : s_(s),
          gpu_(gpu),
          stop_(stop),
          next_((s.node_index + 1) % s.nodes),
          prev_((s.node_index + s.nodes - 1) % s.nodes),
          deadline_{Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s.wait_s)),
                    stop} {
        std::mt19937 rng(std::random_device{}());
        write_psn_ = rng() & 0xffffff, read_psn_ = rng() & 0xffffff;
        link_.rail = s.rail;
        link_.from_node = s.node;
        link_.message_bytes = kMessageBytes;
    }

    RdmaLink run() {
        set_up();
        exchange();
        const bool reading = connect_reading_end();
        const bool wrote = write();
        verify(reading, wrote);
        return link_;
    }

private:
    void put(const std::string& k, const std::string& v) {
        board_put(s_.board_host, s_.board_port, s_.token, k, v, deadline_);
    }
    std::string get(const std::string& k) { return board_get(s_.board_host, s_.board_port, s_.token, k, deadline_); }
    QpInfo peer_info(const std::string& k) {
        std::optional<QpInfo> q = parse_qp_info(get(k));
        if (!q)
            throw runtime_error("the board's " + k + " is not a queue pair's details",
                                "run the same gpuvet on every node");
        return *q;
    }

    // This rank's end: nothing past a reason (skipped) or a failure (error) is set up.
    void set_up() {
        nic_ = rail_nic(s_.root, s_.gpu_bus_id, s_.rail);
        if (!nic_) {
            skipped_ = "no RDMA NIC with an active port near this GPU on " + s_.node;
        } else {
            link_.from_nic = nic_->name;
            link_.from_gbitps = nic_->rate_gbitps;
            link_.from_speed = nic_->speed;
            verbs_ = VerbsApi::load();
            if (!verbs_.ok()) skipped_ = verbs_.error;
        }
        if (!skipped_.empty()) return;
        try {
            ep_ = std::make_unique<Endpoint>(verbs_, nic_->name);
            // Buffer overwrites this with the path it took whenever it tried one.
            link_.memory_why = !gpu_ ? "no GPU for this rank: host memory"
                                     : "no GPUDirect RDMA on this node (neither nvidia-peermem nor DMA-BUF, which "
                                       "needs the open kernel module and Linux 5.12 or later): host memory";
            send_ = std::make_unique<Buffer>(verbs_, ep_->pd(), gpu_, nic_->peermem, nic_->dmabuf, link_.memory_why);
            recv_ = std::make_unique<Buffer>(verbs_, ep_->pd(), gpu_, nic_->peermem, nic_->dmabuf, link_.memory_why);
            link_.memory = send_->on_gpu() && recv_->on_gpu() ? "GPU" : "host";
            send_->fill(s_.node_index, s_.rail);
            mine_w_ = ep_->info(ep_->write_qp(), write_psn_);
            mine_r_ = ep_->info(ep_->read_qp(), read_psn_);
            mine_r_.rkey = recv_->mr().rkey, mine_r_.addr = recv_->addr(), mine_r_.bytes = kBufferBytes;
        } catch (const Failure& f) {
            error_ = f.text;
        } catch (const Error& e) {
            error_ = e.what();
        }
    }

    // Both queue pairs' details out, the neighbours' in.
    void exchange() {
        for (QpInfo* q : {&mine_w_, &mine_r_}) {
            q->node = s_.node;
            q->nic = nic_ ? nic_->name : "";
            q->rate_gbitps = nic_ ? nic_->rate_gbitps : std::nullopt;
            q->speed = nic_ ? nic_->speed : "";
            q->skipped = !skipped_.empty() ? "skip:" + skipped_ : !error_.empty() ? "error:" + error_ : "";
        }
        put(key(s_.rail, s_.node_index, next_, "w"), to_text(mine_w_));
        put(key(s_.rail, prev_, s_.node_index, "r"), to_text(mine_r_));
        to_ = peer_info(key(s_.rail, s_.node_index, next_, "r"));
        from_ = peer_info(key(s_.rail, prev_, s_.node_index, "w"));
        link_.to_node = to_.node, link_.to_nic = to_.nic, link_.to_gbitps = to_.rate_gbitps, link_.to_speed = to_.speed;
    }

    // The reading end, connected before the writer on the previous node starts.
    bool connect_reading_end() {
        bool reading = ep_ && error_.empty() && from_.skipped.empty();
        std::string ready = "skipped";
        if (reading) {
            if (auto e = ep_->connect(ep_->read_qp(), from_, read_psn_, false)) ready = "failed:" + *e, reading = false;
            else ready = "ok";
        }
        put(key(s_.rail, prev_, s_.node_index, "ready"), ready);
        return reading;
    }

    // The writing end: the link's figure, or why there is none.
    bool write() {
        bool wrote = false;
        if (!skipped_.empty()) {
            link_.skipped = skipped_;
        } else if (!error_.empty()) {
            link_.error = error_;
        } else if (!to_.skipped.empty()) {
            const bool skip = to_.skipped.rfind("skip:", 0) == 0;
            (skip ? link_.skipped : link_.error) =
                "the reading end " + to_.nic + " on " + to_.node + ": " + to_.skipped.substr(to_.skipped.find(':') + 1);
        } else if (auto e = ep_->connect(ep_->write_qp(), to_, write_psn_, true)) {
            link_.error = "the writing end " + link_.from_nic + " on " + s_.node + " could not connect: " + *e;
        } else if (const std::string r = get(key(s_.rail, s_.node_index, next_, "ready")); r != "ok") {
            link_.error =
                "the reading end " + to_.nic + " on " + to_.node + " could not connect: " + r.substr(r.find(':') + 1);
        } else {
            try {
                auto [bytes, secs] = ep_->write(*send_, to_, s_.measure_s, stop_);
                link_.bytes_written = bytes, link_.seconds = secs;
                if (secs > 0) link_.gbps = double(bytes) / secs / 1e9;
                wrote = true;
            } catch (const Failure& f) {
                link_.error = f.text;
            }
        }
        put(key(s_.rail, s_.node_index, next_, "done"), wrote ? "ok" : "failed");
        return wrote;
    }

    // The reading end checks what arrived; the writer learns it.
    void verify(bool reading, bool wrote) {
        std::string check = "skipped";
        if (reading && get(key(s_.rail, prev_, s_.node_index, "done")) == "ok") {
            try {
                check = std::to_string(kBufferBytes) + " " + std::to_string(recv_->wrong(prev_, s_.rail));
            } catch (const Error&) {
                check = "skipped";  // the writer's figure stands; what arrived is not known
            }
        }
        put(key(s_.rail, prev_, s_.node_index, "check"), check);
        if (!wrote) return;
        const std::string c = get(key(s_.rail, s_.node_index, next_, "check"));
        unsigned long long checked = 0, wrong = 0;
        if (std::sscanf(c.c_str(), "%llu %llu", &checked, &wrong) == 2)
            link_.verified_bytes = checked, link_.wrong_bytes = wrong;
    }

    const RunSettings& s_;
    GpuSession* gpu_;
    const std::atomic<bool>* stop_;
    const int next_, prev_;
    const RendezvousDeadline deadline_;
    std::uint32_t write_psn_ = 0, read_psn_ = 0;
    RdmaLink link_;
    std::optional<RailNic> nic_;
    VerbsApi verbs_;
    std::unique_ptr<Endpoint> ep_;
    std::unique_ptr<Buffer> send_, recv_;
    std::string skipped_, error_;
    QpInfo mine_w_, mine_r_, to_, from_;
};

}  // namespace

RdmaLink run_links(const RunSettings& s, GpuSession* gpu, const std::atomic<bool>* stop) {
    return LinkRun(s, gpu, stop).run();
}

}  // namespace gpuvet::fabric_rdma
