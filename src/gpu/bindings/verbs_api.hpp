// libibverbs (rdma-core's libibverbs.so.1), loaded at run time: a box without rdma-core still starts
// and says why it measured no RDMA bandwidth. Our own declarations of what the RDMA write test uses;
// the layouts and values are those of rdma-core's <infiniband/verbs.h>, and tests/abi/abi_verbs.cpp
// proves them equal. ibv_post_send and ibv_poll_cq are static inline functions there that call
// through the context's ops table: this file declares that table's slots too.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/bindings/symbol_table.hpp"

namespace gpuvet::ibv {

// Handles: incomplete types, so the deadline wrapper passes them unchanged. Their first fields are
// read through the *_view structs below.
struct device;
struct context;
struct pd;
struct mr;
struct cq;
struct qp;
struct comp_channel;

struct gid {
    alignas(8) std::uint8_t raw[16];
};

// struct ibv_port_attr. The exported ibv_query_port fills rdma-core's _compat_ibv_port_attr (verbs.c),
// the prefix of this layout up to link_layer; verbs.h's inline of that name asks the provider for
// the rest, which gpuvet does not read.
struct port_attr {
    int state;
    int max_mtu;
    int active_mtu;
    int gid_tbl_len;
    std::uint32_t port_cap_flags;
    std::uint32_t max_msg_sz;
    std::uint32_t bad_pkey_cntr;
    std::uint32_t qkey_viol_cntr;
    std::uint16_t pkey_tbl_len;
    std::uint16_t lid;
    std::uint16_t sm_lid;
    std::uint8_t lmc;
    std::uint8_t max_vl_num;
    std::uint8_t sm_sl;
    std::uint8_t subnet_timeout;
    std::uint8_t init_type_reply;
    std::uint8_t active_width;
    std::uint8_t active_speed;
    std::uint8_t phys_state;
    std::uint8_t link_layer;
    std::uint8_t flags;
    std::uint16_t port_cap_flags2;
};

struct qp_cap {
    std::uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
};

struct qp_init_attr {
    void* qp_context;
    cq* send_cq;
    cq* recv_cq;
    void* srq;
    qp_cap cap;
    int qp_type;
    int sq_sig_all;
};

struct global_route {
    gid dgid;
    std::uint32_t flow_label;
    std::uint8_t sgid_index, hop_limit, traffic_class;
};

struct ah_attr {
    global_route grh;
    std::uint16_t dlid;
    std::uint8_t sl, src_path_bits, static_rate, is_global, port_num;
};

struct qp_attr {
    int qp_state, cur_qp_state, path_mtu, path_mig_state;
    std::uint32_t qkey, rq_psn, sq_psn, dest_qp_num;
    unsigned int qp_access_flags;
    qp_cap cap;
    ah_attr ah, alt_ah;
    std::uint16_t pkey_index, alt_pkey_index;
    std::uint8_t en_sqd_async_notify, sq_draining, max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num, timeout,
        retry_cnt, rnr_retry, alt_port_num, alt_timeout;
    std::uint32_t rate_limit;
};

struct sge {
    std::uint64_t addr;
    std::uint32_t length, lkey;
};

struct send_wr {
    std::uint64_t wr_id;
    send_wr* next;
    sge* sg_list;
    int num_sge;
    int opcode;
    unsigned int send_flags;
    std::uint32_t imm_data;
    union {
        struct {
            std::uint64_t remote_addr;
            std::uint32_t rkey;
        } rdma;
        std::uint64_t atomic_words[4];  // the atomic and UD members: the union's size
    } wr;
    std::uint32_t xrc_remote_srqn;
    std::uint64_t bind_mw_or_tso[6];  // unused by a write: the union's size
};

struct wc {
    std::uint64_t wr_id;
    int status;
    int opcode;
    std::uint32_t vendor_err, byte_len, imm_data, qp_num, src_qp;
    unsigned int wc_flags;
    std::uint16_t pkey_index, slid;
    std::uint8_t sl, dlid_path_bits;
};

using poll_cq_fn = int (*)(cq*, int, wc*);
using post_send_fn = int (*)(qp*, send_wr*, send_wr**);

// struct ibv_context up to the slots of its ops table that the inline functions call through.
struct context_view {
    device* dev;
    void* ops_before_poll_cq[11];
    poll_cq_fn poll_cq;
    void* ops_before_post_send[13];
    post_send_fn post_send;
};
struct mr_view {
    context* ctx;
    pd* protection_domain;
    void* addr;
    std::size_t length;
    std::uint32_t handle, lkey, rkey;
};
struct qp_view {
    context* ctx;
    void* qp_context;
    pd* protection_domain;
    cq* send_cq;
    cq* recv_cq;
    void* srq;
    std::uint32_t handle, qp_num;
};

inline const context_view& view(const context* c) { return *reinterpret_cast<const context_view*>(c); }
inline const mr_view& view(const mr* m) { return *reinterpret_cast<const mr_view*>(m); }
inline const qp_view& view(const qp* q) { return *reinterpret_cast<const qp_view*>(q); }

// Values of verbs.h's enums.
inline constexpr int kQptRc = 2;                                           // IBV_QPT_RC
inline constexpr int kQpsInit = 1, kQpsRtr = 2, kQpsRts = 3;               // IBV_QPS_*
inline constexpr int kWrRdmaWrite = 0;                                     // IBV_WR_RDMA_WRITE
inline constexpr unsigned kSendSignaled = 2;                               // IBV_SEND_SIGNALED
inline constexpr int kAccessLocalWrite = 1, kAccessRemoteWrite = 2;        // IBV_ACCESS_*
inline constexpr int kWcSuccess = 0;                                       // IBV_WC_SUCCESS
inline constexpr int kWcRetryExcErr = 12;                                  // IBV_WC_RETRY_EXC_ERR
inline constexpr int kMtu1024 = 3, kMtu4096 = 5;                           // IBV_MTU_*
inline constexpr int kPortActive = 4;                                      // IBV_PORT_ACTIVE
inline constexpr std::uint8_t kLinkLayerEthernet = 2;                      // IBV_LINK_LAYER_ETHERNET
inline constexpr int kQpState = 1, kQpAccessFlags = 8, kQpPkeyIndex = 16;  // IBV_QP_* attribute mask
inline constexpr int kQpPort = 32, kQpAv = 128, kQpPathMtu = 256, kQpTimeout = 512;
inline constexpr int kQpRetryCnt = 1024, kQpRnrRetry = 2048, kQpRqPsn = 4096, kQpMaxQpRdAtomic = 8192;
inline constexpr int kQpMinRnrTimer = 32768, kQpSqPsn = 65536, kQpMaxDestRdAtomic = 131072, kQpDestQpn = 1 << 20;

using get_device_list_fn = device** (*)(int*);
using free_device_list_fn = void (*)(device**);
using get_device_name_fn = const char* (*)(device*);
using open_device_fn = context* (*)(device*);
using close_device_fn = int (*)(context*);
using alloc_pd_fn = pd* (*)(context*);
using dealloc_pd_fn = int (*)(pd*);
using reg_mr_fn = mr* (*)(pd*, void*, std::size_t, int);
using reg_dmabuf_mr_fn = mr* (*)(pd*, std::uint64_t, std::size_t, std::uint64_t, int, int);
using dereg_mr_fn = int (*)(mr*);
using create_cq_fn = cq* (*)(context*, int, void*, comp_channel*, int);
using destroy_cq_fn = int (*)(cq*);
using create_qp_fn = qp* (*)(pd*, qp_init_attr*);
using modify_qp_fn = int (*)(qp*, qp_attr*, int);
using destroy_qp_fn = int (*)(qp*);
using query_port_fn = int (*)(context*, std::uint8_t, port_attr*);
using query_gid_fn = int (*)(context*, std::uint8_t, int, gid*);

}  // namespace gpuvet::ibv

namespace gpuvet {

inline constexpr const char* kEnvLibVerbs = "GPUVET_LIBIBVERBS";

struct VerbsApi {
    ibv::get_device_list_fn ibv_get_device_list = nullptr;
    ibv::free_device_list_fn ibv_free_device_list = nullptr;
    ibv::get_device_name_fn ibv_get_device_name = nullptr;
    ibv::open_device_fn ibv_open_device = nullptr;
    ibv::close_device_fn ibv_close_device = nullptr;
    ibv::alloc_pd_fn ibv_alloc_pd = nullptr;
    ibv::dealloc_pd_fn ibv_dealloc_pd = nullptr;
    ibv::reg_mr_fn ibv_reg_mr = nullptr;
    ibv::reg_dmabuf_mr_fn ibv_reg_dmabuf_mr = nullptr;  // rdma-core 34 and later (IBVERBS_1.12)
    ibv::dereg_mr_fn ibv_dereg_mr = nullptr;
    ibv::create_cq_fn ibv_create_cq = nullptr;
    ibv::destroy_cq_fn ibv_destroy_cq = nullptr;
    ibv::create_qp_fn ibv_create_qp = nullptr;
    ibv::modify_qp_fn ibv_modify_qp = nullptr;
    ibv::destroy_qp_fn ibv_destroy_qp = nullptr;
    ibv::query_port_fn ibv_query_port = nullptr;
    ibv::query_gid_fn ibv_query_gid = nullptr;

    std::string path;
    std::string error;  // set: not usable, and why
    SymbolResolution symbols;

    bool ok() const { return error.empty(); }
    // $GPUVET_LIBIBVERBS when set (only that), else libibverbs.so.1 by the loader's search.
    static VerbsApi load();
};

std::span<const SymbolEntry<VerbsApi>> verbs_symbol_table();

}  // namespace gpuvet
