// Fuzzes the reader of a queue pair's details (src/checks/fabric_rdma.cpp), which another node's
// rank puts on the rendezvous board for the RDMA write test: any input is answered with its fields
// or nothing, and what it reads is written back to the same fields.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "checks/fabric_rdma.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto q = gpuvet::fabric_rdma::parse_qp_info(text);
    if (!q) return 0;
    if (q->qpn >= (1u << 24) || q->psn >= (1u << 24)) std::abort();
    if (q->rate_gbitps && !(*q->rate_gbitps > 0)) std::abort();
    auto again = gpuvet::fabric_rdma::parse_qp_info(gpuvet::fabric_rdma::to_text(*q));
    if (!again || again->node != q->node || again->nic != q->nic || again->qpn != q->qpn || again->psn != q->psn ||
        again->rkey != q->rkey || again->addr != q->addr || again->bytes != q->bytes || again->lid != q->lid ||
        again->gid_hex != q->gid_hex || again->skipped != q->skipped || again->speed != q->speed ||
        again->rate_gbitps.has_value() != q->rate_gbitps.has_value())
        std::abort();
    return 0;
}
