/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: the GPU handles of the legacy GPU RDMA API (doca_gpunetio_dev_rdma.cuh),
 * opaque in DOCA 3.3 and defined by doca-soft. C-compatible; the Rust side mirrors both
 * structs and both sides assert the same sizes and offsets.
 *
 * Design: the legacy API runs on the GPU verbs machinery, so one proxy NIC serves both.
 * Each connection of a doca_rdma is one verbs QP (struct doca_gpu_dev_verbs_qp, filled as
 * for doca_gpu_verbs_export_qp: SQ ring of 64-byte mlx5 WQEs, doorbells per nic_handler,
 * send CQ `cq_sq`). Receives of every connection go to one shared receive queue, itself a
 * verbs QP descriptor of which only the receive half is used (RQ ring of 16-byte receive
 * WQEs, `rq_dbrec`, receive CQ `cq_rq`), like an SRQ.
 *
 * Send side, per connection QP:
 *   - a strong operation reserves the next WQE index from `sq_rsvd_index` (atomic);
 *   - a weak operation at `position` uses WQE index sq_wqe_pi + ((position - sq_wqe_pi) &
 *     sq_wqe_mask), i.e. positions count from the last commit;
 *   - both wait until their ring slot is free (the CQE of index - ring size), then write
 *     one WQE asking for a completion: RDMA write 0x08 / write-with-immediate 0x09 (no data
 *     segment when the length is 0: DS 2), inline write (<= 28 bytes), RDMA read 0x10,
 *     send 0x0a / send-with-immediate 0x0b (no data segment when the length is 0), inline
 *     send (<= 44 bytes: at byte 16 BE32(len | 0x80000000) then the payload, DS =
 *     ceil((20 + len) / 16)); immediates are stored raw;
 *   - commit_weak(n) publishes up to sq_wqe_pi + n, commit_strong up to `sq_rsvd_index`:
 *     `sq_ready_index` = that index, `sq_rsvd_index` raised to it, then the verbs submit of
 *     the QP's nic_handler (CPU proxy: the index goes to the `sq_db` slot; `sq_wqe_pi`
 *     follows). Each commit call counts one in `commits`.
 *   - wait_all waits for the CQE of sq_wqe_pi - 1 on every connection's `cq_sq`, and
 *     returns (and zeroes) `commits`: the commits made since the previous wait_all.
 * Receive side (`recv.qp`):
 *   - receives are 16-byte RQ WQEs {BE32 length, key, BE64 address}; a receive without a
 *     buffer is {0, BE32(MLX5_INVALID_LKEY = 0x100), 0}; weak/strong/commit as above with
 *     the rq_* counters; commits write the RQ doorbell record BE32(prod & 0xFFFF);
 *   - the proxy delivers an incoming send / send-with-immediate / write-with-immediate of
 *     any connection into the next posted receive and writes receive CQE number = receive
 *     index on `recv.qp->cq_rq`: opcode RESP_SEND 0x2, RESP_SEND_IMM 0x3 or RESP_WR_IMM 0x1,
 *     byte_cnt, the raw immediate in imm_inval_pkey, and in sop_drop_qpn the QPN of the
 *     connection QP it arrived on (`conn_qps[i].sq_num`), from which recv_wait_all derives
 *     the connection index;
 *   - recv_wait_all reports receive CQEs from `cq_rq.cqe_ci` up to `rq_wqe_pi` (B: waits for
 *     all of them; NB: those present now) and advances `cqe_ci` past them.
 */
#ifndef DOCA_SOFT_DEV_RDMA_RING_H_
#define DOCA_SOFT_DEV_RDMA_RING_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_gpunetio_verbs_def.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Layout version of the two handles; bumped on any change. */
#define DOCA_SOFT_DEV_RDMA_VERSION 1

/** Inline payload limits of the legacy API. */
#define DOCA_SOFT_DEV_RDMA_MAX_INLINE_WRITE 28
#define DOCA_SOFT_DEV_RDMA_MAX_INLINE_SEND 44

/** Largest single operation (one WQE): mlx5's 2^31 - 1 bytes. */
#define DOCA_SOFT_DEV_RDMA_MAX_LENGTH 0x7fffffffULL

/** Opaque in DOCA 3.3 and unused by its device API; declared for completeness. */
struct doca_gpu_rdma_recv_h;

/** Receive side of a GPU RDMA handle (doca_gpu_dev_rdma_get_recv). */
struct doca_gpu_dev_rdma_r {
	struct doca_gpu_dev_verbs_qp *qp; /* shared receive queue: RQ half and cq_rq only */
	uint64_t rsvd[7];
};

/** GPU handle of a doca_rdma (doca_rdma_get_gpu_handle). */
struct doca_gpu_dev_rdma {
	uint32_t version;                        /* DOCA_SOFT_DEV_RDMA_VERSION */
	uint32_t num_connections;                /* entries of conn_qps */
	struct doca_gpu_dev_verbs_qp *conn_qps;  /* one QP per connection index (send half) */
	uint64_t commits;                        /* commit calls since the last wait_all (GPU-written) */
	uint64_t rsvd[5];
	struct doca_gpu_dev_rdma_r recv;
};

DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_rdma_r) == 64, "rdma_r size");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_rdma_r, qp) == 0, "rdma_r qp");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_rdma) == 128, "rdma size");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_rdma, num_connections) == 4, "rdma num_connections");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_rdma, conn_qps) == 8, "rdma conn_qps");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_rdma, commits) == 16, "rdma commits");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_rdma, recv) == 64, "rdma recv");

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_DEV_RDMA_RING_H_ */
