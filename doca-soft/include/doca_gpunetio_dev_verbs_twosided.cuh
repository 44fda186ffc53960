/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API, GPU verbs: two-sided operations (send, post receive, wait for a
 * receive). Header-only CUDA, DOCA 3.3's names, template signatures and defaults.
 *
 * The i-th message arriving on a QP consumes the i-th posted receive (FIFO) and produces
 * receive CQE number i on the QP's receive CQ (opcode RESP_SEND, byte_cnt = message
 * length; with inline receive and <= 32 bytes, the data sits in the CQE's first 32 bytes,
 * op_own bit 0x4 is set and the posted buffer is not written).
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_TWOSIDED_CUH_
#define DOCA_GPUNETIO_DEV_VERBS_TWOSIDED_CUH_

#include "doca_gpunetio_dev_verbs_onesided.cuh"

/* doca-soft: the SEND WQE at `idx` of `bytes` bytes from addr/lkey, asking for a CQE. */
__device__ static inline void doca_priv_gpu_dev_verbs_prepare_send_at(struct doca_gpu_dev_verbs_qp *qp,
								       uint64_t idx,
								       uint64_t addr,
								       uint32_t lkey,
								       uint32_t bytes)
{
	doca_gpu_dev_verbs_wqe_prepare_send(qp,
					    doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx),
					    (uint16_t)idx,
					    DOCA_GPUNETIO_MLX5_OPCODE_SEND,
					    DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					    0,
					    addr,
					    lkey,
					    bytes);
}

/** SEND of `size` bytes from `laddr`, by the calling thread (1 GiB per WQE). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_send_thread(struct doca_gpu_dev_verbs_qp *qp,
							      struct doca_gpu_dev_verbs_addr laddr,
							      size_t size,
							      doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t n = doca_priv_gpu_dev_verbs_num_chunks(size);
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t idx = base + i;
		doca_gpu_dev_verbs_wqe_prepare_send(qp,
						    doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx),
						    (uint16_t)idx,
						    DOCA_GPUNETIO_MLX5_OPCODE_SEND,
						    DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
						    0,
						    laddr.addr + i * DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE,
						    laddr.key,
						    doca_priv_gpu_dev_verbs_chunk_bytes(size, i));
	}
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, base, n);
	*out_ticket = base + n - 1;
}

/** SEND by a whole warp: lane i sends its buffer with WQE base + i. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_send_warp(struct doca_gpu_dev_verbs_qp *qp,
							    struct doca_gpu_dev_verbs_addr laddr,
							    size_t size,
							    doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out_ticket);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, lane, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	uint64_t idx = base + lane;
	doca_priv_gpu_dev_verbs_prepare_send_at(qp, idx, laddr.addr, laddr.key, (uint32_t)size);
	doca_priv_gpu_dev_verbs_warp_post<resource_sharing_mode, nic_handler>(qp, lane, base, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	*out_ticket = idx;
}

/** SEND of `size` bytes from `laddr`; ticket = send-queue WQE index. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_send(struct doca_gpu_dev_verbs_qp *qp,
						       struct doca_gpu_dev_verbs_addr laddr,
						       size_t size,
						       doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_send_warp<resource_sharing_mode, nic_handler>(qp, laddr, size, out_ticket);
	else
		doca_gpu_dev_verbs_send_thread<resource_sharing_mode, nic_handler>(qp, laddr, size, out_ticket);
}

/**
 * Posts a receive of up to `size` bytes into `raddr` (despite DOCA's parameter name, the
 * local buffer), by the calling thread (1 GiB per receive WQE); ticket = receive index.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_recv_thread(struct doca_gpu_dev_verbs_qp *qp,
							      struct doca_gpu_dev_verbs_addr raddr,
							      size_t size,
							      doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t n = doca_priv_gpu_dev_verbs_num_chunks(size);
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, (uint32_t)n);
	for (uint64_t i = 0; i < n; i++)
		doca_gpu_dev_verbs_wqe_prepare_recv(qp,
						    doca_gpu_dev_verbs_get_rwqe_ptr(qp, (uint16_t)(base + i)),
						    raddr.addr + i * DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE,
						    raddr.key,
						    doca_priv_gpu_dev_verbs_chunk_bytes(size, i));
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, base, n);
	*out_ticket = base + n - 1;
}

/** Posts 32 receives, one per lane (lane i: receive base + i). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_recv_warp(struct doca_gpu_dev_verbs_qp *qp,
							    struct doca_gpu_dev_verbs_addr raddr,
							    size_t size,
							    doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out_ticket);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, lane, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	uint64_t idx = base + lane;
	doca_gpu_dev_verbs_wqe_prepare_recv(qp, doca_gpu_dev_verbs_get_rwqe_ptr(qp, (uint16_t)idx), raddr.addr, raddr.key, (uint32_t)size);
	doca_priv_gpu_dev_verbs_warp_post<resource_sharing_mode, nic_handler, DOCA_GPUNETIO_VERBS_QP_RQ>(qp,
												     lane,
												     base,
												     DOCA_GPUNETIO_VERBS_WARP_SIZE);
	*out_ticket = idx;
}

/** Posts a receive into `raddr` (the local buffer); ticket = receive-queue WQE index. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_recv(struct doca_gpu_dev_verbs_qp *qp,
						       struct doca_gpu_dev_verbs_addr raddr,
						       size_t size,
						       doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_recv_warp<resource_sharing_mode, nic_handler>(qp, raddr, size, out_ticket);
	else
		doca_gpu_dev_verbs_recv_thread<resource_sharing_mode, nic_handler>(qp, raddr, size, out_ticket);
}

/**
 * Waits for receive `*ticket` and returns its CQE in `*cqe`. MCST_ENABLED first posts a
 * one-byte DUMP of `daddr` on the send queue and waits for it. An error CQE is not
 * reported (DOCA 3.3 behaviour): read the CQE's opcode to check.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>
__device__ static inline void doca_gpu_dev_verbs_recv_wait(struct doca_gpu_dev_verbs_qp *qp,
							    struct doca_gpu_dev_verbs_addr daddr,
							    doca_gpu_dev_verbs_ticket_t *ticket,
							    struct mlx5_cqe64 **cqe)
{
	if constexpr (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED) {
		uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
		doca_priv_gpu_dev_verbs_prepare_dump_at(qp, idx, daddr);
		doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, idx, 1);
		doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, idx);
	} else {
		(void)daddr;
	}
	doca_gpu_dev_verbs_poll_cq<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ, blocking_mode>(&qp->cq_rq, *ticket, cqe);
}

/** recv_wait for the last receive posted (none posted: returns, `*cqe` untouched). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>
__device__ static inline void doca_gpu_dev_verbs_recv_wait(struct doca_gpu_dev_verbs_qp *qp,
							    struct doca_gpu_dev_verbs_addr daddr,
							    struct mlx5_cqe64 **cqe)
{
	if constexpr (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED) {
		uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
		doca_priv_gpu_dev_verbs_prepare_dump_at(qp, idx, daddr);
		doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, idx, 1);
		doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, idx);
	} else {
		(void)daddr;
	}
	uint64_t rsvd = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->rq_rsvd_index);
	if (rsvd == 0)
		return;
	doca_gpu_dev_verbs_poll_cq<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_RQ, blocking_mode>(&qp->cq_rq, rsvd - 1, cqe);
}

#endif /* DOCA_GPUNETIO_DEV_VERBS_TWOSIDED_CUH_ */
