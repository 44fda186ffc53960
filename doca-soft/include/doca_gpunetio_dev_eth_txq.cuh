/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: send on an Ethernet TX queue (struct doca_gpu_eth_txq, the ring of
 * doca_soft_ring.h). Header-only CUDA.
 *
 * A send reserves descriptor indices (its tickets), writes the descriptors, then publishes
 * them in order through `sq_ready` after a system-scope fence; the CPU proxy sends them.
 * Completions exist for NOTIFY sends and errors; with doca_eth_txq_gpu_set_completion_on_gpu
 * they land in the queue's completion ring, polled with doca_gpu_dev_eth_txq_poll_completion.
 *
 * Also the pre-3.2 names (send_enqueue_*, commit_*, push, get_info, wait_completion).
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_
#define DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio_dev_buf.cuh"
#include "doca_gpunetio_dev_eth_common.cuh"
#include "doca_gpunetio_eth_def.h"

#define DOCA_GPUNETIO_ETH_EMPW_DSEG_NUM 4
#define DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM 61

/** Ticket of a send (descriptor index). */
typedef uint64_t doca_gpu_dev_eth_txq_ticket_t;

/** One send-ring entry (64 bytes). */
struct doca_gpu_dev_eth_txq_wqe {
	struct doca_soft_tx_desc desc;
};

static_assert(sizeof(struct doca_gpu_dev_eth_txq_wqe) == 64, "txq wqe size");

__device__ __forceinline__ struct doca_soft_tx_desc *doca_gpu_dev_eth_txq_desc(const struct doca_gpu_eth_txq *txq,
									      uint64_t idx)
{
	return (struct doca_soft_tx_desc *)txq->desc_addr + (idx & txq->desc_mask);
}

/** Descriptor flags for a send: NOTIFY as asked, checksum bits as the queue is set up. */
__device__ __forceinline__ uint32_t doca_gpu_dev_eth_txq_desc_flags(const struct doca_gpu_eth_txq *txq,
								    uint32_t send_flags)
{
	uint32_t f = (send_flags & DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY) ? DOCA_SOFT_TX_FLAG_NOTIFY : 0u;
	if (txq->l3_csum)
		f |= DOCA_SOFT_TX_FLAG_L3_CSUM;
	if (txq->l4_csum)
		f |= DOCA_SOFT_TX_FLAG_L4_CSUM;
	return f;
}

/** Waits until descriptors below `end` fit in the ring (the proxy consumed enough). */
__device__ __forceinline__ void doca_gpu_dev_eth_txq_wait_room(const struct doca_gpu_eth_txq *txq, uint64_t end)
{
	while (end - doca_gpu_dev_eth_load_acquire_sys(&txq->sq_done.value) > txq->desc_num)
		;
}

/** Reserves `n` consecutive descriptor indices and waits for room; returns the first. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_txq_reserve_wq_slots(struct doca_gpu_eth_txq *txq, uint32_t n)
{
	uint64_t base = doca_gpu_dev_eth_atomic_add<uint64_t, sharing>(&txq->sq_rsvd.value, (uint64_t)n);
	doca_gpu_dev_eth_txq_wait_room(txq, base + n);
	return base;
}

/** Publishes [base, base + n) after every earlier reservation (system-scope ordering). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_mark_wqes_ready(struct doca_gpu_eth_txq *txq,
								     uint64_t base,
								     uint32_t n)
{
	/* The proxy is a CPU thread: descriptor writes must reach system scope first. */
	__threadfence_system();
	if constexpr (sharing != DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		while (doca_gpu_dev_eth_load_acquire_sys(&txq->sq_ready.value) != base)
			;
	}
	doca_gpu_dev_eth_store_release_sys(&txq->sq_ready.value, base + n);
}

/*
 * Thread-scope sends, aggregated over the lanes of a warp that call together.
 *
 * Each calling thread sends its own descriptors, but lanes of one warp must not publish one
 * after the other: a lane spinning until the previous slot is published can keep the lane
 * that owns that slot from ever running (seen on an H200: no frame left the queue). So the
 * first active lane reserves `per_lane` slots for every active lane, each lane writes its
 * own, and that lane alone publishes the group in order; only whole groups wait for each
 * other, never lanes of one warp.
 */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_txq_reserve_lane_slots(struct doca_gpu_eth_txq *txq,
									    uint32_t per_lane)
{
	const unsigned int mask = __activemask();
	const unsigned int lane = doca_gpu_dev_eth_get_lane_id();
	const unsigned int leader = (unsigned int)__ffs(mask) - 1;
	const unsigned int rank = (unsigned int)__popc(mask & ((1u << lane) - 1));
	uint64_t base = 0;
	if (lane == leader)
		base = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, per_lane * (uint32_t)__popc(mask));
	base = __shfl_sync(mask, base, (int)leader);
	return base + (uint64_t)rank * per_lane;
}

/* Publishes the group's slots once every lane has written its descriptors. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_publish_lane_slots(struct doca_gpu_eth_txq *txq,
									uint64_t my_idx,
									uint32_t per_lane)
{
	const unsigned int mask = __activemask();
	const unsigned int lane = doca_gpu_dev_eth_get_lane_id();
	const unsigned int leader = (unsigned int)__ffs(mask) - 1;
	const uint32_t n = per_lane * (uint32_t)__popc(mask);
	/* Each lane's descriptor writes reach system scope before the group is published. */
	__threadfence_system();
	__syncwarp(mask);
	const uint64_t base = __shfl_sync(mask, my_idx, (int)leader);
	if (lane == leader)
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing, sync_scope>(txq, base, n);
	__syncwarp(mask);
}

__device__ __forceinline__ void doca_gpu_dev_eth_txq_write_send(const struct doca_gpu_eth_txq *txq,
								uint64_t idx,
								uint64_t addr,
								uint32_t mkey,
								size_t size,
								uint32_t send_flags)
{
	struct doca_soft_tx_desc *d = doca_gpu_dev_eth_txq_desc(txq, idx);
	d->addr = addr;
	d->len = (uint32_t)size;
	d->mkey = mkey;
	d->opcode = DOCA_SOFT_TX_OP_SEND;
	d->flags = doca_gpu_dev_eth_txq_desc_flags(txq, send_flags);
	d->wait_on_time = 0;
	d->addr2 = 0;
	d->len2 = 0;
	d->mkey2 = 0;
	d->wqe_index = idx;
}

__device__ __forceinline__ void doca_gpu_dev_eth_txq_write_wait(const struct doca_gpu_eth_txq *txq,
								uint64_t idx,
								uint64_t wait_on_time_ts)
{
	struct doca_soft_tx_desc *d = doca_gpu_dev_eth_txq_desc(txq, idx);
	d->addr = 0;
	d->len = 0;
	d->mkey = 0;
	d->opcode = DOCA_SOFT_TX_OP_WAIT;
	d->flags = 0;
	d->wait_on_time = wait_on_time_ts;
	d->addr2 = 0;
	d->len2 = 0;
	d->mkey2 = 0;
	d->wqe_index = idx;
}

/** Rank of the calling lane among the active lanes, their count and the leader lane. */
__device__ __forceinline__ void doca_gpu_dev_eth_warp_ranks(unsigned int *mask, uint32_t *n, uint32_t *rank, int *leader)
{
	unsigned int m = __activemask();
	unsigned int lane = doca_gpu_dev_eth_get_lane_id();
	*mask = m;
	*n = (uint32_t)__popc(m);
	*rank = (uint32_t)__popc(m & ((1u << lane) - 1u));
	*leader = __ffs(m) - 1;
}

__device__ __forceinline__ uint32_t doca_gpu_dev_eth_block_rank(void)
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ uint32_t doca_gpu_dev_eth_block_size(void)
{
	return blockDim.x * blockDim.y * blockDim.z;
}

/* ---- send ------------------------------------------------------------------------------- */

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_send_thread(struct doca_gpu_eth_txq *txq,
								 uint64_t addr,
								 uint32_t mkey,
								 size_t size,
								 enum doca_gpu_eth_send_flags flags,
								 doca_gpu_dev_eth_ticket_t *out_ticket)
{
	const uint64_t idx = doca_gpu_dev_eth_txq_reserve_lane_slots<sharing>(txq, 1);
	doca_gpu_dev_eth_txq_write_send(txq, idx, addr, mkey, size, flags);
	doca_gpu_dev_eth_txq_publish_lane_slots<sharing, sync_scope>(txq, idx, 1);
	if (out_ticket != nullptr)
		*out_ticket = idx;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_send_warp(struct doca_gpu_eth_txq *txq,
							       uint64_t addr,
							       uint32_t mkey,
							       size_t size,
							       enum doca_gpu_eth_send_flags flags,
							       doca_gpu_dev_eth_ticket_t *out_ticket)
{
	unsigned int mask;
	uint32_t n, rank;
	int leader;
	doca_gpu_dev_eth_warp_ranks(&mask, &n, &rank, &leader);
	unsigned long long base = 0;
	if (rank == 0)
		base = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n);
	base = __shfl_sync(mask, base, leader);
	doca_gpu_dev_eth_txq_write_send(txq, base + rank, addr, mkey, size, flags);
	__syncwarp(mask);
	if (rank == 0)
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing, sync_scope>(txq, base, n);
	__syncwarp(mask);
	if (out_ticket != nullptr)
		*out_ticket = base + rank;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_send_block(struct doca_gpu_eth_txq *txq,
								uint64_t addr,
								uint32_t mkey,
								size_t size,
								enum doca_gpu_eth_send_flags flags,
								doca_gpu_dev_eth_ticket_t *out_ticket)
{
	__shared__ uint64_t doca_soft_tx_base;
	uint32_t rank = doca_gpu_dev_eth_block_rank();
	uint32_t n = doca_gpu_dev_eth_block_size();
	if (rank == 0)
		doca_soft_tx_base = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n);
	__syncthreads();
	uint64_t base = doca_soft_tx_base;
	doca_gpu_dev_eth_txq_write_send(txq, base + rank, addr, mkey, size, flags);
	__syncthreads();
	if (rank == 0)
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing, sync_scope>(txq, base, n);
	if (out_ticket != nullptr)
		*out_ticket = base + rank;
	__syncthreads();
}

/** Send one frame per participating thread (`exec_scope` says who participates). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_send(struct doca_gpu_eth_txq *txq,
							  uint64_t addr,
							  uint32_t mkey,
							  size_t size,
							  enum doca_gpu_eth_send_flags flags,
							  doca_gpu_dev_eth_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		doca_gpu_dev_eth_txq_send_warp<sharing, sync_scope, nic_handler>(txq, addr, mkey, size, flags, out_ticket);
	else if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK)
		doca_gpu_dev_eth_txq_send_block<sharing, sync_scope, nic_handler>(txq, addr, mkey, size, flags, out_ticket);
	else
		doca_gpu_dev_eth_txq_send_thread<sharing, sync_scope, nic_handler>(txq, addr, mkey, size, flags, out_ticket);
}

/* ---- timed send: a WAIT descriptor, then the send(s) ------------------------------------ */

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_wait_send_thread(struct doca_gpu_eth_txq *txq,
								      const uint64_t wait_on_time_ts,
								      uint64_t addr,
								      uint32_t mkey,
								      size_t size,
								      enum doca_gpu_eth_send_flags flags,
								      doca_gpu_dev_eth_ticket_t *out_ticket)
{
	const uint64_t idx = doca_gpu_dev_eth_txq_reserve_lane_slots<sharing>(txq, 2);
	doca_gpu_dev_eth_txq_write_wait(txq, idx, wait_on_time_ts);
	doca_gpu_dev_eth_txq_write_send(txq, idx + 1, addr, mkey, size, flags);
	doca_gpu_dev_eth_txq_publish_lane_slots<sharing, sync_scope>(txq, idx, 2);
	if (out_ticket != nullptr)
		*out_ticket = idx + 1;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_wait_send_warp(struct doca_gpu_eth_txq *txq,
								    const uint64_t wait_on_time_ts,
								    uint64_t addr,
								    uint32_t mkey,
								    size_t size,
								    enum doca_gpu_eth_send_flags flags,
								    doca_gpu_dev_eth_ticket_t *out_ticket)
{
	unsigned int mask;
	uint32_t n, rank;
	int leader;
	doca_gpu_dev_eth_warp_ranks(&mask, &n, &rank, &leader);
	unsigned long long base = 0;
	if (rank == 0) {
		base = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n + 1);
		doca_gpu_dev_eth_txq_write_wait(txq, base, wait_on_time_ts);
	}
	base = __shfl_sync(mask, base, leader);
	doca_gpu_dev_eth_txq_write_send(txq, base + 1 + rank, addr, mkey, size, flags);
	__syncwarp(mask);
	if (rank == 0)
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing, sync_scope>(txq, base, n + 1);
	__syncwarp(mask);
	if (out_ticket != nullptr)
		*out_ticket = base + 1 + rank;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_wait_send_block(struct doca_gpu_eth_txq *txq,
								     const uint64_t wait_on_time_ts,
								     uint64_t addr,
								     uint32_t mkey,
								     size_t size,
								     enum doca_gpu_eth_send_flags flags,
								     doca_gpu_dev_eth_ticket_t *out_ticket)
{
	__shared__ uint64_t doca_soft_tx_wait_base;
	uint32_t rank = doca_gpu_dev_eth_block_rank();
	uint32_t n = doca_gpu_dev_eth_block_size();
	if (rank == 0) {
		uint64_t b = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n + 1);
		doca_gpu_dev_eth_txq_write_wait(txq, b, wait_on_time_ts);
		doca_soft_tx_wait_base = b;
	}
	__syncthreads();
	uint64_t base = doca_soft_tx_wait_base;
	doca_gpu_dev_eth_txq_write_send(txq, base + 1 + rank, addr, mkey, size, flags);
	__syncthreads();
	if (rank == 0)
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing, sync_scope>(txq, base, n + 1);
	if (out_ticket != nullptr)
		*out_ticket = base + 1 + rank;
	__syncthreads();
}

/** Send after CLOCK_REALTIME reaches `wait_on_time_ts` (see calculate_timestamp). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_wait_send(struct doca_gpu_eth_txq *txq,
							       const uint64_t wait_on_time_ts,
							       uint64_t addr,
							       uint32_t mkey,
							       size_t size,
							       enum doca_gpu_eth_send_flags flags,
							       doca_gpu_dev_eth_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		doca_gpu_dev_eth_txq_wait_send_warp<sharing, sync_scope, nic_handler>(txq,
										     wait_on_time_ts,
										     addr,
										     mkey,
										     size,
										     flags,
										     out_ticket);
	else if constexpr (exec_scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK)
		doca_gpu_dev_eth_txq_wait_send_block<sharing, sync_scope, nic_handler>(txq,
										      wait_on_time_ts,
										      addr,
										      mkey,
										      size,
										      flags,
										      out_ticket);
	else
		doca_gpu_dev_eth_txq_wait_send_thread<sharing, sync_scope, nic_handler>(txq,
										       wait_on_time_ts,
										       addr,
										       mkey,
										       size,
										       flags,
										       out_ticket);
}

/* ---- completions ------------------------------------------------------------------------ */

__device__ __forceinline__ const struct doca_soft_tx_cqe *doca_gpu_dev_eth_txq_cqe(const struct doca_gpu_eth_txq *txq,
										   uint64_t idx)
{
	return (const struct doca_soft_tx_cqe *)txq->cq_addr + (idx & txq->cq_mask);
}

/** Reserves `num_cqe` completions; B waits for them, NB takes them only if all are there. */
template <enum doca_gpu_dev_eth_cq_poll_mode cq_poll = DOCA_GPUNETIO_ETH_CQ_POLL_ALL,
	  enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_poll_completion(struct doca_gpu_eth_txq *txq,
									     const uint32_t num_cqe,
									     enum doca_gpu_dev_eth_wait_flags wait_mode,
									     uint32_t *num_completed)
{
	if (txq == nullptr || num_completed == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_completed = 0;
	if (num_cqe == 0)
		return DOCA_SUCCESS;
	uint64_t start;
	if (wait_mode == DOCA_GPUNETIO_ETH_WAIT_FLAG_B) {
		start = doca_gpu_dev_eth_atomic_add<uint64_t, sharing>(&txq->cq_rsvd.value, (uint64_t)num_cqe);
		while (doca_gpu_dev_eth_load_acquire_sys(&txq->cq_pi.value) < start + num_cqe)
			;
	} else {
		uint64_t cur = DOCA_GPUNETIO_ETH_VOLATILE(txq->cq_rsvd.value);
		uint64_t pi = doca_gpu_dev_eth_load_acquire_sys(&txq->cq_pi.value);
		uint64_t avail = pi > cur ? pi - cur : 0;
		if (avail < num_cqe) {
			*num_completed = (uint32_t)avail;
			return DOCA_SUCCESS;
		}
		if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
			txq->cq_rsvd.value = cur + num_cqe;
		} else {
			if (atomicCAS((unsigned long long *)&txq->cq_rsvd.value, cur, cur + num_cqe) != cur)
				return DOCA_SUCCESS;
		}
		start = cur;
	}
	bool error = false;
	if constexpr (cq_poll == DOCA_GPUNETIO_ETH_CQ_POLL_LAST) {
		error = doca_gpu_dev_eth_txq_cqe(txq, start + num_cqe - 1)->status != 0;
	} else {
		for (uint64_t k = start; k < start + num_cqe; k++)
			error |= doca_gpu_dev_eth_txq_cqe(txq, k)->status != 0;
	}
	__threadfence_system();
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->cq_ci.value, start + num_cqe);
	*num_completed = num_cqe;
	return error ? DOCA_ERROR_UNEXPECTED : DOCA_SUCCESS;
}

/** Completion number `cqe_idx` (counting from the queue's start): B waits for it, NB
 * returns DOCA_ERROR_AGAIN while it is not there. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_poll_completion_at(struct doca_gpu_eth_txq *txq,
										const uint64_t cqe_idx,
										enum doca_gpu_dev_eth_wait_flags wait_mode)
{
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	while (doca_gpu_dev_eth_load_acquire_sys(&txq->cq_pi.value) <= cqe_idx) {
		if (wait_mode != DOCA_GPUNETIO_ETH_WAIT_FLAG_B)
			return DOCA_ERROR_AGAIN;
	}
	bool error = doca_gpu_dev_eth_txq_cqe(txq, cqe_idx)->status != 0;
	__threadfence_system();
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->cq_rsvd.value, cqe_idx + 1);
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->cq_ci.value, cqe_idx + 1);
	return error ? DOCA_ERROR_UNEXPECTED : DOCA_SUCCESS;
}

/** Wait-on-time value of a CLOCK_REALTIME time: BE64 of seconds << 32 | nanoseconds. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_calculate_timestamp(const struct doca_gpu_eth_txq *txq,
										 const uint64_t timestamp_ns,
										 uint64_t *wait_on_time_ts)
{
	if (txq == nullptr || wait_on_time_ts == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t v = ((timestamp_ns / DOCA_GPUNETIO_ETH_NS_PER_S) << 32) | (timestamp_ns % DOCA_GPUNETIO_ETH_NS_PER_S);
	*wait_on_time_ts = doca_gpu_dev_eth_bswap64(v);
	return DOCA_SUCCESS;
}

/* ---- low level: descriptors written by the caller, then submitted ----------------------- */

/** Full descriptor index of a 16-bit index near the producer position. */
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_txq_full_index(const struct doca_gpu_eth_txq *txq, uint16_t wqe_idx)
{
	uint64_t ready = doca_gpu_dev_eth_load_acquire_sys(&txq->sq_ready.value);
	return ready + (uint16_t)(wqe_idx - (uint16_t)ready);
}

/** Entry `wqe_idx` of the send ring, once the proxy has room for it. */
__device__ __forceinline__ struct doca_gpu_dev_eth_txq_wqe *doca_gpu_dev_eth_txq_get_wqe_ptr(struct doca_gpu_eth_txq *txq,
											    uint16_t wqe_idx)
{
	uint64_t full = doca_gpu_dev_eth_txq_full_index(txq, wqe_idx);
	doca_gpu_dev_eth_txq_wait_room(txq, full + 1);
	return (struct doca_gpu_dev_eth_txq_wqe *)doca_gpu_dev_eth_txq_desc(txq, full);
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_send(const struct doca_gpu_eth_txq *txq,
									      struct doca_gpu_dev_eth_txq_wqe *wqe,
									      const uint16_t wqe_idx,
									      const uint64_t addr,
									      const uint32_t mkey,
									      const uint32_t nbytes,
									      const enum doca_gpu_eth_send_flags flags)
{
	if (txq == nullptr || wqe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	wqe->desc.addr = addr;
	wqe->desc.len = nbytes;
	wqe->desc.mkey = mkey;
	wqe->desc.opcode = DOCA_SOFT_TX_OP_SEND;
	wqe->desc.flags = doca_gpu_dev_eth_txq_desc_flags(txq, flags);
	wqe->desc.wait_on_time = 0;
	wqe->desc.addr2 = 0;
	wqe->desc.len2 = 0;
	wqe->desc.mkey2 = 0;
	wqe->desc.wqe_index = wqe_idx;
	return DOCA_SUCCESS;
}

/** Two gather segments (e.g. headers and payload from different buffers). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_send(const struct doca_gpu_eth_txq *txq,
									      struct doca_gpu_dev_eth_txq_wqe *wqe,
									      const uint16_t wqe_idx,
									      const uint64_t addr0,
									      const uint32_t mkey0,
									      const uint32_t nbytes0,
									      const uint64_t addr1,
									      const uint32_t mkey1,
									      const uint32_t nbytes1,
									      const enum doca_gpu_eth_send_flags flags)
{
	doca_error_t r = doca_gpu_dev_eth_txq_wqe_prepare_send(txq, wqe, wqe_idx, addr0, mkey0, nbytes0, flags);
	if (r != DOCA_SUCCESS)
		return r;
	wqe->desc.addr2 = addr1;
	wqe->desc.mkey2 = mkey1;
	wqe->desc.len2 = nbytes1;
	return DOCA_SUCCESS;
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_wait_time(const struct doca_gpu_eth_txq *txq,
										   struct doca_gpu_dev_eth_txq_wqe *wqe,
										   const uint16_t wqe_idx,
										   const uint64_t wait_on_time_ts)
{
	if (txq == nullptr || wqe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	wqe->desc.addr = 0;
	wqe->desc.len = 0;
	wqe->desc.mkey = 0;
	wqe->desc.opcode = DOCA_SOFT_TX_OP_WAIT;
	wqe->desc.flags = 0;
	wqe->desc.wait_on_time = wait_on_time_ts;
	wqe->desc.addr2 = 0;
	wqe->desc.len2 = 0;
	wqe->desc.mkey2 = 0;
	wqe->desc.wqe_index = wqe_idx;
	return DOCA_SUCCESS;
}

/** Publishes every descriptor below `prod_index` (written with get_wqe_ptr + prepare). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ __forceinline__ void doca_gpu_dev_eth_txq_submit(struct doca_gpu_eth_txq *txq, uint64_t prod_index)
{
	__threadfence_system();
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->sq_rsvd.value, prod_index);
	atomicMax((unsigned long long *)&txq->sq_ready.value, (unsigned long long)prod_index);
	__threadfence_system();
}

/* ---- Pre-3.2 names on the same ring ---------------------------------------------------- */

/** Send flags of the pre-3.2 API. */
enum doca_gpu_send_flags {
	DOCA_GPU_SEND_FLAG_NONE = 0,
	DOCA_GPU_SEND_FLAG_NOTIFY = 1,
};

/** Wait modes of doca_gpu_dev_eth_txq_wait_completion. */
enum doca_gpu_dev_eth_txq_wait_flags {
	DOCA_GPU_DEV_ETH_TXQ_WAIT_FLAG_NB = 0,
	DOCA_GPU_DEV_ETH_TXQ_WAIT_FLAG_B = 1,
};

/** Full descriptor index of a 32-bit position near the reservation counter. */
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_txq_position_index(const struct doca_gpu_eth_txq *txq,
									uint32_t position)
{
	uint64_t rsvd = DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_rsvd.value);
	return rsvd + (uint64_t)(int64_t)(int32_t)(position - (uint32_t)rsvd);
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_send_enqueue_strong(struct doca_gpu_eth_txq *txq,
										 const struct doca_gpu_buf *buf,
										 const uint32_t nbytes,
										 const uint32_t flags)
{
	if (txq == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_gpu_dev_eth_txq_reserve_wq_slots(txq, 1);
	doca_gpu_dev_eth_txq_write_send(txq, idx, buf->addr, buf->mkey, nbytes, flags);
	return DOCA_SUCCESS;
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_send_enqueue_weak(const struct doca_gpu_eth_txq *txq,
									       const struct doca_gpu_buf *buf,
									       const uint32_t nbytes,
									       const uint32_t position,
									       const uint32_t flags)
{
	if (txq == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_gpu_dev_eth_txq_position_index(txq, position);
	doca_gpu_dev_eth_txq_wait_room(txq, idx + 1);
	doca_gpu_dev_eth_txq_write_send(txq, idx, buf->addr, buf->mkey, nbytes, flags);
	return DOCA_SUCCESS;
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_wait_time_enqueue_strong(struct doca_gpu_eth_txq *txq,
										     const uint64_t wait_on_time_value,
										     const uint32_t flags)
{
	(void)flags;
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_gpu_dev_eth_txq_reserve_wq_slots(txq, 1);
	doca_gpu_dev_eth_txq_write_wait(txq, idx, wait_on_time_value);
	return DOCA_SUCCESS;
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_wait_time_enqueue_weak(struct doca_gpu_eth_txq *txq,
										   const uint64_t wait_on_time_value,
										   const uint32_t position,
										   const uint32_t flags)
{
	(void)flags;
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_gpu_dev_eth_txq_position_index(txq, position);
	doca_gpu_dev_eth_txq_wait_room(txq, idx + 1);
	doca_gpu_dev_eth_txq_write_wait(txq, idx, wait_on_time_value);
	return DOCA_SUCCESS;
}

/** Publishes everything enqueued so far (callers synchronise their enqueues first). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_commit_strong(struct doca_gpu_eth_txq *txq)
{
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	__threadfence_system();
	uint64_t end = DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_rsvd.value);
	atomicMax((unsigned long long *)&txq->sq_ready.value, (unsigned long long)end);
	return DOCA_SUCCESS;
}

/** Accounts `elements` weak enqueues and publishes them. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_commit_weak(struct doca_gpu_eth_txq *txq,
									 const uint32_t elements)
{
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	__threadfence_system();
	uint64_t end = atomicAdd((unsigned long long *)&txq->sq_rsvd.value, (unsigned long long)elements) + elements;
	atomicMax((unsigned long long *)&txq->sq_ready.value, (unsigned long long)end);
	return DOCA_SUCCESS;
}

/** Doorbell: the proxy polls the ring, nothing to ring. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_push(struct doca_gpu_eth_txq *txq)
{
	return txq == nullptr ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

/** Next free position and the ring mask (for weak enqueues at position + k). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_get_info(struct doca_gpu_eth_txq *txq,
								      uint32_t *curr_position,
								      uint32_t *mask_max_position)
{
	if (txq == nullptr || curr_position == nullptr || mask_max_position == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*curr_position = (uint32_t)DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_rsvd.value);
	*mask_max_position = txq->desc_mask;
	return DOCA_SUCCESS;
}

/** Waits for (B) or checks (NB) `num_sends` NOTIFY completions. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_eth_txq_wait_completion(struct doca_gpu_eth_txq *txq,
									     uint32_t num_sends,
									     enum doca_gpu_dev_eth_txq_wait_flags wait_flags,
									     uint32_t *num_completed)
{
	return doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_ALL>(
		txq,
		num_sends,
		wait_flags == DOCA_GPU_DEV_ETH_TXQ_WAIT_FLAG_B ? DOCA_GPUNETIO_ETH_WAIT_FLAG_B : DOCA_GPUNETIO_ETH_WAIT_FLAG_NB,
		num_completed);
}

#endif /* DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_ */
