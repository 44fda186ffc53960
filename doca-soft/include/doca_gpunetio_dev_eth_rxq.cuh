/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: receive from an Ethernet RX queue (struct doca_gpu_eth_rxq: RQ of
 * one mlx5 data segment per packet slot, CQ of mlx5_cqe64). Header-only CUDA.
 *
 * Receive waits until `max_rx_pkts` completions are present (0: no count limit) or
 * `timeout_ns` passed (0: no time limit; with both 0 it returns as soon as something
 * arrived), reports the consecutive packet slots [first, first + num) (first = the first
 * completion's wqe_counter & wqe_mask), then hands the completions and slots back:
 * consumer index `cqe_ci`, CQ doorbell record, RQ producer index and doorbell record.
 * Packet data stays valid until the ring laps. One receiving group (thread, warp or block)
 * per queue at a time.
 *
 * Completion k is present when its owner bit equals (k / cqe_num) & 1 and its opcode is
 * not INVALID. The CPU proxy writes completions in order, each op_own byte last: when k is
 * present every earlier one is, so a receive finds how many arrived with one read when all
 * asked for are there, and a binary search (log2 reads) otherwise.
 *
 * Also the pre-3.2 names (doca_gpu_dev_eth_rxq_receive_*, rxq_get_buf) on the same ring.
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_
#define DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_

#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio_dev_buf.cuh"
#include "doca_gpunetio_dev_eth_common.cuh"
#include "doca_gpunetio_eth_def.h"

/** First packet index reported when nothing was received. */
#define DOCA_GPUNETIO_ETH_RX_NO_PKT 0xFFFFFFFFFFFFFFFFULL

/** Which per-packet attributes receive fills in. */
enum doca_gpu_dev_eth_rxq_attr_type {
	DOCA_GPUNETIO_ETH_RX_ATTR_NONE = 0,
	DOCA_GPUNETIO_ETH_RX_ATTR_TS = 1,
	DOCA_GPUNETIO_ETH_RX_ATTR_ALL = 2,
};

/** Per-packet attributes. */
struct doca_gpu_dev_eth_rxq_attr {
	uint64_t timestamp_ns;
	uint32_t bytes;
	uint32_t padding;
};

/** DUMP WQE a pre-Hopper receive posts to the multicast QP: control segment (DS 2), one
 * data segment naming one byte, padding to the 64-byte slot. */
struct doca_gpu_dev_eth_rxq_dump_wqe {
	struct doca_gpu_dev_eth_wqe_ctrl_seg cseg;
	struct mlx5_wqe_data_seg dseg;
	uint8_t rsvd[32];
} __attribute__((__aligned__(8)));

static_assert(sizeof(struct doca_gpu_dev_eth_rxq_attr) == 16, "rxq attr size");
static_assert(sizeof(struct doca_gpu_dev_eth_rxq_dump_wqe) == 64, "dump wqe size");

/* doca-soft internal: the waiting part of receive, run by one thread: how many
 * completions from `ci` on are taken (nothing is handed back yet). */
__device__ static inline uint32_t doca_priv_gpu_dev_eth_rxq_wait(struct doca_gpu_eth_rxq *rxq,
								  uint64_t ci,
								  uint32_t max_rx_pkts,
								  uint64_t timeout_ns)
{
	const uint32_t ring = rxq->cqe_num;
	const uint32_t limit = (max_rx_pkts == 0 || max_rx_pkts > ring) ? ring : max_rx_pkts;
	const uint64_t start = doca_gpu_dev_eth_query_globaltimer();
	uint32_t n = 0;
	for (;;) {
		n = doca_priv_gpu_dev_eth_cq_count(rxq->cqe_addr, ring, ci, n, limit);
		if (max_rx_pkts != 0 && n >= limit)
			return n;
		if (timeout_ns != 0 && doca_gpu_dev_eth_query_globaltimer() - start >= timeout_ns)
			return n;
		if (max_rx_pkts == 0 && timeout_ns == 0 && n != 0)
			return n;
	}
}

/* doca-soft internal: the packet slot completion `idx` names. */
__device__ static inline uint64_t doca_priv_gpu_dev_eth_rxq_first(struct doca_gpu_eth_rxq *rxq, uint64_t idx)
{
	const struct mlx5_cqe64 *c = (const struct mlx5_cqe64 *)rxq->cqe_addr + (idx & rxq->cqe_mask);
	return (uint64_t)(DOCA_GPUNETIO_ETH_BSWAP16(DOCA_GPUNETIO_ETH_VOLATILE(c->wqe_counter)) & rxq->wqe_mask);
}

/* doca-soft internal: attributes of packets [k0, n) stepping by `step`. */
template <enum doca_gpu_dev_eth_rxq_attr_type rx_attr>
__device__ static inline void doca_priv_gpu_dev_eth_rxq_fill_attr(const struct doca_gpu_eth_rxq *rxq,
								   uint64_t ci,
								   uint32_t n,
								   uint32_t k0,
								   uint32_t step,
								   struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	if constexpr (rx_attr == DOCA_GPUNETIO_ETH_RX_ATTR_NONE) {
		(void)rxq;
		(void)ci;
		(void)n;
		(void)k0;
		(void)step;
		(void)out_attr;
	} else {
		if (out_attr == nullptr)
			return;
		for (uint32_t k = k0; k < n; k += step) {
			const struct mlx5_cqe64 *c = (const struct mlx5_cqe64 *)rxq->cqe_addr + ((ci + k) & rxq->cqe_mask);
			uint64_t ts = doca_gpu_dev_eth_bswap64(DOCA_GPUNETIO_ETH_VOLATILE(c->timestamp));
			out_attr[k].timestamp_ns = (ts & 0xffffffffULL) + (ts >> 32) * DOCA_GPUNETIO_NS_PER_S;
			if constexpr (rx_attr == DOCA_GPUNETIO_ETH_RX_ATTR_ALL)
				out_attr[k].bytes = doca_gpu_dev_eth_bswap32(DOCA_GPUNETIO_ETH_VOLATILE(c->byte_cnt));
		}
	}
}

/** Writes the RQ doorbell record for producer index `idx` (the slots below are posted). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_rxq_submit_dbr(struct doca_gpu_eth_rxq *rxq, uint64_t idx)
{
	doca_gpu_dev_eth_fence_release<sync_scope>();
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&rxq->wqe_pi, idx);
	doca_priv_gpu_dev_eth_store_relaxed_sys_u32((uint32_t *)rxq->wqe_db_rec,
						    (uint32_t)doca_gpu_dev_eth_prepare_dbr((uint32_t)idx));
}

/** Writes the CQ doorbell record for consumer index `idx`. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_rxq_submit_cq_dbr(struct doca_gpu_eth_rxq *rxq, uint64_t idx)
{
	(void)sizeof(sharing);
	doca_gpu_dev_eth_fence_release<sync_scope>();
	doca_priv_gpu_dev_eth_store_relaxed_sys_u32((uint32_t *)rxq->cq_db_rec,
						    (uint32_t)doca_gpu_dev_eth_prepare_cq_dbr((uint32_t)idx));
}

/* doca-soft internal: hands `n` completions from `ci` (and their slots) back. */
__device__ static inline void doca_priv_gpu_dev_eth_rxq_release(struct doca_gpu_eth_rxq *rxq, uint64_t ci, uint32_t n)
{
	if (n == 0)
		return;
	/* The proxy reads the 64-bit consumer index (the doorbell records carry 16/24 bits,
	 * written as 3.3 writes them; no fence of their own: the release store orders them). */
	doca_priv_gpu_dev_eth_store_release_sys(&rxq->cqe_ci, ci + n);
	const uint64_t pi = rxq->wqe_pi + n;
	rxq->wqe_pi = pi;
	doca_priv_gpu_dev_eth_store_relaxed_sys_u32((uint32_t *)rxq->cq_db_rec,
						    (uint32_t)doca_gpu_dev_eth_prepare_cq_dbr((uint32_t)(ci + n)));
	doca_priv_gpu_dev_eth_store_relaxed_sys_u32((uint32_t *)rxq->wqe_db_rec,
						    (uint32_t)doca_gpu_dev_eth_prepare_dbr((uint32_t)pi));
}

/**
 * Posts a DUMP WQE (one byte read) to the multicast QP, the memory-ordering barrier
 * pre-Hopper GPUs need after receiving into GPU memory. doca-soft's queues have no such QP
 * (`sq_wqe_num` 0; the proxy copies a packet before writing its completion): SUCCESS.
 */
template <enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_mcst(struct doca_gpu_eth_mcst_qp *mcst_qp)
{
	if (mcst_qp == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (mcst_qp->sq_wqe_num == 0)
		return DOCA_SUCCESS;
	uint64_t idx = doca_gpu_dev_eth_atomic_add<uint64_t, DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>(&mcst_qp->sq_rsvd_index,
													     1);
	struct doca_gpu_dev_eth_rxq_dump_wqe *w =
		(struct doca_gpu_dev_eth_rxq_dump_wqe *)(mcst_qp->sq_wqe_addr + ((idx & mcst_qp->sq_wqe_mask) << 6));
	uint64_t seg[2];
	seg[0] = ((uint64_t)(mcst_qp->sq_num_shift8_be | (2u << 24)) << 32) |
		 doca_gpu_dev_eth_bswap32(((uint32_t)(idx & 0xffff) << 8) | DOCA_SOFT_ETH_OPCODE_DUMP);
	seg[1] = (uint64_t)doca_gpu_dev_eth_bswap32(MLX5_WQE_CTRL_CQ_UPDATE) & 0xffffffffULL;
	doca_gpu_dev_eth_store_wqe_seg((uint64_t *)&w->cseg, seg);
	seg[0] = ((uint64_t)mcst_qp->dump_mkey << 32) | doca_gpu_dev_eth_bswap32(1);
	seg[1] = doca_gpu_dev_eth_bswap64(mcst_qp->dump_addr);
	doca_gpu_dev_eth_store_wqe_seg((uint64_t *)&w->dseg, seg);
	__threadfence_system();
	doca_gpu_dev_eth_atomic_max<uint64_t, DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>(&mcst_qp->sq_wqe_pi, idx + 1);
	doca_gpu_dev_eth_store_relaxed_mmio(mcst_qp->sq_db, idx + 1);
	return DOCA_SUCCESS;
}

/* doca-soft internal: the multicast step of a receive, per `mcst_mode`. */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode, enum doca_gpu_dev_eth_nic_handler nic_handler>
__device__ static inline doca_error_t doca_priv_gpu_dev_eth_rxq_mcst_step(struct doca_gpu_eth_rxq *rxq, uint32_t n)
{
	if (n == 0)
		return DOCA_SUCCESS;
	if constexpr (mcst_mode == DOCA_GPUNETIO_ETH_MCST_ENABLED)
		return doca_gpu_dev_eth_rxq_mcst<nic_handler>(&rxq->mcst_qp);
	else if constexpr (mcst_mode == DOCA_GPUNETIO_ETH_MCST_AUTO)
		return rxq->need_mcst ? doca_gpu_dev_eth_rxq_mcst<nic_handler>(&rxq->mcst_qp) : DOCA_SUCCESS;
	else
		return DOCA_SUCCESS;
}

/** Receive by one thread. */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_recv_thread(struct doca_gpu_eth_rxq *rxq,
									uint32_t max_rx_pkts,
									uint64_t timeout_ns,
									uint64_t *out_first_pkt_idx,
									uint32_t *out_pkt_num,
									struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	if (rxq == nullptr || out_first_pkt_idx == nullptr || out_pkt_num == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t ci = DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_ci);
	uint32_t n = doca_priv_gpu_dev_eth_rxq_wait(rxq, ci, max_rx_pkts, timeout_ns);
	*out_pkt_num = n;
	*out_first_pkt_idx = n ? doca_priv_gpu_dev_eth_rxq_first(rxq, ci) : DOCA_GPUNETIO_ETH_RX_NO_PKT;
	doca_priv_gpu_dev_eth_rxq_fill_attr<rx_attr>(rxq, ci, n, 0, 1, out_attr);
	doca_priv_gpu_dev_eth_rxq_release(rxq, ci, n);
	return doca_priv_gpu_dev_eth_rxq_mcst_step<mcst_mode, nic_handler>(rxq, n);
}

/** Receive by a full warp (every lane calls; outputs in shared memory). */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_recv_warp(struct doca_gpu_eth_rxq *rxq,
								      uint32_t max_rx_pkts,
								      uint64_t timeout_ns,
								      uint64_t *out_first_pkt_idx,
								      uint32_t *out_pkt_num,
								      struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	if (rxq == nullptr || out_first_pkt_idx == nullptr || out_pkt_num == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	unsigned int lane = doca_gpu_dev_eth_get_lane_id();
	uint64_t ci = 0;
	uint32_t n = 0;
	if (lane == 0) {
		ci = DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_ci);
		n = doca_priv_gpu_dev_eth_rxq_wait(rxq, ci, max_rx_pkts, timeout_ns);
		*out_pkt_num = n;
		*out_first_pkt_idx = n ? doca_priv_gpu_dev_eth_rxq_first(rxq, ci) : DOCA_GPUNETIO_ETH_RX_NO_PKT;
	}
	ci = __shfl_sync(DOCA_GPUNETIO_ETH_WARP_FULL_MASK, (unsigned long long)ci, 0);
	n = __shfl_sync(DOCA_GPUNETIO_ETH_WARP_FULL_MASK, n, 0);
	doca_priv_gpu_dev_eth_rxq_fill_attr<rx_attr>(rxq, ci, n, lane, DOCA_GPUNETIO_ETH_WARP_SIZE, out_attr);
	__syncwarp();
	doca_error_t r = DOCA_SUCCESS;
	if (lane == 0) {
		doca_priv_gpu_dev_eth_rxq_release(rxq, ci, n);
		r = doca_priv_gpu_dev_eth_rxq_mcst_step<mcst_mode, nic_handler>(rxq, n);
	}
	__syncwarp();
	return (doca_error_t)__shfl_sync(DOCA_GPUNETIO_ETH_WARP_FULL_MASK, (int)r, 0);
}

/** Receive by a whole block (every thread calls; outputs in shared memory). */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_recv_block(struct doca_gpu_eth_rxq *rxq,
								       uint32_t max_rx_pkts,
								       uint64_t timeout_ns,
								       uint64_t *out_first_pkt_idx,
								       uint32_t *out_pkt_num,
								       struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	__shared__ uint64_t doca_soft_rx_ci;
	__shared__ uint32_t doca_soft_rx_n;
	__shared__ int doca_soft_rx_r;
	if (rxq == nullptr || out_first_pkt_idx == nullptr || out_pkt_num == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (threadIdx.x == 0) {
		uint64_t ci = DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_ci);
		uint32_t n = doca_priv_gpu_dev_eth_rxq_wait(rxq, ci, max_rx_pkts, timeout_ns);
		doca_soft_rx_ci = ci;
		doca_soft_rx_n = n;
		*out_pkt_num = n;
		*out_first_pkt_idx = n ? doca_priv_gpu_dev_eth_rxq_first(rxq, ci) : DOCA_GPUNETIO_ETH_RX_NO_PKT;
	}
	__syncthreads();
	uint64_t ci = doca_soft_rx_ci;
	uint32_t n = doca_soft_rx_n;
	doca_priv_gpu_dev_eth_rxq_fill_attr<rx_attr>(rxq, ci, n, threadIdx.x, blockDim.x, out_attr);
	__syncthreads();
	if (threadIdx.x == 0) {
		doca_priv_gpu_dev_eth_rxq_release(rxq, ci, n);
		doca_soft_rx_r = (int)doca_priv_gpu_dev_eth_rxq_mcst_step<mcst_mode, nic_handler>(rxq, n);
	}
	__syncthreads();
	return (doca_error_t)doca_soft_rx_r;
}

/** Receive with the execution scope chosen at compile time. */
template <enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_recv(struct doca_gpu_eth_rxq *rxq,
								 uint32_t max_rx_pkts,
								 uint64_t timeout_ns,
								 uint64_t *out_first_pkt_idx,
								 uint32_t *out_pkt_num,
								 struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		return doca_gpu_dev_eth_rxq_recv_warp<mcst_mode, nic_handler, rx_attr>(rxq,
										       max_rx_pkts,
										       timeout_ns,
										       out_first_pkt_idx,
										       out_pkt_num,
										       out_attr);
	else if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK)
		return doca_gpu_dev_eth_rxq_recv_block<mcst_mode, nic_handler, rx_attr>(rxq,
											max_rx_pkts,
											timeout_ns,
											out_first_pkt_idx,
											out_pkt_num,
											out_attr);
	else
		return doca_gpu_dev_eth_rxq_recv_thread<mcst_mode, nic_handler, rx_attr>(rxq,
											 max_rx_pkts,
											 timeout_ns,
											 out_first_pkt_idx,
											 out_pkt_num,
											 out_attr);
}

/** Address of packet `packet_idx` (valid for indices below 2 x pkt_num: one wrap). */
__device__ static inline uint64_t doca_gpu_dev_eth_rxq_get_pkt_addr(struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	uint64_t idx = packet_idx >= rxq->pkt_num ? packet_idx - rxq->pkt_num : packet_idx;
	return rxq->pkt_addr + (uint64_t)rxq->max_pkt_sz * idx;
}

/** mkey of the packet buffer (big-endian), to send a received packet in place. */
__device__ static inline uint32_t doca_gpu_dev_eth_rxq_get_pkt_mkey(struct doca_gpu_eth_rxq *rxq)
{
	return rxq->pkt_mkey;
}

/** The completion in the CQ slot of packet `packet_idx` (idx & cqe_mask): byte count,
 * timestamp and WQE counter readable; stale once the ring laps (prefer receive's attrs). */
__device__ static inline struct mlx5_cqe64 *doca_gpu_dev_eth_rxq_get_pkt_cqe(const struct doca_gpu_eth_rxq *rxq,
									      uint64_t packet_idx)
{
	return (struct mlx5_cqe64 *)rxq->cqe_addr + (packet_idx & rxq->cqe_mask);
}

/** Receive time of packet `packet_idx` in ns (from its completion). */
__device__ static inline uint64_t doca_gpu_dev_eth_rxq_get_pkt_ts(const struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	uint64_t ts = doca_gpu_dev_eth_bswap64(DOCA_GPUNETIO_ETH_VOLATILE(doca_gpu_dev_eth_rxq_get_pkt_cqe(rxq, packet_idx)->timestamp));
	return (ts & 0xffffffffULL) + (ts >> 32) * DOCA_GPUNETIO_NS_PER_S;
}

/** Length of packet `packet_idx` (from its completion). */
__device__ static inline uint32_t doca_gpu_dev_eth_rxq_get_pkt_bytes(const struct doca_gpu_eth_rxq *rxq,
								      uint64_t packet_idx)
{
	return doca_gpu_dev_eth_bswap32(DOCA_GPUNETIO_ETH_VOLATILE(doca_gpu_dev_eth_rxq_get_pkt_cqe(rxq, packet_idx)->byte_cnt));
}

/* ---- Pre-3.2 names on the same ring ---------------------------------------------------- */

__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_receive_thread(struct doca_gpu_eth_rxq *rxq,
									   uint32_t max_rx_pkts,
									   uint64_t timeout_ns,
									   uint32_t *num_rx_pkts,
									   uint64_t *doca_gpu_buf_idx)
{
	return doca_gpu_dev_eth_rxq_recv_thread(rxq, max_rx_pkts, timeout_ns, doca_gpu_buf_idx, num_rx_pkts, nullptr);
}

__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_receive_warp(struct doca_gpu_eth_rxq *rxq,
									 uint32_t max_rx_pkts,
									 uint64_t timeout_ns,
									 uint32_t *num_rx_pkts,
									 uint64_t *doca_gpu_buf_idx)
{
	return doca_gpu_dev_eth_rxq_recv_warp(rxq, max_rx_pkts, timeout_ns, doca_gpu_buf_idx, num_rx_pkts, nullptr);
}

__device__ static inline doca_error_t doca_gpu_dev_eth_rxq_receive_block(struct doca_gpu_eth_rxq *rxq,
									  uint32_t max_rx_pkts,
									  uint64_t timeout_ns,
									  uint32_t *num_rx_pkts,
									  uint64_t *doca_gpu_buf_idx)
{
	return doca_gpu_dev_eth_rxq_recv_block(rxq, max_rx_pkts, timeout_ns, doca_gpu_buf_idx, num_rx_pkts, nullptr);
}

/** The buffer of packet `doca_gpu_buf_idx` (address via doca_gpu_dev_buf_get_addr). */
__device__ static inline void doca_gpu_dev_eth_rxq_get_buf(struct doca_gpu_eth_rxq *rxq,
							    uint64_t doca_gpu_buf_idx,
							    struct doca_gpu_buf **buf)
{
	*buf = (struct doca_gpu_buf *)rxq->buf_addr + (doca_gpu_buf_idx % rxq->pkt_num);
}

__device__ static inline void doca_gpu_dev_eth_rxq_get_buf_timestamp(const struct doca_gpu_eth_rxq *rxq,
								      uint64_t doca_gpu_buf_idx,
								      uint64_t *timestamp_ns)
{
	*timestamp_ns = doca_gpu_dev_eth_rxq_get_pkt_ts(rxq, doca_gpu_buf_idx);
}

__device__ static inline void doca_gpu_dev_eth_rxq_get_buf_bytes(const struct doca_gpu_eth_rxq *rxq,
								  uint64_t doca_gpu_buf_idx,
								  uint32_t *nbytes)
{
	*nbytes = doca_gpu_dev_eth_rxq_get_pkt_bytes(rxq, doca_gpu_buf_idx);
}

#endif /* DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_ */
