/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: send on an Ethernet TX queue (struct doca_gpu_eth_txq: SQ of
 * 64-byte mlx5 WQEs, CQ of mlx5_cqe64). Header-only CUDA.
 *
 * A send reserves WQE indices (its tickets) from `sq_rsvd_index`, writes mlx5 WQEs
 * (control segment, Ethernet segment with the queue's checksum flags, data segment;
 * wait-on-time: a WAIT WQE before the sends), publishes them in order through
 * `sq_ready_index`, and submits the producer index: to the CPU proxy's slot (CPU_PROXY,
 * what doca-soft's queues report), or doorbell record + doorbell (GPU_SM_DB; doca-soft's
 * proxy is told through its slot as well). The proxy executes the WQEs as a NIC would.
 * A WQE with CQ_UPDATE (SEND_FLAG_NOTIFY) or one that fails gets a CQE; with
 * doca_eth_txq_gpu_set_completion_on_gpu they are polled with
 * doca_gpu_dev_eth_txq_poll_completion.
 *
 * Byte formats (all big-endian): control segment word 0 = opmod << 24 | (index & 0xffff)
 * << 8 | opcode (SEND 0x0a; WAIT 0x0f with opmod 1 = wait on time; ENHANCED_MPSW 0x29),
 * word 1 = QPN << 8 | DS, byte 11 = fm_ce_se (0x08 = CQ_UPDATE); Ethernet segment byte 4 =
 * cs_flags (L3 0x40, L4 0x80); data segment = byte count, key (as given, big-endian),
 * address; wait segment = 8 reserved bytes, then the time (seconds << 32 | ns).
 *
 * doca-soft waits where hardware cannot: a reservation (and get_wqe_ptr) waits until the
 * proxy has consumed the slot's previous WQE, so a kernel may loop past the ring size.
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

/** Data segments an enhanced multi-packet WQE takes by default / at most (2 + N <= 63 DS). */
#define DOCA_GPUNETIO_ETH_EMPW_DSEG_NUM 4
#define DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM 61
/** 16-byte segments per 64-byte WQE slot (continuation slots of a multi-packet WQE). */
#define DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE 4

/** Ticket of a send (WQE index). */
typedef uint64_t doca_gpu_dev_eth_txq_ticket_t;

/** Ethernet segment (16 bytes; no inline headers in the device helpers' WQEs). */
struct doca_gpu_dev_eth_txq_wqe_eth_seg {
	__be32 rsvd0;
	uint8_t cs_flags;
	uint8_t rsvd1;
	__be16 mss;
	__be32 rsvd2;
	__be16 inline_hdr_sz;
	uint8_t inline_hdr[2];
};

/** Wait-on-time segment (16 bytes): the time as calculate_timestamp gives it. */
struct doca_gpu_dev_eth_txq_wqe_wait_seg {
	uint32_t rsvd[2];
	__be64 wait_on_time;
};

/** One 64-byte send queue slot, with the views the helpers write. */
struct doca_gpu_dev_eth_txq_wqe {
	union {
		uint8_t raw[64];
		struct {
			struct doca_gpu_dev_eth_wqe_ctrl_seg cseg;
			struct doca_gpu_dev_eth_txq_wqe_eth_seg eseg;
			struct mlx5_wqe_data_seg dseg0;
			struct mlx5_wqe_data_seg dseg1;
		};
		struct {
			struct doca_gpu_dev_eth_wqe_ctrl_seg wait_cseg;
			struct doca_gpu_dev_eth_txq_wqe_wait_seg wseg;
			uint8_t wait_rsvd[32];
		};
	};
} __attribute__((__aligned__(8)));

/** A continuation slot of an enhanced multi-packet WQE: four data segments. */
struct doca_gpu_dev_eth_txq_wqe_empw {
	struct mlx5_wqe_data_seg dseg[DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE];
} __attribute__((__aligned__(8)));

static_assert(sizeof(struct doca_gpu_dev_eth_txq_wqe_eth_seg) == 16, "eth seg size");
static_assert(sizeof(struct doca_gpu_dev_eth_txq_wqe_wait_seg) == 16, "wait seg size");
static_assert(sizeof(struct doca_gpu_dev_eth_txq_wqe) == 64, "txq wqe size");
static_assert(sizeof(struct doca_gpu_dev_eth_txq_wqe_empw) == 64, "empw slot size");

/* ---- WQE builders (host and device) ---------------------------------------------------- */

/* doca-soft internal: a control segment (opmod_idx_opcode in host order). */
DOCA_SOFT_ETH_HD static inline void doca_priv_gpu_dev_eth_txq_ctrl(struct doca_gpu_dev_eth_wqe_ctrl_seg *cseg,
								     uint32_t opmod_idx_opcode,
								     __be32 qpn_ds,
								     uint32_t flags)
{
	uint64_t v[2];
	uint8_t fm_ce_se = (flags & DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY) ? (uint8_t)MLX5_WQE_CTRL_CQ_UPDATE : 0;
	v[0] = (uint64_t)doca_gpu_dev_eth_bswap32(opmod_idx_opcode) | ((uint64_t)qpn_ds << 32);
	v[1] = (uint64_t)fm_ce_se << 24;
	doca_gpu_dev_eth_store_wqe_seg((uint64_t *)cseg, v);
}

/* doca-soft internal: an Ethernet segment with checksum flags. */
DOCA_SOFT_ETH_HD static inline void doca_priv_gpu_dev_eth_txq_eseg(struct doca_gpu_dev_eth_txq_wqe_eth_seg *eseg,
								     uint8_t cs_flags)
{
	uint64_t v[2] = {(uint64_t)cs_flags << 32, 0};
	doca_gpu_dev_eth_store_wqe_seg((uint64_t *)eseg, v);
}

/* doca-soft internal: a data segment (mkey already big-endian). */
DOCA_SOFT_ETH_HD static inline void doca_priv_gpu_dev_eth_txq_dseg(struct mlx5_wqe_data_seg *dseg,
								     uint64_t addr,
								     uint32_t mkey,
								     uint32_t nbytes)
{
	uint64_t v[2];
	v[0] = (uint64_t)doca_gpu_dev_eth_bswap32(nbytes) | ((uint64_t)mkey << 32);
	v[1] = doca_gpu_dev_eth_bswap64(addr);
	doca_gpu_dev_eth_store_wqe_seg((uint64_t *)dseg, v);
}

/** Send WQE for one frame at `addr` (`mkey` big-endian): DS 3. */
DOCA_SOFT_ETH_HD static inline doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_send(const struct doca_gpu_eth_txq *txq,
										   struct doca_gpu_dev_eth_txq_wqe *wqe,
										   const uint16_t wqe_idx,
										   const uint64_t addr,
										   const uint32_t mkey,
										   const uint32_t nbytes,
										   const enum doca_gpu_eth_send_flags flags)
{
	if (txq == nullptr || wqe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	doca_priv_gpu_dev_eth_txq_ctrl(&wqe->cseg, ((uint32_t)wqe_idx << 8) | MLX5_OPCODE_SEND, txq->sq_num_shift8_be_3ds, flags);
	doca_priv_gpu_dev_eth_txq_eseg(&wqe->eseg, txq->cs_flags);
	doca_priv_gpu_dev_eth_txq_dseg(&wqe->dseg0, addr, mkey, nbytes);
	return DOCA_SUCCESS;
}

/** Send WQE gathering two segments into one frame (headers and payload apart): DS 4. */
DOCA_SOFT_ETH_HD static inline doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_send(const struct doca_gpu_eth_txq *txq,
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
	if (txq == nullptr || wqe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	doca_priv_gpu_dev_eth_txq_ctrl(&wqe->cseg, ((uint32_t)wqe_idx << 8) | MLX5_OPCODE_SEND, txq->sq_num_shift8_be_4ds, flags);
	doca_priv_gpu_dev_eth_txq_eseg(&wqe->eseg, txq->cs_flags);
	doca_priv_gpu_dev_eth_txq_dseg(&wqe->dseg0, addr0, mkey0, nbytes0);
	doca_priv_gpu_dev_eth_txq_dseg(&wqe->dseg1, addr1, mkey1, nbytes1);
	return DOCA_SUCCESS;
}

/** Wait-on-time WQE: the queue holds later WQEs until `wait_on_time_ts` (from
 * calculate_timestamp); WAIT opmod 1, DS 2; NOTIFY asks for a CQE when it passes. */
DOCA_SOFT_ETH_HD static inline doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_wait_time(const struct doca_gpu_eth_txq *txq,
											struct doca_gpu_dev_eth_txq_wqe *wqe,
											const uint16_t wqe_idx,
											const uint64_t wait_on_time_ts,
											const enum doca_gpu_eth_send_flags flags)
{
	if (txq == nullptr || wqe == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	doca_priv_gpu_dev_eth_txq_ctrl(&wqe->wait_cseg,
				       (DOCA_SOFT_ETH_OPMOD_WAIT_ON_TIME << 24) | ((uint32_t)wqe_idx << 8) | DOCA_SOFT_ETH_OPCODE_WAIT,
				       txq->sq_num_shift8_be_2ds,
				       flags);
	uint64_t v[2] = {0, wait_on_time_ts};
	doca_gpu_dev_eth_store_wqe_seg((uint64_t *)&wqe->wseg, v);
	return DOCA_SUCCESS;
}

/**
 * Enhanced multi-packet send WQE: `num_pkts` frames (1 to DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM),
 * frame k at `addr[k]` (`mkey[k]` big-endian, `nbytes[k]` bytes), one data segment each.
 * DS = 2 + num_pkts; the WQE takes ceil(DS / 4) consecutive slots from `wqe_idx`: the
 * first is `wqe`, the others follow in the ring (wrapping), so reserve them all.
 * NOTIFY asks for one CQE for the whole WQE.
 */
DOCA_SOFT_ETH_HD static inline doca_error_t doca_gpu_dev_eth_txq_wqe_prepare_send_empw(const struct doca_gpu_eth_txq *txq,
											struct doca_gpu_dev_eth_txq_wqe *wqe,
											const uint16_t wqe_idx,
											const uint64_t *addr,
											const uint32_t *mkey,
											const uint32_t *nbytes,
											const uint32_t num_pkts,
											const enum doca_gpu_eth_send_flags flags)
{
	if (txq == nullptr || wqe == nullptr || addr == nullptr || mkey == nullptr || nbytes == nullptr || num_pkts == 0 ||
	    num_pkts > DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM)
		return DOCA_ERROR_INVALID_VALUE;
	const uint32_t ds = 2 + num_pkts;
	doca_priv_gpu_dev_eth_txq_ctrl(&wqe->cseg,
				       ((uint32_t)wqe_idx << 8) | DOCA_SOFT_ETH_OPCODE_ENHANCED_MPSW,
				       txq->sq_num_shift8_be | (ds << 24),
				       flags);
	doca_priv_gpu_dev_eth_txq_eseg(&wqe->eseg, txq->cs_flags);
	for (uint32_t k = 0; k < num_pkts; k++) {
		const uint32_t seg = 2 + k;
		const uint32_t bb = seg / DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE;
		struct mlx5_wqe_data_seg *d;
		if (bb == 0) {
			d = (seg == 2) ? &wqe->dseg0 : &wqe->dseg1;
		} else {
			uint64_t slot = ((uint64_t)wqe_idx + bb) & txq->sq_wqe_mask;
			struct doca_gpu_dev_eth_txq_wqe_empw *w =
				(struct doca_gpu_dev_eth_txq_wqe_empw *)(txq->sq_wqe_addr + (slot << 6));
			d = &w->dseg[seg % DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE];
		}
		doca_priv_gpu_dev_eth_txq_dseg(d, addr[k], mkey[k], nbytes[k]);
	}
	return DOCA_SUCCESS;
}

/* ---- ring indices, doorbells ----------------------------------------------------------- */

/* doca-soft internal: waits until WQE index `end - 1` fits (the proxy consumed the slot's
 * previous WQE). */
__device__ static inline void doca_priv_gpu_dev_eth_txq_wait_room(const struct doca_gpu_eth_txq *txq, uint64_t end)
{
	while (end - doca_priv_gpu_dev_eth_load_acquire_sys(txq->cpu_proxy_ci) > txq->sq_wqe_num)
		;
}

/** Slot of WQE `wqe_idx` (16-bit index); doca-soft waits until the slot is free. */
__device__ static inline struct doca_gpu_dev_eth_txq_wqe *doca_gpu_dev_eth_txq_get_wqe_ptr(struct doca_gpu_eth_txq *txq,
											   uint16_t wqe_idx)
{
	while ((uint16_t)(wqe_idx - (uint16_t)doca_priv_gpu_dev_eth_load_acquire_sys(txq->cpu_proxy_ci)) >= txq->sq_wqe_num)
		;
	return (struct doca_gpu_dev_eth_txq_wqe *)(txq->sq_wqe_addr + ((uint32_t)(wqe_idx & txq->sq_wqe_mask) << 6));
}

/** Reserves `n` consecutive WQE indices (waiting for room); returns the first. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ static inline uint64_t doca_gpu_dev_eth_txq_reserve_wq_slots(struct doca_gpu_eth_txq *txq, uint32_t n)
{
	uint64_t base = doca_gpu_dev_eth_atomic_add<uint64_t, sharing>(&txq->sq_rsvd_index, (uint64_t)n);
	doca_priv_gpu_dev_eth_txq_wait_room(txq, base + n);
	return base;
}

/** Publishes WQEs [from_idx, to_idx] after every earlier one (in-order publication). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_mark_wqes_ready(struct doca_gpu_eth_txq *txq,
								    uint64_t from_idx,
								    uint64_t to_idx)
{
	/* Release at GPU scope (other producers read sq_ready_index); the submission that
	 * follows fences at system scope before the proxy learns of these WQEs. */
	__threadfence();
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		txq->sq_ready_index = to_idx + 1;
	} else {
		while (DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_ready_index) != from_idx)
			;
		__threadfence();
		DOCA_GPUNETIO_ETH_WRITE_ONCE(txq->sq_ready_index, to_idx + 1);
	}
}

/** Doorbell record value written (relaxed, system scope): BE32(prod & 0xffff). */
__device__ static inline void doca_priv_gpu_dev_eth_txq_update_dbr(struct doca_gpu_eth_txq *txq, uint32_t prod_index)
{
	doca_priv_gpu_dev_eth_store_relaxed_sys_u32((uint32_t *)txq->sq_db_rec, (uint32_t)doca_gpu_dev_eth_prepare_dbr(prod_index));
}

/** Writes the SQ doorbell record for `prod_index` after a release fence. */
template <enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_update_dbr(struct doca_gpu_eth_txq *txq, uint32_t prod_index)
{
	(void)sizeof(sync_scope);
	doca_gpu_dev_eth_fence_release<DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS>();
	doca_priv_gpu_dev_eth_txq_update_dbr(txq, prod_index);
}

/** Doorbell value for `prod_index`: the first 8 bytes of a control segment (index << 8,
 * then QPN << 8 with DS 0), as one little-endian 64-bit word. */
DOCA_SOFT_ETH_HD static inline __be64 doca_gpu_dev_eth_txq_prepare_db(const struct doca_gpu_eth_txq *txq,
								       uint64_t prod_index)
{
	return ((uint64_t)txq->sq_num_shift8_be << 32) | (uint64_t)doca_gpu_dev_eth_bswap32((uint32_t)prod_index << 8);
}

/** Rings the doorbell with `prod_index` (release fence, then one 64-bit store). */
template <enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_ring_db(struct doca_gpu_eth_txq *txq, uint64_t prod_index)
{
	(void)sizeof(sync_scope);
	__be64 v = doca_gpu_dev_eth_txq_prepare_db(txq, prod_index);
	doca_gpu_dev_eth_fence_release<DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS>();
	doca_gpu_dev_eth_store_relaxed_mmio(txq->sq_db, (uint64_t)v);
}

/* doca-soft internal: tells the CPU proxy WQEs below `prod_index` are submitted (the slot
 * only grows: submitters of different ranges may store in any order). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline void doca_priv_gpu_dev_eth_txq_kick_proxy(struct doca_gpu_eth_txq *txq, uint64_t prod_index)
{
	doca_gpu_dev_eth_fence_release<DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS>();
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE)
		doca_gpu_dev_eth_store_relaxed_mmio(txq->cpu_proxy_pi, prod_index);
	else
		atomicMax((unsigned long long *)txq->cpu_proxy_pi, (unsigned long long)prod_index);
}

/** CPU-proxy submission: the producer index (host order) into the proxy's slot. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_submit_proxy(struct doca_gpu_eth_txq *txq, uint64_t prod_index)
{
	(void)sizeof(sync_scope);
	doca_priv_gpu_dev_eth_txq_kick_proxy<sharing>(txq, prod_index);
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->sq_wqe_pi, prod_index);
}

/** GPU doorbell submission: under `sq_lock`, when `prod_index` advances `sq_wqe_pi`,
 * doorbell record then doorbell. (doca-soft's proxy also learns it through its slot.) */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_submit_db(struct doca_gpu_eth_txq *txq, uint64_t prod_index)
{
	doca_gpu_dev_eth_lock<sharing>(&txq->sq_lock);
	uint64_t old = doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->sq_wqe_pi, prod_index);
	if (prod_index > old) {
		doca_gpu_dev_eth_txq_update_dbr<sync_scope>(txq, (uint32_t)prod_index);
		doca_gpu_dev_eth_txq_ring_db<sync_scope>(txq, prod_index);
	}
	doca_gpu_dev_eth_unlock<sharing>(&txq->sq_lock);
	doca_priv_gpu_dev_eth_txq_kick_proxy<sharing>(txq, prod_index);
}

/** Submits every WQE below `prod_index` by the queue's NIC handler (AUTO: as the queue
 * says; doca-soft's queues say CPU_PROXY). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_submit(struct doca_gpu_eth_txq *txq, uint64_t prod_index)
{
	if constexpr (nic_handler == DOCA_GPUNETIO_ETH_NIC_HANDLER_GPU_SM_DB) {
		doca_gpu_dev_eth_txq_submit_db<sharing, sync_scope>(txq, prod_index);
	} else if constexpr (nic_handler == DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO) {
		if (txq->nic_handler == DOCA_GPUNETIO_ETH_NIC_HANDLER_GPU_SM_DB)
			doca_gpu_dev_eth_txq_submit_db<sharing, sync_scope>(txq, prod_index);
		else
			doca_gpu_dev_eth_txq_submit_proxy<sharing, sync_scope>(txq, prod_index);
	} else {
		doca_gpu_dev_eth_txq_submit_proxy<sharing, sync_scope>(txq, prod_index);
	}
}

/** Writes the CQ doorbell record for consumer index `cons_index`. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_eth_txq_submit_cq_dbr(struct doca_gpu_eth_txq *txq, uint64_t cons_index)
{
	(void)sizeof(sharing);
	doca_gpu_dev_eth_fence_release<sync_scope>();
	doca_priv_gpu_dev_eth_store_relaxed_sys_u32((uint32_t *)txq->cq_db_rec,
						    (uint32_t)doca_gpu_dev_eth_prepare_cq_dbr((uint32_t)cons_index));
}

/** Reserves `num_cqe` completion indices for a poller; returns the first. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ static inline uint64_t doca_gpu_dev_eth_txq_reserve_cq_slots(struct doca_gpu_eth_txq *txq, uint32_t num_cqe)
{
	return doca_gpu_dev_eth_atomic_add<uint64_t, sharing>(&txq->cqe_rsvd, (uint64_t)num_cqe);
}

/* ---- send ------------------------------------------------------------------------------- */

/*
 * Thread-scope sends, aggregated over the lanes of a warp that call together.
 *
 * Each calling thread sends its own WQEs, but lanes of one warp must not publish one
 * after the other: a lane spinning until the previous slot is published can keep the lane
 * that owns that slot from ever running (seen on an H200: no frame left the queue). So the
 * first active lane reserves `per_lane` slots for every active lane, each lane writes its
 * own, and that lane alone publishes and submits the group in order; only whole groups
 * wait for each other, never lanes of one warp.
 */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline uint64_t doca_priv_gpu_dev_eth_txq_reserve_lane_slots(struct doca_gpu_eth_txq *txq,
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

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing,
	  enum doca_gpu_dev_eth_sync_scope sync_scope,
	  enum doca_gpu_dev_eth_nic_handler nic_handler>
__device__ static inline void doca_priv_gpu_dev_eth_txq_publish_lane_slots(struct doca_gpu_eth_txq *txq,
									    uint64_t my_idx,
									    uint32_t per_lane)
{
	const unsigned int mask = __activemask();
	const unsigned int lane = doca_gpu_dev_eth_get_lane_id();
	const unsigned int leader = (unsigned int)__ffs(mask) - 1;
	const uint32_t n = per_lane * (uint32_t)__popc(mask);
	/* Each lane's WQE writes reach system scope before the group is published. */
	__threadfence_system();
	__syncwarp(mask);
	const uint64_t base = __shfl_sync(mask, my_idx, (int)leader);
	if (lane == leader) {
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing>(txq, base, base + n - 1);
		doca_gpu_dev_eth_txq_submit<sharing, sync_scope, nic_handler>(txq, base + n);
	}
	__syncwarp(mask);
}

/* doca-soft internal: the send WQE of one frame at ring index `idx`. */
__device__ static inline void doca_priv_gpu_dev_eth_txq_write_send(struct doca_gpu_eth_txq *txq,
								    uint64_t idx,
								    uint64_t addr,
								    uint32_t mkey,
								    size_t size,
								    enum doca_gpu_eth_send_flags flags)
{
	struct doca_gpu_dev_eth_txq_wqe *w =
		(struct doca_gpu_dev_eth_txq_wqe *)(txq->sq_wqe_addr + ((uint32_t)(idx & txq->sq_wqe_mask) << 6));
	doca_gpu_dev_eth_txq_wqe_prepare_send(txq, w, (uint16_t)idx, addr, mkey, (uint32_t)size, flags);
}

/* doca-soft internal: the wait-on-time WQE at ring index `idx`. */
__device__ static inline void doca_priv_gpu_dev_eth_txq_write_wait(struct doca_gpu_eth_txq *txq,
								    uint64_t idx,
								    uint64_t wait_on_time_ts)
{
	struct doca_gpu_dev_eth_txq_wqe *w =
		(struct doca_gpu_dev_eth_txq_wqe *)(txq->sq_wqe_addr + ((uint32_t)(idx & txq->sq_wqe_mask) << 6));
	doca_gpu_dev_eth_txq_wqe_prepare_wait_time(txq, w, (uint16_t)idx, wait_on_time_ts, DOCA_GPUNETIO_ETH_SEND_FLAG_NONE);
}

/* doca-soft internal: rank of the calling lane among the active lanes, their count and
 * the leader lane. */
__device__ static inline void doca_priv_gpu_dev_eth_warp_ranks(unsigned int *mask, uint32_t *n, uint32_t *rank, int *leader)
{
	unsigned int m = __activemask();
	unsigned int lane = doca_gpu_dev_eth_get_lane_id();
	*mask = m;
	*n = (uint32_t)__popc(m);
	*rank = (uint32_t)__popc(m & ((1u << lane) - 1u));
	*leader = __ffs(m) - 1;
}

__device__ static inline uint32_t doca_priv_gpu_dev_eth_block_rank(void)
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ static inline uint32_t doca_priv_gpu_dev_eth_block_size(void)
{
	return blockDim.x * blockDim.y * blockDim.z;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_send_thread(struct doca_gpu_eth_txq *txq,
								uint64_t addr,
								uint32_t mkey,
								size_t size,
								enum doca_gpu_eth_send_flags flags,
								doca_gpu_dev_eth_ticket_t *out_ticket)
{
	const uint64_t idx = doca_priv_gpu_dev_eth_txq_reserve_lane_slots<sharing>(txq, 1);
	doca_priv_gpu_dev_eth_txq_write_send(txq, idx, addr, mkey, size, flags);
	doca_priv_gpu_dev_eth_txq_publish_lane_slots<sharing, sync_scope, nic_handler>(txq, idx, 1);
	if (out_ticket != nullptr)
		*out_ticket = idx;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_send_warp(struct doca_gpu_eth_txq *txq,
							      uint64_t addr,
							      uint32_t mkey,
							      size_t size,
							      enum doca_gpu_eth_send_flags flags,
							      doca_gpu_dev_eth_ticket_t *out_ticket)
{
	unsigned int mask;
	uint32_t n, rank;
	int leader;
	doca_priv_gpu_dev_eth_warp_ranks(&mask, &n, &rank, &leader);
	unsigned long long base = 0;
	if (rank == 0)
		base = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n);
	base = __shfl_sync(mask, base, leader);
	doca_priv_gpu_dev_eth_txq_write_send(txq, base + rank, addr, mkey, size, flags);
	__syncwarp(mask);
	if (rank == 0) {
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing>(txq, base, base + n - 1);
		doca_gpu_dev_eth_txq_submit<sharing, sync_scope, nic_handler>(txq, base + n);
	}
	__syncwarp(mask);
	if (out_ticket != nullptr)
		*out_ticket = base + rank;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_send_block(struct doca_gpu_eth_txq *txq,
							       uint64_t addr,
							       uint32_t mkey,
							       size_t size,
							       enum doca_gpu_eth_send_flags flags,
							       doca_gpu_dev_eth_ticket_t *out_ticket)
{
	__shared__ uint64_t doca_soft_tx_base;
	uint32_t rank = doca_priv_gpu_dev_eth_block_rank();
	uint32_t n = doca_priv_gpu_dev_eth_block_size();
	if (rank == 0)
		doca_soft_tx_base = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n);
	__syncthreads();
	uint64_t base = doca_soft_tx_base;
	doca_priv_gpu_dev_eth_txq_write_send(txq, base + rank, addr, mkey, size, flags);
	__syncthreads();
	if (rank == 0) {
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing>(txq, base, base + n - 1);
		doca_gpu_dev_eth_txq_submit<sharing, sync_scope, nic_handler>(txq, base + n);
	}
	if (out_ticket != nullptr)
		*out_ticket = base + rank;
	__syncthreads();
}

/** Send one frame per participating thread (`exec_scope` says who participates). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_eth_txq_send(struct doca_gpu_eth_txq *txq,
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

/* ---- timed send: a wait-on-time WQE, then the send(s) ----------------------------------- */

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_wait_send_thread(struct doca_gpu_eth_txq *txq,
								     const uint64_t wait_on_time_ts,
								     uint64_t addr,
								     uint32_t mkey,
								     size_t size,
								     enum doca_gpu_eth_send_flags flags,
								     doca_gpu_dev_eth_ticket_t *out_ticket)
{
	const uint64_t idx = doca_priv_gpu_dev_eth_txq_reserve_lane_slots<sharing>(txq, 2);
	doca_priv_gpu_dev_eth_txq_write_wait(txq, idx, wait_on_time_ts);
	doca_priv_gpu_dev_eth_txq_write_send(txq, idx + 1, addr, mkey, size, flags);
	doca_priv_gpu_dev_eth_txq_publish_lane_slots<sharing, sync_scope, nic_handler>(txq, idx, 2);
	if (out_ticket != nullptr)
		*out_ticket = idx + 1;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_wait_send_warp(struct doca_gpu_eth_txq *txq,
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
	doca_priv_gpu_dev_eth_warp_ranks(&mask, &n, &rank, &leader);
	unsigned long long base = 0;
	if (rank == 0) {
		base = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n + 1);
		doca_priv_gpu_dev_eth_txq_write_wait(txq, base, wait_on_time_ts);
	}
	base = __shfl_sync(mask, base, leader);
	doca_priv_gpu_dev_eth_txq_write_send(txq, base + 1 + rank, addr, mkey, size, flags);
	__syncwarp(mask);
	if (rank == 0) {
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing>(txq, base, base + n);
		doca_gpu_dev_eth_txq_submit<sharing, sync_scope, nic_handler>(txq, base + n + 1);
	}
	__syncwarp(mask);
	if (out_ticket != nullptr)
		*out_ticket = base + 1 + rank;
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_eth_txq_wait_send_block(struct doca_gpu_eth_txq *txq,
								    const uint64_t wait_on_time_ts,
								    uint64_t addr,
								    uint32_t mkey,
								    size_t size,
								    enum doca_gpu_eth_send_flags flags,
								    doca_gpu_dev_eth_ticket_t *out_ticket)
{
	__shared__ uint64_t doca_soft_tx_wait_base;
	uint32_t rank = doca_priv_gpu_dev_eth_block_rank();
	uint32_t n = doca_priv_gpu_dev_eth_block_size();
	if (rank == 0) {
		uint64_t b = doca_gpu_dev_eth_txq_reserve_wq_slots<sharing>(txq, n + 1);
		doca_priv_gpu_dev_eth_txq_write_wait(txq, b, wait_on_time_ts);
		doca_soft_tx_wait_base = b;
	}
	__syncthreads();
	uint64_t base = doca_soft_tx_wait_base;
	doca_priv_gpu_dev_eth_txq_write_send(txq, base + 1 + rank, addr, mkey, size, flags);
	__syncthreads();
	if (rank == 0) {
		doca_gpu_dev_eth_txq_mark_wqes_ready<sharing>(txq, base, base + n);
		doca_gpu_dev_eth_txq_submit<sharing, sync_scope, nic_handler>(txq, base + n + 1);
	}
	if (out_ticket != nullptr)
		*out_ticket = base + 1 + rank;
	__syncthreads();
}

/** Send after CLOCK_REALTIME reaches `wait_on_time_ts` (see calculate_timestamp). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_eth_nic_handler nic_handler = DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_eth_exec_scope exec_scope = DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_eth_txq_wait_send(struct doca_gpu_eth_txq *txq,
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

/* doca-soft internal: whether completion `idx` reports an error (REQ_ERR / RESP_ERR). */
__device__ static inline bool doca_priv_gpu_dev_eth_txq_cqe_error(const struct doca_gpu_eth_txq *txq, uint64_t idx)
{
	const struct mlx5_cqe64 *c = (const struct mlx5_cqe64 *)txq->cqe_addr + (idx & txq->cqe_mask);
	uint8_t op = DOCA_GPUNETIO_ETH_VOLATILE(c->op_own) >> 4;
	return op == MLX5_CQE_REQ_ERR || op == MLX5_CQE_RESP_ERR;
}

/** Reserves `num_cqe` completions; B waits for them, NB takes them only if all are there
 * (else reports how many are). A completion exists per NOTIFY WQE or error; UNEXPECTED
 * when one of them (ALL) or the last (LAST) is an error. */
template <enum doca_gpu_dev_eth_cq_poll_mode cq_poll = DOCA_GPUNETIO_ETH_CQ_POLL_ALL,
	  enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_poll_completion(struct doca_gpu_eth_txq *txq,
									    const uint32_t num_cqe,
									    enum doca_gpu_dev_eth_wait_flags wait_mode,
									    uint32_t *num_completed)
{
	if (txq == nullptr || num_completed == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*num_completed = 0;
	if (num_cqe == 0)
		return DOCA_SUCCESS;
	if (num_cqe > txq->cqe_num)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t start;
	if (wait_mode == DOCA_GPUNETIO_ETH_WAIT_FLAG_B) {
		start = doca_gpu_dev_eth_txq_reserve_cq_slots<sharing>(txq, num_cqe);
		while (!doca_priv_gpu_dev_eth_cq_present(txq->cqe_addr, txq->cqe_num, start + num_cqe - 1))
			;
	} else {
		uint64_t cur = DOCA_GPUNETIO_ETH_VOLATILE(txq->cqe_rsvd);
		uint32_t avail = doca_priv_gpu_dev_eth_cq_count(txq->cqe_addr, txq->cqe_num, cur, 0, num_cqe);
		if (avail < num_cqe) {
			*num_completed = avail;
			return DOCA_SUCCESS;
		}
		if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
			txq->cqe_rsvd = cur + num_cqe;
		} else {
			if (atomicCAS((unsigned long long *)&txq->cqe_rsvd, cur, cur + num_cqe) != cur)
				return DOCA_SUCCESS;
		}
		start = cur;
	}
	bool error = false;
	if constexpr (cq_poll == DOCA_GPUNETIO_ETH_CQ_POLL_LAST) {
		error = doca_priv_gpu_dev_eth_txq_cqe_error(txq, start + num_cqe - 1);
	} else {
		for (uint64_t k = start; k < start + num_cqe; k++)
			error |= doca_priv_gpu_dev_eth_txq_cqe_error(txq, k);
	}
	/* Hand the entries back to the proxy (it reads the 64-bit consumer index). */
	__threadfence_system();
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->cqe_ci, start + num_cqe);
	doca_gpu_dev_eth_txq_submit_cq_dbr<sharing, sync_scope>(txq, start + num_cqe);
	*num_completed = num_cqe;
	return error ? DOCA_ERROR_UNEXPECTED : DOCA_SUCCESS;
}

/** Completion number `cqe_idx` (counting from the queue's start): B waits for it, NB
 * returns DOCA_ERROR_AGAIN while it is not there; UNEXPECTED for an error completion. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_poll_completion_at(struct doca_gpu_eth_txq *txq,
									       const uint64_t cqe_idx,
									       enum doca_gpu_dev_eth_wait_flags wait_mode)
{
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	while (!doca_priv_gpu_dev_eth_cq_present(txq->cqe_addr, txq->cqe_num, cqe_idx)) {
		if (wait_mode != DOCA_GPUNETIO_ETH_WAIT_FLAG_B)
			return DOCA_ERROR_AGAIN;
	}
	bool error = doca_priv_gpu_dev_eth_txq_cqe_error(txq, cqe_idx);
	__threadfence_system();
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->cqe_rsvd, cqe_idx + 1);
	doca_gpu_dev_eth_atomic_max<uint64_t, sharing>(&txq->cqe_ci, cqe_idx + 1);
	doca_gpu_dev_eth_txq_submit_cq_dbr<sharing, sync_scope>(txq, cqe_idx + 1);
	return error ? DOCA_ERROR_UNEXPECTED : DOCA_SUCCESS;
}

/** Wait-on-time value of a CLOCK_REALTIME time: BE64 of seconds << 32 | nanoseconds. */
DOCA_SOFT_ETH_HD static inline doca_error_t doca_gpu_dev_eth_txq_calculate_timestamp(const struct doca_gpu_eth_txq *txq,
										      const uint64_t timestamp_ns,
										      uint64_t *wait_on_time_ts)
{
	if (txq == nullptr || wait_on_time_ts == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t v = ((timestamp_ns / DOCA_GPUNETIO_NS_PER_S) << 32) | (timestamp_ns % DOCA_GPUNETIO_NS_PER_S);
	*wait_on_time_ts = doca_gpu_dev_eth_bswap64(v);
	return DOCA_SUCCESS;
}

/* ---- Pre-3.2 names on the same ring ---------------------------------------------------- */

/** Send flags of the pre-3.2 API. */
enum doca_gpu_send_flags {
	DOCA_GPU_SEND_FLAG_NONE = 0,
	DOCA_GPU_SEND_FLAG_NOTIFY = 1,
};

/** Wait modes of doca_gpu_dev_eth_txq_wait_completion. */
enum doca_gpu_dev_eth_txq_wait_flags {
	DOCA_GPU_ETH_TXQ_WAIT_FLAG_NB = 0,
	DOCA_GPU_ETH_TXQ_WAIT_FLAG_B = 1,
};

/* doca-soft internal: full WQE index of a 32-bit position near the reservation counter. */
__device__ static inline uint64_t doca_priv_gpu_dev_eth_txq_position_index(const struct doca_gpu_eth_txq *txq,
									    uint32_t position)
{
	uint64_t rsvd = DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_rsvd_index);
	return rsvd + (uint64_t)(int64_t)(int32_t)(position - (uint32_t)rsvd);
}

__device__ static inline doca_error_t doca_gpu_dev_eth_txq_send_enqueue_strong(struct doca_gpu_eth_txq *txq,
										const struct doca_gpu_buf *buf,
										const uint32_t nbytes,
										const uint32_t flags)
{
	if (txq == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_gpu_dev_eth_txq_reserve_wq_slots(txq, 1);
	doca_priv_gpu_dev_eth_txq_write_send(txq, idx, buf->addr, buf->mkey, nbytes, (enum doca_gpu_eth_send_flags)flags);
	return DOCA_SUCCESS;
}

__device__ static inline doca_error_t doca_gpu_dev_eth_txq_send_enqueue_weak(const struct doca_gpu_eth_txq *txq,
									      const struct doca_gpu_buf *buf,
									      const uint32_t nbytes,
									      const uint32_t position,
									      const uint32_t flags)
{
	if (txq == nullptr || buf == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_priv_gpu_dev_eth_txq_position_index(txq, position);
	doca_priv_gpu_dev_eth_txq_wait_room(txq, idx + 1);
	doca_priv_gpu_dev_eth_txq_write_send((struct doca_gpu_eth_txq *)txq,
					     idx,
					     buf->addr,
					     buf->mkey,
					     nbytes,
					     (enum doca_gpu_eth_send_flags)flags);
	return DOCA_SUCCESS;
}

__device__ static inline doca_error_t doca_gpu_dev_eth_txq_wait_time_enqueue_strong(struct doca_gpu_eth_txq *txq,
										    const uint64_t wait_on_time_value,
										    const uint32_t flags)
{
	(void)flags;
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_gpu_dev_eth_txq_reserve_wq_slots(txq, 1);
	doca_priv_gpu_dev_eth_txq_write_wait(txq, idx, wait_on_time_value);
	return DOCA_SUCCESS;
}

__device__ static inline doca_error_t doca_gpu_dev_eth_txq_wait_time_enqueue_weak(struct doca_gpu_eth_txq *txq,
										  const uint64_t wait_on_time_value,
										  const uint32_t position,
										  const uint32_t flags)
{
	(void)flags;
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_priv_gpu_dev_eth_txq_position_index(txq, position);
	doca_priv_gpu_dev_eth_txq_wait_room(txq, idx + 1);
	doca_priv_gpu_dev_eth_txq_write_wait(txq, idx, wait_on_time_value);
	return DOCA_SUCCESS;
}

/* doca-soft internal: publishes and submits everything below `end`. */
__device__ static inline void doca_priv_gpu_dev_eth_txq_commit_to(struct doca_gpu_eth_txq *txq, uint64_t end)
{
	__threadfence_system();
	atomicMax((unsigned long long *)&txq->sq_ready_index, (unsigned long long)end);
	doca_gpu_dev_eth_txq_submit<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>(txq, end);
}

/** Publishes and submits everything enqueued so far (callers synchronise their enqueues). */
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_commit_strong(struct doca_gpu_eth_txq *txq)
{
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	doca_priv_gpu_dev_eth_txq_commit_to(txq, DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_rsvd_index));
	return DOCA_SUCCESS;
}

/** Accounts `elements` weak enqueues, then publishes and submits them. */
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_commit_weak(struct doca_gpu_eth_txq *txq, const uint32_t elements)
{
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t end = atomicAdd((unsigned long long *)&txq->sq_rsvd_index, (unsigned long long)elements) + elements;
	doca_priv_gpu_dev_eth_txq_commit_to(txq, end);
	return DOCA_SUCCESS;
}

/** Doorbell for what was committed (commit already submits; this repeats it). */
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_push(struct doca_gpu_eth_txq *txq)
{
	if (txq == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	doca_gpu_dev_eth_txq_submit<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>(txq, DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_ready_index));
	return DOCA_SUCCESS;
}

/** Next free position and the ring mask (for weak enqueues at position + k). */
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_get_info(struct doca_gpu_eth_txq *txq,
								     uint32_t *curr_position,
								     uint32_t *mask_max_position)
{
	if (txq == nullptr || curr_position == nullptr || mask_max_position == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*curr_position = (uint32_t)DOCA_GPUNETIO_ETH_VOLATILE(txq->sq_rsvd_index);
	*mask_max_position = txq->sq_wqe_mask;
	return DOCA_SUCCESS;
}

/** Waits for (B) or checks (NB) `num_sends` NOTIFY completions. */
__device__ static inline doca_error_t doca_gpu_dev_eth_txq_wait_completion(struct doca_gpu_eth_txq *txq,
									    uint32_t num_sends,
									    enum doca_gpu_dev_eth_txq_wait_flags wait_flags,
									    uint32_t *num_completed)
{
	return doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_ALL>(
		txq,
		num_sends,
		wait_flags == DOCA_GPU_ETH_TXQ_WAIT_FLAG_B ? DOCA_GPUNETIO_ETH_WAIT_FLAG_B : DOCA_GPUNETIO_ETH_WAIT_FLAG_NB,
		num_completed);
}

#endif /* DOCA_GPUNETIO_DEV_ETH_TXQ_CUH_ */
