// The NCCL double's communicators whose ranks are separate processes (ncclGetUniqueId,
// ncclCommInitRank): one process per GPU, on the nodes of a test Slurm that all live on this machine.
//
// Bootstrap: the unique id names a folder (under GPUVET_FAKE_NCCL_DIR, else TMPDIR, else /tmp) that
// ncclGetUniqueId creates; every rank maps its control file, registers itself (its machine, GPU,
// network and NIC figures) and waits for the others, as NCCL's bootstrap waits for every rank.
//
// Data: an all-reduce really moves the ranks' data, through one file per rank in that folder (shared
// memory when the folder is on tmpfs): each rank publishes its send buffer, reduces its 1/n share of
// every rank's buffer (reduce-scatter), then gathers every share into its receive buffer, so each
// rank's result is the sum of what the other processes sent, and a correctness check means something.
//
// Time: each rank's stream is charged bytes x 2(n-1)/n / busbw on the fake libcuda's simulated clock,
// busbw from the scenario's figures: on one machine the slowest rank's nccl_busbw_gbps; across
// machines also the network: the NICs a communicator uses per node (the fewest over its nodes) times
// the slowest of those NICs' per-NIC figure (the port's line rate in bytes x [fabric] efficiency x
// the node's and the NIC's factors x gdr_off_factor without GPUDirect RDMA), or the node's socket
// figure when a node uses TCP sockets: ring and tree all-reduce split the data evenly over the
// NICs, so the slowest NIC sets the pace of all.
//
// Network, per rank, as NCCL chooses it: the IB plugin with the ACTIVE ports of the fixture's RDMA
// devices (GPUVET_ROOT), unless [fabric] ib = "no_device", NCCL_IB_DISABLE=1 or no active port;
// else sockets; NCCL_NET names the one plugin allowed, and when it cannot initialise the init fails
// ("Failed to initialize any NET plugin", ncclInvalidUsage) instead of falling back. Rank k of a node
// (its CUDA ordinal) uses the k-th active NIC (modulo their number), as a GPU uses its nearest NIC.
//
// Log: NCCL_DEBUG=INFO (or WARN) lines in NCCL's own formats to NCCL_DEBUG_FILE (%h host, %p pid),
// else stdout: the network chosen, the NICs, GPUDirect RDMA per HCA, each channel's transport.
#pragma once
#include <cuda.h>
#include <nccl.h>

#include <cstddef>

namespace fakenccl {

struct NetComm;

ncclResult_t unique_id(ncclUniqueId* id);
// `dev`: the CUDA ordinal of the calling thread's current context.
ncclResult_t init_rank(NetComm** out, int nranks, const ncclUniqueId& id, int rank, int dev);
ncclResult_t all_reduce(NetComm* c, const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                        CUstream stream);
ncclResult_t destroy(NetComm* c);
// The text of the last WARN this process logged (ncclGetLastError), "" when none.
const char* last_error();

}  // namespace fakenccl
