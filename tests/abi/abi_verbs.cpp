// gpuvet's libibverbs declarations (src/gpu/bindings/verbs_api.hpp) against rdma-core's verbs.h.
#include "gpu/bindings/verbs_api.hpp"
// clang-format off
#include <infiniband/verbs.h>
// clang-format on
#include <cstddef>

#include "official_map.hpp"

namespace abi {
namespace v = gpuvet::ibv;
// Handles: incomplete on our side, so mapped without a size.
template <>
struct official<v::device> {
    using type = ::ibv_device;
};
template <>
struct official<v::context> {
    using type = ::ibv_context;
};
template <>
struct official<v::pd> {
    using type = ::ibv_pd;
};
template <>
struct official<v::mr> {
    using type = ::ibv_mr;
};
template <>
struct official<v::cq> {
    using type = ::ibv_cq;
};
template <>
struct official<v::qp> {
    using type = ::ibv_qp;
};
template <>
struct official<v::comp_channel> {
    using type = ::ibv_comp_channel;
};
ABI_MAP(v::gid, ::ibv_gid);
ABI_MAP(v::port_attr, ::ibv_port_attr);
ABI_MAP(v::qp_cap, ::ibv_qp_cap);
ABI_MAP(v::qp_init_attr, ::ibv_qp_init_attr);
ABI_MAP(v::global_route, ::ibv_global_route);
ABI_MAP(v::ah_attr, ::ibv_ah_attr);
ABI_MAP(v::qp_attr, ::ibv_qp_attr);
ABI_MAP(v::sge, ::ibv_sge);
ABI_MAP(v::send_wr, ::ibv_send_wr);
ABI_MAP(v::wc, ::ibv_wc);
}  // namespace abi

namespace v = gpuvet::ibv;

// The exported functions (verbs.h's macros of the same names are not expanded without arguments).
ABI_SAME_FN(v::get_device_list_fn, ibv_get_device_list);
ABI_SAME_FN(v::free_device_list_fn, ibv_free_device_list);
ABI_SAME_FN(v::get_device_name_fn, ibv_get_device_name);
ABI_SAME_FN(v::open_device_fn, ibv_open_device);
ABI_SAME_FN(v::close_device_fn, ibv_close_device);
ABI_SAME_FN(v::alloc_pd_fn, ibv_alloc_pd);
ABI_SAME_FN(v::dealloc_pd_fn, ibv_dealloc_pd);
ABI_SAME_FN(v::reg_mr_fn, ibv_reg_mr);
ABI_SAME_FN(v::reg_dmabuf_mr_fn, ibv_reg_dmabuf_mr);
ABI_SAME_FN(v::dereg_mr_fn, ibv_dereg_mr);
ABI_SAME_FN(v::create_cq_fn, ibv_create_cq);
ABI_SAME_FN(v::destroy_cq_fn, ibv_destroy_cq);
ABI_SAME_FN(v::create_qp_fn, ibv_create_qp);
ABI_SAME_FN(v::modify_qp_fn, ibv_modify_qp);
ABI_SAME_FN(v::destroy_qp_fn, ibv_destroy_qp);
ABI_SAME_FN(v::query_gid_fn, ibv_query_gid);
// The exported ibv_query_port fills the older layout (_compat_ibv_port_attr, declared only), the
// prefix of ibv_port_attr up to link_layer.
static_assert(std::is_same_v<decltype(&ibv_query_port), int (*)(::ibv_context*, uint8_t, ::_compat_ibv_port_attr*)>);
ABI_SAME_OFFSET(v::port_attr, ::ibv_port_attr, state);
ABI_SAME_OFFSET(v::port_attr, ::ibv_port_attr, active_mtu);
ABI_SAME_OFFSET(v::port_attr, ::ibv_port_attr, lid);
ABI_SAME_OFFSET(v::port_attr, ::ibv_port_attr, link_layer);
ABI_SAME_OFFSET(v::port_attr, ::ibv_port_attr, port_cap_flags2);

// The ops table the inline ibv_poll_cq and ibv_post_send call through, and the fields read.
static_assert(offsetof(v::context_view, poll_cq) == offsetof(::ibv_context, ops.poll_cq));
static_assert(offsetof(v::context_view, post_send) == offsetof(::ibv_context, ops.post_send));
static_assert(std::is_same_v<abi::official_t<v::poll_cq_fn>, decltype(::ibv_context_ops::poll_cq)>);
static_assert(std::is_same_v<abi::official_t<v::post_send_fn>, decltype(::ibv_context_ops::post_send)>);
static_assert(offsetof(v::mr_view, lkey) == offsetof(::ibv_mr, lkey));
static_assert(offsetof(v::mr_view, rkey) == offsetof(::ibv_mr, rkey));
static_assert(offsetof(v::qp_view, qp_num) == offsetof(::ibv_qp, qp_num));

ABI_SAME_OFFSET(v::qp_init_attr, ::ibv_qp_init_attr, cap);
ABI_SAME_OFFSET(v::qp_init_attr, ::ibv_qp_init_attr, qp_type);
ABI_SAME_OFFSET(v::qp_init_attr, ::ibv_qp_init_attr, sq_sig_all);
ABI_SAME_OFFSET(v::global_route, ::ibv_global_route, sgid_index);
ABI_SAME_OFFSET(v::global_route, ::ibv_global_route, hop_limit);
ABI_SAME_OFFSET(v::ah_attr, ::ibv_ah_attr, dlid);
ABI_SAME_OFFSET(v::ah_attr, ::ibv_ah_attr, is_global);
ABI_SAME_OFFSET(v::ah_attr, ::ibv_ah_attr, port_num);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, path_mtu);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, rq_psn);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, sq_psn);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, dest_qp_num);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, qp_access_flags);
static_assert(offsetof(v::qp_attr, ah) == offsetof(::ibv_qp_attr, ah_attr));
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, pkey_index);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, max_rd_atomic);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, max_dest_rd_atomic);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, min_rnr_timer);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, port_num);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, timeout);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, retry_cnt);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, rnr_retry);
ABI_SAME_OFFSET(v::qp_attr, ::ibv_qp_attr, rate_limit);
ABI_SAME_OFFSET(v::sge, ::ibv_sge, lkey);
ABI_SAME_OFFSET(v::send_wr, ::ibv_send_wr, sg_list);
ABI_SAME_OFFSET(v::send_wr, ::ibv_send_wr, num_sge);
ABI_SAME_OFFSET(v::send_wr, ::ibv_send_wr, opcode);
ABI_SAME_OFFSET(v::send_wr, ::ibv_send_wr, send_flags);
static_assert(offsetof(v::send_wr, wr.rdma.remote_addr) == offsetof(::ibv_send_wr, wr.rdma.remote_addr));
static_assert(offsetof(v::send_wr, wr.rdma.rkey) == offsetof(::ibv_send_wr, wr.rdma.rkey));
ABI_SAME_OFFSET(v::wc, ::ibv_wc, status);
ABI_SAME_OFFSET(v::wc, ::ibv_wc, qp_num);

ABI_SAME_VALUE(v::kQptRc, IBV_QPT_RC);
ABI_SAME_VALUE(v::kQpsInit, IBV_QPS_INIT);
ABI_SAME_VALUE(v::kQpsRtr, IBV_QPS_RTR);
ABI_SAME_VALUE(v::kQpsRts, IBV_QPS_RTS);
ABI_SAME_VALUE(v::kWrRdmaWrite, IBV_WR_RDMA_WRITE);
ABI_SAME_VALUE(v::kSendSignaled, IBV_SEND_SIGNALED);
ABI_SAME_VALUE(v::kAccessLocalWrite, IBV_ACCESS_LOCAL_WRITE);
ABI_SAME_VALUE(v::kAccessRemoteWrite, IBV_ACCESS_REMOTE_WRITE);
ABI_SAME_VALUE(v::kWcSuccess, IBV_WC_SUCCESS);
ABI_SAME_VALUE(v::kWcRetryExcErr, IBV_WC_RETRY_EXC_ERR);
ABI_SAME_VALUE(v::kMtu1024, IBV_MTU_1024);
ABI_SAME_VALUE(v::kMtu4096, IBV_MTU_4096);
ABI_SAME_VALUE(v::kPortActive, IBV_PORT_ACTIVE);
ABI_SAME_VALUE(v::kLinkLayerEthernet, IBV_LINK_LAYER_ETHERNET);
ABI_SAME_VALUE(v::kQpState, IBV_QP_STATE);
ABI_SAME_VALUE(v::kQpAccessFlags, IBV_QP_ACCESS_FLAGS);
ABI_SAME_VALUE(v::kQpPkeyIndex, IBV_QP_PKEY_INDEX);
ABI_SAME_VALUE(v::kQpPort, IBV_QP_PORT);
ABI_SAME_VALUE(v::kQpAv, IBV_QP_AV);
ABI_SAME_VALUE(v::kQpPathMtu, IBV_QP_PATH_MTU);
ABI_SAME_VALUE(v::kQpTimeout, IBV_QP_TIMEOUT);
ABI_SAME_VALUE(v::kQpRetryCnt, IBV_QP_RETRY_CNT);
ABI_SAME_VALUE(v::kQpRnrRetry, IBV_QP_RNR_RETRY);
ABI_SAME_VALUE(v::kQpRqPsn, IBV_QP_RQ_PSN);
ABI_SAME_VALUE(v::kQpMaxQpRdAtomic, IBV_QP_MAX_QP_RD_ATOMIC);
ABI_SAME_VALUE(v::kQpMinRnrTimer, IBV_QP_MIN_RNR_TIMER);
ABI_SAME_VALUE(v::kQpSqPsn, IBV_QP_SQ_PSN);
ABI_SAME_VALUE(v::kQpMaxDestRdAtomic, IBV_QP_MAX_DEST_RD_ATOMIC);
ABI_SAME_VALUE(v::kQpDestQpn, IBV_QP_DEST_QPN);
