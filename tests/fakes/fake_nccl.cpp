// Fake NCCL built against NVIDIA's nccl.h. Communicators of one process driving all GPUs
// (ncclCommInitAll) are emulated here; communicators whose ranks are separate processes
// (ncclGetUniqueId, ncclCommInitRank) in fake_nccl_net.cpp.
// An ncclCommInitAll all-reduce completes once every rank of the clique has posted it (at ncclGroupEnd, or at the
// call itself outside a group); each rank's stream is charged bytes * 2(n-1)/n / busbw with busbw
// the slowest rank's scenario nccl_busbw_gbps, so busbw computed from events equals the scenario.
// The sums are computed lazily, only for the result bytes a copy reads (like the fake cuBLASLt).
// Built a second time with FAKE_RCCL as the RCCL double (librccl exports the same API, rccl.h): then it
// runs on the HIP double's memory and clock (fake_hooks.hpp's HipHooks), its streams being hipStream_t
// (an opaque pointer, as cudaStream_t, so nccl.h's declarations keep the same ABI), its figures from
// the AMD scenario's [hip] rccl_* keys.
#pragma GCC visibility push(default)
#include <nccl.h>
#pragma GCC visibility pop

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "fake_hooks.hpp"
#include "fake_nccl_net.hpp"

namespace {

#ifdef FAKE_RCCL
const fake::HipHooks& hooks() { return fake::hip_hooks(); }
#else
const fake::CudaHooks& hooks() { return fake::cuda_hooks(); }
#endif
// The device a stream's work runs on, for GPUVET_FAKE_HANG rules; -1 without the driver double.
int stream_gpu(cudaStream_t s) {
    const auto& h = hooks();
    return h.ok() ? h.stream_device(s) : -1;
}

struct Op {
    unsigned long long send, recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    cudaStream_t stream;
};
struct Clique {
    std::vector<ncclComm*> ranks;
    std::vector<std::deque<Op>> posted;
};

}  // namespace

struct ncclComm {
    int rank = 0, dev = 0;
    std::shared_ptr<Clique> clique;
    fakenccl::NetComm* net = nullptr;  // set: a communicator across processes
};

namespace {

// A completed all-reduce whose result is computed when read: every rank's recv gets the sum.
struct Result {
    std::vector<unsigned long long> sends;
    size_t count;
    bool wrong = false;  // the scenario's *_wrong_sums on this rank's GPU: every element one too high
};
std::recursive_mutex g_mu;
std::vector<std::pair<unsigned long long, Result>> g_results;  // by recv address
thread_local int g_group = 0;                                  // NCCL's groups are per thread

// All-reduces on communicators across processes posted inside a group: run at ncclGroupEnd, in order.
struct NetOp {
    ncclComm* comm;
    const void* send;
    void* recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t op;
    cudaStream_t stream;
};
thread_local std::vector<NetOp> g_net_ops;

void on_read(unsigned long long ptr, size_t n) {
    std::lock_guard<std::recursive_mutex> lock(g_mu);
    const auto& h = hooks();
    for (const auto& [recv, r] : g_results) {
        unsigned long long end = recv + r.count * 4;
        if (ptr >= end || ptr + n <= recv) continue;
        size_t lo = (std::max(ptr, recv) - recv) / 4, hi = (std::min<unsigned long long>(ptr + n, end) - recv + 3) / 4;
        auto* out = static_cast<float*>(h.host_view(recv, r.count * 4));
        if (!out) continue;
        std::vector<const float*> in;
        for (auto s : r.sends) in.push_back(static_cast<const float*>(h.host_view(s, r.count * 4)));
        for (size_t e = lo; e < hi; ++e) {
            double sum = 0;
            for (const float* x : in) sum += x ? x[e] : 0;
            out[e] = float(sum) + (r.wrong ? 1.0f : 0.0f);
        }
    }
}

ncclResult_t complete(Clique& c) {
    const auto& h = hooks();
    while (std::all_of(c.posted.begin(), c.posted.end(), [](const auto& q) { return !q.empty(); })) {
        std::vector<Op> ops;
        for (auto& q : c.posted) ops.push_back(q.front()), q.pop_front();
        int n = int(ops.size());
        double busbw = 1e300;
        Result r{{}, ops[0].count};
        for (int i = 0; i < n; ++i) {
            const Op& o = ops[i];
            if (o.count != ops[0].count || o.type != ncclFloat32 || o.op != ncclSum) return ncclInvalidUsage;
            if (o.send == o.recv) return ncclInvalidUsage;  // in place: not emulated
            if (!h.host_view(o.send, o.count * 4) || !h.host_view(o.recv, o.count * 4)) return ncclUnhandledCudaError;
            busbw = std::min(busbw, h.busbw_gbps(c.ranks[i]->dev));
            r.sends.push_back(o.send);
        }
        double seconds = double(ops[0].count * 4) * 2.0 * (n - 1) / n / (busbw * 1e9);
        for (const Op& o : ops) {
            g_results.erase(
                std::remove_if(g_results.begin(), g_results.end(), [&](const auto& x) { return x.first == o.recv; }),
                g_results.end());
            Result mine = r;
            mine.wrong = h.wrong_sums(c.ranks[size_t(&o - ops.data())]->dev);
            g_results.push_back({o.recv, mine});
            if (h.charge(o.stream, seconds) != 0) return ncclUnhandledCudaError;
        }
    }
    return ncclSuccess;
}

std::vector<std::shared_ptr<Clique>> g_cliques;

ncclResult_t complete_all() {
    for (auto& c : g_cliques)
        if (ncclResult_t r = complete(*c); r != ncclSuccess) return r;
    return ncclSuccess;
}

// Outside g_mu: they wait for other processes (or other threads of this one).
ncclResult_t run_net_ops() {
    std::vector<NetOp> ops;
    ops.swap(g_net_ops);
    for (const NetOp& o : ops)
        if (ncclResult_t r = fakenccl::all_reduce(o.comm->net, o.send, o.recv, o.count, o.type, o.op, o.stream);
            r != ncclSuccess)
            return r;
    return ncclSuccess;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* v) {
    fake::hang_point(__func__, -1);
    if (!v) return ncclInvalidArgument;
    *v = NCCL_VERSION_CODE;
    return ncclSuccess;
}
const char* ncclGetErrorString(ncclResult_t r) {
    fake::hang_point(__func__, -1);
    switch (r) {
        case ncclSuccess: return "no error";
        case ncclUnhandledCudaError: return "unhandled cuda error (fake)";
        case ncclInvalidArgument: return "invalid argument (fake)";
        case ncclInvalidUsage: return "invalid usage (fake: float sums, out of place, only)";
        default: return "error (fake)";
    }
}
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::recursive_mutex> lock(g_mu);
    const auto& h = hooks();
    if (!comms || ndev < 1) return ncclInvalidArgument;
    if (!h.ok()) return ncclUnhandledCudaError;
    auto c = std::make_shared<Clique>();
    c->posted.resize(ndev);
    for (int i = 0; i < ndev; ++i) {
        int dev = devlist ? devlist[i] : i;
        if (!h.has_device(dev)) return ncclInvalidArgument;
        c->ranks.push_back(new ncclComm{i, dev, c});
    }
    for (int i = 0; i < ndev; ++i) comms[i] = c->ranks[i];
    g_cliques.push_back(c);
    h.on_device_read(&on_read);
    return ncclSuccess;
}
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
    fake::hang_point(__func__, -1);
    return fakenccl::unique_id(id);
}
// Not under g_mu: the ranks of one process may join in threads of their own, each waiting for the others.
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
    const auto& h = hooks();
    const int dev = h.ok() ? h.stream_device(nullptr) : -1;
    fake::hang_point(__func__, dev);
    if (!comm) return ncclInvalidArgument;
    if (dev < 0) return ncclUnhandledCudaError;  // no current context: NCCL would take device 0
    fakenccl::NetComm* net = nullptr;
    if (ncclResult_t r = fakenccl::init_rank(&net, nranks, id, rank, dev); r != ncclSuccess) return r;
    *comm = new ncclComm{rank, dev, nullptr, net};
    return ncclSuccess;
}
const char* ncclGetLastError(ncclComm_t) {
    fake::hang_point(__func__, -1);
    return fakenccl::last_error();
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    fake::hang_point(__func__, -1);
    if (comm && comm->net) {
        ncclResult_t r = fakenccl::destroy(comm->net);
        delete comm;
        return r;
    }
    std::lock_guard<std::recursive_mutex> lock(g_mu);
    if (!comm) return ncclInvalidArgument;
    auto& r = comm->clique->ranks;
    std::replace(r.begin(), r.end(), comm, static_cast<ncclComm*>(nullptr));
    if (std::all_of(r.begin(), r.end(), [](auto* x) { return !x; }))
        g_cliques.erase(std::remove(g_cliques.begin(), g_cliques.end(), comm->clique), g_cliques.end());
    delete comm;
    return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* err) {
    fake::hang_point(__func__, -1);
    if (!comm || !err) return ncclInvalidArgument;
    *err = ncclSuccess;
    return ncclSuccess;
}
ncclResult_t ncclGroupStart() {
    fake::hang_point(__func__, -1);
    std::lock_guard<std::recursive_mutex> lock(g_mu);
    ++g_group;
    return ncclSuccess;
}
ncclResult_t ncclGroupEnd() {
    fake::hang_point(__func__, -1);
    {
        std::lock_guard<std::recursive_mutex> lock(g_mu);
        if (g_group == 0) return ncclInvalidUsage;
        if (--g_group > 0) return ncclSuccess;
        if (ncclResult_t r = complete_all(); r != ncclSuccess) return r;
    }
    return run_net_ops();
}
ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
    fake::hang_point(__func__, stream_gpu(stream));
    if (comm && comm->net) {
        if (g_group) {
            g_net_ops.push_back({comm, send, recv, count, type, op, stream});
            return ncclSuccess;
        }
        return fakenccl::all_reduce(comm->net, send, recv, count, type, op, stream);
    }
    std::lock_guard<std::recursive_mutex> lock(g_mu);
    if (!comm || !send || !recv) return ncclInvalidArgument;
    comm->clique->posted[comm->rank].push_back({reinterpret_cast<unsigned long long>(send),
                                                reinterpret_cast<unsigned long long>(recv), count, type, op, stream});
    return g_group ? ncclSuccess : complete(*comm->clique);
}

}  // extern "C"
