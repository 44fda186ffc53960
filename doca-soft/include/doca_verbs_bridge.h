/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: bridges between DOCA Verbs and rdma-core's libibverbs: open a DOCA Verbs
 * context on an ibv_device, hand a DOCA Verbs PD to libibverbs (ibv_reg_mr on it), and
 * drive CPU-side QPs/CQs with ibv work requests.
 *
 * The data-path bridges (poll/post) are for CPU data-path queues only: queues created with
 * the external data path enabled refuse them.
 */
#ifndef DOCA_VERBS_BRIDGE_H_
#define DOCA_VERBS_BRIDGE_H_

#include <stdint.h>

#ifdef __linux__
/*
 * rdma-core's verbs declarations (struct ibv_pd, ibv_wc, ...), as DOCA 3.3 includes them.
 * The installed header when the compiler can find one, else doca-soft's subset in compat/
 * (README.md, "rdma-core headers"); no include flag is needed either way.
 */
#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#else
#include "compat/infiniband/verbs.h"
#endif
#else
#include <infiniband/verbs.h>
#endif
#endif

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ibv_device;
struct ibv_context;
struct ibv_pd;
struct ibv_qp_attr;
struct ibv_wc;
struct ibv_send_wr;
struct ibv_recv_wr;

/* Open a DOCA Verbs context on an rdma-core device; NOT_CONNECTED if it cannot be opened. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_bridge_verbs_context_create(struct ibv_device *ibv_dev,
						    uint32_t flags,
						    struct doca_verbs_context **verbs_ctx);

/* Wrap an already open rdma-core context. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_bridge_verbs_context_import(struct ibv_context *ibv_ctx,
						    uint32_t flags,
						    struct doca_verbs_context **verbs_ctx);

/* Device attributes of an rdma-core context (free with doca_verbs_device_attr_free). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_bridge_verbs_query_device(struct ibv_context *ibv_ctx,
						  struct doca_verbs_device_attr **verbs_device_attr);

/* Wrap an rdma-core protection domain. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_bridge_verbs_pd_import(struct ibv_pd *ibv_pd, struct doca_verbs_pd **verbs_pd);

/* The rdma-core PD behind a DOCA Verbs PD (usable with ibv_reg_mr; its ->context too). */
DOCA_EXPERIMENTAL
struct ibv_pd *doca_verbs_bridge_verbs_pd_get_ibv_pd(const struct doca_verbs_pd *verbs_pd);

/* The rdma-core context behind a DOCA Verbs context. */
DOCA_EXPERIMENTAL
struct ibv_context *doca_verbs_bridge_get_ibv_ctx(struct doca_verbs_context *verbs_ctx);

/* Copy the fields of an ibv_qp_attr named by ibv_attr_mask (IBV_QP_* bits) into verbs_qp_attr. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_bridge_qp_attr_set(struct doca_verbs_qp_attr *verbs_qp_attr,
					   const struct ibv_qp_attr *ibv_qp_attr,
					   int ibv_attr_mask);

/* Copy verbs_qp_attr into an ibv_qp_attr. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_bridge_qp_attr_get(const struct doca_verbs_qp_attr *verbs_qp_attr,
					   struct ibv_qp_attr *ibv_qp_attr);

/* The DOCA_VERBS_QP_ATTR_* mask equivalent to an IBV_QP_* mask. */
DOCA_EXPERIMENTAL
int doca_verbs_bridge_get_qp_attr_mask(int ibv_attr_mask);

/* Poll up to num_entries completions, as ibv_poll_cq does (count, or negative on error). */
DOCA_EXPERIMENTAL
int doca_verbs_bridge_poll_cq(struct doca_verbs_cq *verbs_cq, int num_entries, struct ibv_wc *wc);

/* Post receive requests, as ibv_post_recv does (0 or an errno value). */
DOCA_EXPERIMENTAL
int doca_verbs_bridge_post_recv(struct doca_verbs_qp *verbs_qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* Post send requests, as ibv_post_send does (0 or an errno value). */
DOCA_EXPERIMENTAL
int doca_verbs_bridge_post_send(struct doca_verbs_qp *verbs_qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

/* Consumer index the CQ has reached. */
DOCA_EXPERIMENTAL
uint32_t doca_verbs_bridge_get_current_cq_ci(struct doca_verbs_cq *verbs_cq);

/* Turn wr into a WAIT request that holds its QP until the CQ's producer index reaches wait_pi. */
DOCA_EXPERIMENTAL
int doca_verbs_bridge_set_wait_cq_pi_wr(struct doca_verbs_cq *verbs_cq, uint32_t wait_pi, struct ibv_send_wr *wr);

/* Post receive requests to a shared receive queue (0 or an errno value). */
DOCA_EXPERIMENTAL
int doca_verbs_bridge_post_srq_recv(struct doca_verbs_srq *verbs_srq,
				    struct ibv_recv_wr *wr,
				    struct ibv_recv_wr **bad_wr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERBS_BRIDGE_H_ */
