#include "checks/fabric_allreduce_rank.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include "checks/fabric_rdma_run.hpp"
#include "checks/host_fabric.hpp"
#include "checks/host_fabric_judge.hpp"
#include "core/error.hpp"
#include "gpu/bindings/nccl_api.hpp"
#include "gpu/device_fill.hpp"
#include "gpu/session.hpp"
#include "host/fabric.hpp"
#include "host/rendezvous.hpp"

namespace gpuvet::fabric_allreduce {

float expected_sum(const std::vector<int>& slots, std::uint64_t i) {
    int base = 0;
    for (int s : slots) base += 1 + s % 7;
    return float(base) + float(slots.size()) * float(i % 5);
}

namespace {

constexpr std::uint64_t kCheckChunk = std::uint64_t(1) << 20;  // bytes verified at the start, middle and end
constexpr std::uint64_t kMaxLogBytes = std::uint64_t(8) << 20;
constexpr const char* kIdsKey = "nccl-ids";

// ---- the node's fabric --------------------------------------------------------------------------

bool active_port(const RdmaDevice& d) {
    return std::any_of(d.ports.begin(), d.ports.end(), [](const RdmaPort& p) { return p.active(); });
}

std::optional<double> slowest_active_rate(const RdmaDevice& d) {
    std::optional<double> r;
    for (const RdmaPort& p : d.ports)
        if (p.active() && p.rate) r = std::min(r.value_or(1e18), p.rate->gbitps);
    return r;
}

// What could make NCCL leave the RDMA NICs: the causes host.fabric reads on this node.
std::vector<std::string> fallback_hints(const FabricFacts& f) {
    std::vector<std::string> h;
    if (f.devices.empty()) return h;
    if (f.uverbs.empty())
        h.push_back(
            "no verbs device in /dev/infiniband (a container started without the RDMA devices: pass "
            "--device /dev/infiniband, or the RDMA device plugin)");
    if (!f.uverbs_denied.empty())
        h.push_back("this user may not open " + std::to_string(f.uverbs_denied.size()) +
                    " verbs device(s) in /dev/infiniband");
    if (f.libibverbs_error)
        h.push_back("libibverbs cannot be loaded (" + *f.libibverbs_error +
                    "): install libibverbs1 and "
                    "ibverbs-providers (rdma-core)");
    if (const char* d = std::getenv("NCCL_IB_DISABLE"); d && std::string(d) == "1")
        h.push_back("NCCL_IB_DISABLE=1 is set in the job's environment");
    if (f.peermem_evidence.empty() && !dmabuf_possible(f))
        h.push_back("neither nvidia-peermem nor DMA-BUF: no GPUDirect RDMA (modprobe nvidia-peermem)");
    return h;
}

// The NIC a job's rank on this GPU uses: host.fabric's pairing for the GPU with this PCI address,
// else for the node's k-th GPU in PCI order.
void rail_nic(const FabricFacts& f, const std::string& bus_id, int local, RankFabric& out) {
    std::vector<GpuNicPair> pairs = pair_gpus_with_nics(f);
    std::optional<std::size_t> gpu;
    for (std::size_t g = 0; g < f.gpus.size(); ++g)
        if (f.gpus[g].bdf == bus_id) gpu = g;
    if (!gpu && local >= 0 && std::size_t(local) < f.gpus.size()) gpu = std::size_t(local);
    if (!gpu || !pairs[*gpu].nic) return;
    const RdmaDevice& d = f.devices[*pairs[*gpu].nic];
    out.rail_nic = d.name;
    out.rail_nic_gbitps = slowest_active_rate(d);
}

RankFabric read_node_fabric(const std::filesystem::path& root, const std::string& bus_id, int local) {
    FabricFacts f = collect_fabric(root, {});
    RankFabric out;
    for (const RdmaDevice& d : f.devices) {
        if (!active_port(d)) continue;
        ++out.rdma_nics;
        if (auto r = slowest_active_rate(d)) out.nic_gbitps = std::min(out.nic_gbitps.value_or(1e18), *r);
    }
    out.hints = fallback_hints(f);
    rail_nic(f, bus_id, local, out);
    return out;
}

// ---- NCCL's environment -----------------------------------------------------------------------

// NCCL reads these when it initialises: set before the library is loaded.
std::string prepare_nccl_env(const RankSettings& s, const RankFabric& fabric, std::optional<std::string>& net) {
    if (const char* n = std::getenv("NCCL_NET"); n && *n) {
        net = n;  // the user's choice stands
    } else if (fabric.rdma_nics > 0 && !s.allow_fallback) {
        ::setenv("NCCL_NET", "IB", 1);
        net = "IB";
    }
    // One bootstrap root per communicator: NCCL_COMM_ID names a single one.
    ::unsetenv("NCCL_COMM_ID");
    const std::string file = s.log_dir + "/gpuvet-nccl-" + s.job_tag + "-" + std::to_string(s.place.node) + "-" +
                             std::to_string(s.place.local_rank) + ".log";
    ::setenv("NCCL_DEBUG", "INFO", 1);
    ::setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
    ::setenv("NCCL_DEBUG_FILE", file.c_str(), 1);
    return file;
}

NcclLog read_log(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::string text(kMaxLogBytes, '\0');
    f.read(text.data(), std::streamsize(text.size()));
    text.resize(std::size_t(f.gcount()));
    return parse_nccl_log(text);
}

// ---- one communicator ---------------------------------------------------------------------------

struct NcclFailure {
    std::string text;
};

void check(const NcclApi& n, nccl::ncclResult_t r, const char* call, nccl::ncclComm_t comm = nullptr) {
    if (r != nccl::ncclSuccess) throw NcclFailure{std::string(call) + " failed: " + n.error_text(r, comm)};
}

struct Buffers {
    GpuSession& s;
    DeviceBuffer send, recv, small_in, small_out;
    Stream stream;
    Event start, end;
    std::uint64_t bytes = 0;
};

class CommRun {
public:
    CommRun(const NcclApi& nccl, Buffers& b, const Comm& c, int my_slot, const nccl::ncclUniqueId& id)
        : nccl_(nccl), b_(b), c_(c) {
        const int rank = int(std::find(c.slots.begin(), c.slots.end(), my_slot) - c.slots.begin());
        b_.s.make_current();
        check(nccl_, nccl_.ncclCommInitRank(&comm_, int(c.slots.size()), id, rank), "ncclCommInitRank");
    }
    ~CommRun() {
        if (comm_) nccl_.ncclCommDestroy(comm_);
    }
    CommRun(const CommRun&) = delete;
    CommRun& operator=(const CommRun&) = delete;

    // The largest size every rank of the communicator can hold: the minimum over them, by NCCL.
    std::uint64_t agreed_bytes() {
        float mine = float(b_.bytes >> 20), agreed = 0;
        b_.s.upload(b_.small_in.ptr(), &mine, sizeof mine);
        all_reduce(b_.small_in.ptr(), b_.small_out.ptr(), 1, nccl::ncclMin);
        b_.stream.synchronize();
        b_.s.download(&agreed, b_.small_out.ptr(), sizeof agreed);
        return std::uint64_t(agreed) << 20;
    }

    SizeResult measure(std::uint64_t bytes, int warmup, const std::atomic<bool>* stop) {
        const std::uint64_t count = bytes / sizeof(float);
        for (int w = 0; w < warmup; ++w) pass(count, stop);
        SizeResult z;
        z.bytes = bytes;
        z.passes = passes_for(bytes);
        b_.start.record(b_.stream);
        for (int i = 0; i < z.passes; ++i) pass(count, stop);
        b_.end.record(b_.stream);
        const double ms = elapsed_ms(b_.s.api(), b_.start, b_.end);
        b_.stream.synchronize();
        if (nccl_.ncclCommGetAsyncError) {
            nccl::ncclResult_t async = nccl::ncclSuccess;
            nccl_.ncclCommGetAsyncError(comm_, &async);
            check(nccl_, async, "ncclCommGetAsyncError", comm_);
        }
        if (!(ms > 0))
            throw NcclFailure{"the GPU event timer measured no time for " + std::to_string(z.passes) + " passes"};
        z.ms_per_pass = ms / z.passes;
        verify(count, z);
        return z;
    }

private:
    void all_reduce(cu::CUdeviceptr in, cu::CUdeviceptr out, std::uint64_t count, nccl::ncclRedOp_t op) {
        check(nccl_,
              nccl_.ncclAllReduce(reinterpret_cast<const void*>(in), reinterpret_cast<void*>(out), count,
                                  nccl::ncclFloat32, op, comm_, b_.stream.get()),
              "ncclAllReduce", comm_);
    }
    void pass(std::uint64_t count, const std::atomic<bool>* stop) {
        if (stop && stop->load()) {
            b_.stream.synchronize();
            throw Interrupted{};
        }
        all_reduce(b_.send.ptr(), b_.recv.ptr(), count, nccl::ncclSum);
    }
    // The start, middle and end of the result against the exact sums of the communicator's ranks.
    void verify(std::uint64_t count, SizeResult& z) {
        const std::uint64_t chunk = std::min<std::uint64_t>(kCheckChunk / 4, count);
        std::vector<float> host(chunk);
        for (std::uint64_t at : {std::uint64_t{0}, (count - chunk) / 2, count - chunk}) {
            b_.s.download(host.data(), b_.recv.ptr() + at * sizeof(float), chunk * sizeof(float));
            for (std::uint64_t e = 0; e < chunk; ++e)
                if (host[e] != expected_sum(c_.slots, at + e)) ++z.wrong;
            z.checked += chunk;
        }
    }

    const NcclApi& nccl_;
    Buffers& b_;
    const Comm& c_;
    nccl::ncclComm_t comm_ = nullptr;
};

CommResult run_comm(const NcclApi& nccl, Buffers& b, const Comm& c, int slot, const nccl::ncclUniqueId& id,
                    const std::atomic<bool>* stop) {
    CommResult out;
    out.kind = c.kind;
    out.index = c.index;
    try {
        CommRun run(nccl, b, c, slot, id);
        std::vector<std::uint64_t> sizes = sweep_sizes(run.agreed_bytes());
        if (sizes.empty()) {
            out.error = "a rank of it has less than 1 MiB of GPU memory to spare";
            return out;
        }
        if (c.kind != CommKind::All) sizes.erase(sizes.begin(), sizes.end() - 1);  // the judged size only
        for (std::uint64_t bytes : sizes) out.sizes.push_back(run.measure(bytes, out.sizes.empty() ? 5 : 2, stop));
    } catch (const NcclFailure& f) {
        out.error = f.text;
    } catch (const Error& e) {
        out.error = e.what();
    }
    return out;
}

// ---- the rank -------------------------------------------------------------------------------------

std::string device_text(const CudaApi& api, cu::CUdevice dev) {
    char name[256] = "";
    if (api.cuDeviceGetName) api.cuDeviceGetName(name, sizeof name - 1, dev);
    return name;
}

std::string bus_id_of(const GpuSession& s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", s.attribute(cu::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
                  s.attribute(cu::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID), s.attribute(cu::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
    return buf;
}

int ordinal_for(const CudaApi& api, int local) {
    int count = 0;
    cuda_check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (local < count) return local;
    if (count == 1) return 0;  // srun bound one GPU to each task
    throw runtime_error(
        "local rank " + std::to_string(local) + " has no GPU of its own: CUDA sees " + std::to_string(count),
        "give each node as many GPUs as tasks (--gpus-per-node equal to the tasks per node)");
}

std::vector<nccl::ncclUniqueId> exchange_ids(const NcclApi& nccl, const RankSettings& s, std::size_t n,
                                             const std::atomic<bool>* stop) {
    RendezvousDeadline d{
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(s.rendezvous_s)),
        stop};
    std::vector<nccl::ncclUniqueId> ids(n);
    const int slot = slot_of(s.place.node, s.place.local_rank, s.place.world / s.place.nodes);
    std::string blob;
    if (slot == 0) {
        for (auto& id : ids) check(nccl, nccl.ncclGetUniqueId(&id), "ncclGetUniqueId");
        blob.assign(reinterpret_cast<const char*>(ids.data()), n * sizeof(nccl::ncclUniqueId));
        board_put(s.board_host, s.board_port, s.token, kIdsKey, blob, d);
        return ids;
    }
    blob = board_get(s.board_host, s.board_port, s.token, kIdsKey, d);
    if (blob.size() != n * sizeof(nccl::ncclUniqueId))
        throw runtime_error("rank 0 handed out " + std::to_string(blob.size() / sizeof(nccl::ncclUniqueId)) +
                                " NCCL ids, this rank's plan has " + std::to_string(n) + " communicators",
                            "run the same gpuvet on every node");
    std::memcpy(ids.data(), blob.data(), blob.size());
    return ids;
}

fabric_rdma::RunSettings rdma_settings(const RankSettings& s, const std::string& bus_id);

// This rank's part of the RDMA write test (with two nodes or more), once: the other ends wait on the
// board for it.
void rdma_links(RankReport& r, const RankSettings& s, GpuSession* gpu, const std::atomic<bool>* stop) {
    if (s.place.nodes < 2 || !s.rdma_write || r.rdma) return;
    try {
        r.rdma = fabric_rdma::run_links(rdma_settings(s, r.gpu_bus_id), gpu, stop);
    } catch (const Error& e) {
        r.rdma = fabric_rdma::RdmaLink{};
        r.rdma->rail = s.place.local_rank;
        r.rdma->from_node = s.node;
        r.rdma->error = e.what();
    }
}

fabric_rdma::RunSettings rdma_settings(const RankSettings& s, const std::string& bus_id) {
    fabric_rdma::RunSettings x;
    x.node = s.node;
    x.node_index = s.place.node;
    x.nodes = s.place.nodes;
    x.rail = s.place.local_rank;
    x.gpu_bus_id = bus_id;
    x.board_host = s.board_host, x.token = s.token, x.board_port = s.board_port;
    x.root = s.root;
    x.wait_s = s.rendezvous_s;
    return x;
}

void measure_all(RankReport& r, const RankSettings& s, const NcclApi& nccl, const std::atomic<bool>* stop) {
    const int per_node = s.place.world / s.place.nodes;
    auto api = shared_cuda_api();
    r.cuda_ordinal = ordinal_for(*api, s.place.local_rank);
    GpuSession session(api, r.cuda_ordinal);
    r.gpu_name = device_text(*api, session.device());
    r.gpu_bus_id = bus_id_of(session);
    r.fabric = read_node_fabric(s.root, r.gpu_bus_id, s.place.local_rank);  // again: now with the bus id
    const std::vector<Comm> plan = plan_comms(s.place.nodes, per_node);
    const std::vector<nccl::ncclUniqueId> ids = exchange_ids(nccl, s, plan.size(), stop);
    // Two buffers of the largest size must fit: 40% of the free memory each at most.
    const std::uint64_t free_bytes = session.mem_info().free_bytes;
    std::vector<std::uint64_t> fit = sweep_sizes(std::min(s.max_bytes, free_bytes * 4 / 10));
    Buffers b{session,
              {},
              {},
              session.alloc(4096),
              session.alloc(4096),
              session.stream(),
              session.event(),
              session.event(),
              fit.empty() ? 0 : fit.back()};
    if (b.bytes > 0) {
        b.send = session.alloc(b.bytes);
        b.recv = session.alloc(b.bytes);
        const int slot = slot_of(s.place.node, s.place.local_rank, per_node);
        std::vector<float> tile(5 << 16);  // a multiple of 5 elements keeps i % 5 aligned
        for (std::size_t e = 0; e < tile.size(); ++e) tile[e] = rank_pattern(slot, e);
        fill_repeating(session, b.send.ptr(), b.bytes, tile.data(), tile.size() * sizeof(float), stop);
    }
    const int slot = slot_of(s.place.node, s.place.local_rank, per_node);
    for (std::size_t i = 0; i < plan.size(); ++i) {
        if (std::find(plan[i].slots.begin(), plan[i].slots.end(), slot) == plan[i].slots.end()) continue;
        r.comms.push_back(run_comm(nccl, b, plan[i], slot, ids[i], stop));
    }
    b.send.reset(), b.recv.reset();  // the RDMA buffers' room
    rdma_links(r, s, &session, stop);
}

}  // namespace

RankReport run_rank(const RankSettings& s, const std::atomic<bool>* stop) {
    RankReport r;
    r.node = s.node;
    r.node_index = s.place.node;
    r.nodes = s.place.nodes;
    r.local_rank = s.place.local_rank;
    r.per_node = s.place.nodes > 0 ? s.place.world / s.place.nodes : 1;
    r.fabric = read_node_fabric(s.root, "", s.place.local_rank);
    r.log_file = prepare_nccl_env(s, r.fabric, r.nccl_net);
    NcclApi nccl = NcclApi::load();
    r.nccl_path = nccl.path;
    r.nccl_version = nccl.ok() ? nccl.version_text() : "";
    if (!nccl.ok()) {
        r.error = std::string(kNcclMissingAdvice) + " (" + nccl.error + ")";
    } else if (!nccl.ncclGetUniqueId || !nccl.ncclCommInitRank) {
        r.error = nccl.path +
                  " lacks ncclGetUniqueId or ncclCommInitRank: an NCCL older than 2.0 cannot run ranks in "
                  "separate processes";
    } else {
        try {
            measure_all(r, s, nccl, stop);
        } catch (const NcclFailure& f) {
            r.error = f.text;
        } catch (const Interrupted&) {
            throw;
        } catch (const Error& e) {
            r.error = std::string(e.what()) + (e.advice().empty() ? "" : " (" + e.advice() + ")");
        }
    }
    // The other ends wait on the board for this rank's: it takes its part, from host memory, even
    // when the all-reduce could not run.
    rdma_links(r, s, nullptr, stop);
    r.log = read_log(r.log_file);
    return r;
}

}  // namespace gpuvet::fabric_allreduce
