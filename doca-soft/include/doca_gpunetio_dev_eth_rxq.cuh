/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: receive from an Ethernet RX queue (struct doca_gpu_eth_rxq, the
 * ring of doca_soft_ring.h). Header-only CUDA.
 *
 * Receive waits until `max_rx_pkts` completions are published (0: no count limit) or
 * `timeout_ns` passed (0: no time limit; with both 0 it returns as soon as something
 * arrived), reports the consecutive packet slots [first, first + num), then hands the
 * completion entries back by advancing the consumer index. Packet data stays valid until
 * the ring laps. One receiving group (thread, warp or block) per queue at a time.
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

static_assert(sizeof(struct doca_gpu_dev_eth_rxq_attr) == 16, "rxq attr size");

__device__ __forceinline__ const struct doca_soft_rx_cqe *doca_gpu_dev_eth_rxq_cqe(const struct doca_gpu_eth_rxq *rxq,
										    uint64_t idx)
{
	return (const struct doca_soft_rx_cqe *)rxq->cqe_addr + (idx % rxq->cqe_num);
}

/**
 * The waiting part of receive, run by one thread: returns how many completions from `ci`
 * on are taken (the consumer index is not moved yet).
 */
__device__ __forceinline__ uint32_t doca_gpu_dev_eth_rxq_wait(struct doca_gpu_eth_rxq *rxq,
							      uint64_t ci,
							      uint32_t max_rx_pkts,
							      uint64_t timeout_ns)
{
	uint64_t start = doca_gpu_dev_eth_query_globaltimer();
	for (;;) {
		uint64_t pi = doca_gpu_dev_eth_load_acquire_sys(&rxq->cqe_pi.value);
		uint64_t avail = pi - ci;
		if (max_rx_pkts != 0 && avail >= max_rx_pkts)
			return max_rx_pkts;
		if (timeout_ns != 0 && doca_gpu_dev_eth_query_globaltimer() - start >= timeout_ns)
			return (uint32_t)avail;
		if (max_rx_pkts == 0 && timeout_ns == 0 && avail != 0)
			return (uint32_t)avail;
	}
}

/** Fills attributes of packets [k0, n) stepping by `step` (k0 = this thread's rank). */
template <enum doca_gpu_dev_eth_rxq_attr_type rx_attr>
__device__ __forceinline__ void doca_gpu_dev_eth_rxq_fill_attr(const struct doca_gpu_eth_rxq *rxq,
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
			const struct doca_soft_rx_cqe *c = doca_gpu_dev_eth_rxq_cqe(rxq, ci + k);
			out_attr[k].timestamp_ns = c->timestamp_ns;
			if constexpr (rx_attr == DOCA_GPUNETIO_ETH_RX_ATTR_ALL)
				out_attr[k].bytes = c->bytes;
		}
	}
}

/** Hands `n` entries back to the proxy (after the caller read them). */
__device__ __forceinline__ void doca_gpu_dev_eth_rxq_release(struct doca_gpu_eth_rxq *rxq, uint64_t ci, uint32_t n)
{
	if (n != 0)
		doca_gpu_dev_eth_store_release_sys(&rxq->cqe_ci.value, ci + n);
}

/** Multicast "dump" WQE (pre-Hopper NICs): nothing to do for the soft NIC. */
template <enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_rxq_mcst(struct doca_gpu_eth_mcst_qp *mcst_qp)
{
	(void)mcst_qp;
}

/** Receive doorbell records: the proxy reads the consumer index directly (no-op). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_rxq_submit_dbr(struct doca_gpu_eth_rxq *rxq, uint64_t idx)
{
	(void)rxq;
	(void)idx;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_rxq_submit_cq_dbr(struct doca_gpu_eth_rxq *rxq, uint64_t idx)
{
	(void)rxq;
	(void)idx;
}

/** Receive by one thread. */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_rxq_recv_thread(struct doca_gpu_eth_rxq *rxq,
									 uint32_t max_rx_pkts,
									 uint64_t timeout_ns,
									 uint64_t *out_first_pkt_idx,
									 uint32_t *out_pkt_num,
									 struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	if (rxq == nullptr || out_first_pkt_idx == nullptr || out_pkt_num == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t ci = DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_ci.value);
	uint32_t n = doca_gpu_dev_eth_rxq_wait(rxq, ci, max_rx_pkts, timeout_ns);
	*out_pkt_num = n;
	*out_first_pkt_idx = n ? doca_gpu_dev_eth_rxq_cqe(rxq, ci)->slot : DOCA_GPUNETIO_ETH_RX_NO_PKT;
	doca_gpu_dev_eth_rxq_fill_attr<rx_attr>(rxq, ci, n, 0, 1, out_attr);
	doca_gpu_dev_eth_rxq_release(rxq, ci, n);
	return DOCA_SUCCESS;
}

/** Receive by a full warp (every lane calls; outputs in shared memory). */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_rxq_recv_warp(struct doca_gpu_eth_rxq *rxq,
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
		ci = DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_ci.value);
		n = doca_gpu_dev_eth_rxq_wait(rxq, ci, max_rx_pkts, timeout_ns);
		*out_pkt_num = n;
		*out_first_pkt_idx = n ? doca_gpu_dev_eth_rxq_cqe(rxq, ci)->slot : DOCA_GPUNETIO_ETH_RX_NO_PKT;
	}
	ci = __shfl_sync(DOCA_GPUNETIO_ETH_WARP_FULL_MASK, (unsigned long long)ci, 0);
	n = __shfl_sync(DOCA_GPUNETIO_ETH_WARP_FULL_MASK, n, 0);
	doca_gpu_dev_eth_rxq_fill_attr<rx_attr>(rxq, ci, n, lane, DOCA_GPUNETIO_ETH_WARP_SIZE, out_attr);
	__syncwarp();
	if (lane == 0)
		doca_gpu_dev_eth_rxq_release(rxq, ci, n);
	__syncwarp();
	return DOCA_SUCCESS;
}

/** Receive by a whole block (every thread calls; outputs in shared memory). */
template <enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_rxq_recv_block(struct doca_gpu_eth_rxq *rxq,
									uint32_t max_rx_pkts,
									uint64_t timeout_ns,
									uint64_t *out_first_pkt_idx,
									uint32_t *out_pkt_num,
									struct doca_gpu_dev_eth_rxq_attr *out_attr)
{
	__shared__ uint64_t doca_soft_rx_ci;
	__shared__ uint32_t doca_soft_rx_n;
	if (rxq == nullptr || out_first_pkt_idx == nullptr || out_pkt_num == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	if (threadIdx.x == 0) {
		uint64_t ci = DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_ci.value);
		uint32_t n = doca_gpu_dev_eth_rxq_wait(rxq, ci, max_rx_pkts, timeout_ns);
		doca_soft_rx_ci = ci;
		doca_soft_rx_n = n;
		*out_pkt_num = n;
		*out_first_pkt_idx = n ? doca_gpu_dev_eth_rxq_cqe(rxq, ci)->slot : DOCA_GPUNETIO_ETH_RX_NO_PKT;
	}
	__syncthreads();
	uint64_t ci = doca_soft_rx_ci;
	uint32_t n = doca_soft_rx_n;
	doca_gpu_dev_eth_rxq_fill_attr<rx_attr>(rxq, ci, n, threadIdx.x, blockDim.x, out_attr);
	__syncthreads();
	if (threadIdx.x == 0)
		doca_gpu_dev_eth_rxq_release(rxq, ci, n);
	return DOCA_SUCCESS;
}

/** Receive with the execution scope chosen at compile time. */
template <enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_eth_mcst_mode mcst_mode = DOCA_GPUNETIO_ETH_MCST_DISABLED,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_rxq_attr_type rx_attr = DOCA_GPUNETIO_ETH_RX_ATTR_NONE>
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_rxq_recv(struct doca_gpu_eth_rxq *rxq,
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
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_rxq_get_pkt_addr(struct doca_gpu_eth_rxq *rxq, uint64_t packet_idx)
{
	uint64_t idx = packet_idx >= rxq->pkt_num ? packet_idx - rxq->pkt_num : packet_idx;
	return rxq->pkt_addr + (uint64_t)rxq->max_pkt_sz * idx;
}

/** mkey of the packet buffer (big-endian), to send a received packet in place. */
__device__ __forceinline__ uint32_t doca_gpu_dev_eth_rxq_get_pkt_mkey(struct doca_gpu_eth_rxq *rxq)
{
	return rxq->pkt_mkey;
}

/** Receive time of packet `packet_idx` (read from its completion; valid until it laps). */
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_rxq_get_pkt_ts(const struct doca_gpu_eth_rxq *rxq,
								    uint64_t packet_idx)
{
	return doca_gpu_dev_eth_rxq_cqe(rxq, packet_idx)->timestamp_ns;
}

/** Length of packet `packet_idx`. */
__device__ __forceinline__ uint32_t doca_gpu_dev_eth_rxq_get_pkt_bytes(const struct doca_gpu_eth_rxq *rxq,
								       uint64_t packet_idx)
{
	return doca_gpu_dev_eth_rxq_cqe(rxq, packet_idx)->bytes;
}

/* ---- Pre-3.2 names on the same ring ---------------------------------------------------- */

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_rxq_receive_thread(struct doca_gpu_eth_rxq *rxq,
									    uint32_t max_rx_pkts,
									    uint64_t timeout_ns,
									    uint32_t *num_rx_pkts,
									    uint64_t *doca_gpu_buf_idx)
{
	return doca_gpu_dev_eth_rxq_recv_thread(rxq, max_rx_pkts, timeout_ns, doca_gpu_buf_idx, num_rx_pkts, nullptr);
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_rxq_receive_warp(struct doca_gpu_eth_rxq *rxq,
									  uint32_t max_rx_pkts,
									  uint64_t timeout_ns,
									  uint32_t *num_rx_pkts,
									  uint64_t *doca_gpu_buf_idx)
{
	return doca_gpu_dev_eth_rxq_recv_warp(rxq, max_rx_pkts, timeout_ns, doca_gpu_buf_idx, num_rx_pkts, nullptr);
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_rxq_receive_block(struct doca_gpu_eth_rxq *rxq,
									   uint32_t max_rx_pkts,
									   uint64_t timeout_ns,
									   uint32_t *num_rx_pkts,
									   uint64_t *doca_gpu_buf_idx)
{
	return doca_gpu_dev_eth_rxq_recv_block(rxq, max_rx_pkts, timeout_ns, doca_gpu_buf_idx, num_rx_pkts, nullptr);
}

/** The buffer of packet `doca_gpu_buf_idx` (address via doca_gpu_dev_buf_get_addr). */
__device__ __forceinline__ void doca_gpu_dev_eth_rxq_get_buf(struct doca_gpu_eth_rxq *rxq,
							     uint64_t doca_gpu_buf_idx,
							     struct doca_gpu_buf **buf)
{
	*buf = (struct doca_gpu_buf *)rxq->buf_addr + (doca_gpu_buf_idx % rxq->pkt_num);
}

__device__ __forceinline__ void doca_gpu_dev_eth_rxq_get_buf_timestamp(const struct doca_gpu_eth_rxq *rxq,
								       uint64_t doca_gpu_buf_idx,
								       uint64_t *timestamp_ns)
{
	*timestamp_ns = doca_gpu_dev_eth_rxq_get_pkt_ts(rxq, doca_gpu_buf_idx);
}

__device__ __forceinline__ void doca_gpu_dev_eth_rxq_get_buf_bytes(const struct doca_gpu_eth_rxq *rxq,
								   uint64_t doca_gpu_buf_idx,
								   uint32_t *nbytes)
{
	*nbytes = doca_gpu_dev_eth_rxq_get_pkt_bytes(rxq, doca_gpu_buf_idx);
}

#endif /* DOCA_GPUNETIO_DEV_ETH_RXQ_CUH_ */
