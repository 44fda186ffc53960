/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API, GPU verbs: building mlx5 WQEs, reserving and publishing ring slots,
 * and ringing doorbells. Header-only CUDA, DOCA 3.3's names and template signatures.
 *
 * Byte formats written here (what the NIC, in doca-soft the CPU proxy, consumes). All
 * multi-byte fields are big-endian; keys are stored as given (callers pass them already
 * big-endian); immediates are stored raw.
 *   SQ slot: 64 bytes at sq_wqe_daddr + ((index & sq_wqe_mask) << 6).
 *   Control segment (bytes 0-15): word 0 = BE32((index & 0xFFFF) << 8 | opcode);
 *     word 1 = BE32(QPN << 8 | DS) with DS the WQE size in 16-byte units; byte 11 =
 *     fm_ce_se (CQ_UPDATE 0x08 on every helper-built WQE); bytes 8-10 are zero in doca-soft
 *     (DOCA leaves them unset: consumers ignore them); word 3 = immediate (0 when the
 *     builder takes none).
 *   RDMA write 0x08 / write-imm 0x09 / read 0x10: raddr segment {BE64 raddr, rkey, 0} then
 *     1-2 data segments {BE32 byte count, key, BE64 local address}; DS 3 or 4.
 *   Inline write 0x08: raddr segment, then at byte 32 BE32(len | 0x80000000) followed by the
 *     `len` (<= 28) payload bytes; DS 3 when len <= 12, else 4.
 *   Atomic fetch-add 0x12 (DS 4): raddr segment, atomic segment {BE64 add value, BE64 the
 *     same value}, data segment {BE32 8, key, BE64 address receiving the old value}.
 *   Send 0x0a / send-imm 0x0b: 0-3 data segments after the control segment; DS 1 + n.
 *   WAIT 0x0f (DS 2): {8 zero bytes, BE32 max_index, BE32 CQ number}: the queue stops until
 *     that CQ has produced CQE number max_index (mod 2^32), i.e. WQE max_index of the
 *     awaited queue has completed.
 *   DUMP 0x23 (DS 2): one data segment (1 byte, local).
 *   NOP 0x00 (DS 1): doca-soft only posts it for a zero-byte thread put/get/send (DOCA 3.3
 *     posts nothing there and returns an unset ticket); it completes like any WQE.
 *   RQ slot: 16 bytes at rq_wqe_daddr + ((index & rq_wqe_mask) << 4): one data segment
 *     {BE32 length, key, BE64 address}. doca-soft's legacy RDMA API posts "no buffer"
 *     receives as {0, BE32(MLX5_INVALID_LKEY), 0}.
 * Doorbells:
 *   DBR (GPU_SM_DB, RQ): *sq_dbrec / *rq_dbrec = BE32(prod & 0xFFFF).
 *   DB register (GPU_SM_DB, GPU_SM_NO_DBR): *sq_db, 8 bytes = BE32(prod << 8) then
 *     sq_num_shift8_be (the first 8 bytes of a control segment for index prod, DS 0).
 *   BlueFlame (submit_bf*): the whole 64-byte last WQE written to sq_db.
 *   CPU proxy: *sq_db = prod, host order, 64-bit; sq_wqe_pi advanced.
 * doca-soft: every doorbell store is preceded by a system-scope release fence whatever
 * the `sync_scope` template argument says, because the consumer is a CPU thread that
 * then reads the WQEs from memory.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_QP_CUH_
#define DOCA_GPUNETIO_DEV_VERBS_QP_CUH_

#include "doca_gpunetio_dev_verbs_common.cuh"
#include "doca_gpunetio_dev_verbs_cq.cuh"

/**
 * One 16-byte store of a WQE segment (two 64-bit words, streaming). Generic addressing, so
 * a WQE may also be built in shared memory (for BlueFlame).
 */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_store_wqe_seg(uint64_t *ptr, uint64_t *val)
{
#ifdef __CUDA_ARCH__
	asm volatile("st.cs.v2.b64 [%0], {%1, %2};" : : "l"(ptr), "l"(val[0]), "l"(val[1]) : "memory");
#else
	memcpy(ptr, val, 16);
#endif
}

/** Send WQE slot of index `wqe_idx`. */
DOCA_SOFT_VERBS_HD static inline struct doca_gpu_dev_verbs_wqe *doca_gpu_dev_verbs_get_wqe_ptr(struct doca_gpu_dev_verbs_qp *qp,
											       uint16_t wqe_idx)
{
	uint8_t *base = doca_priv_gpu_dev_verbs_ldg(&qp->sq_wqe_daddr);
	uint16_t mask = doca_priv_gpu_dev_verbs_ldg(&qp->sq_wqe_mask);
	return (struct doca_gpu_dev_verbs_wqe *)(base + ((uintptr_t)(wqe_idx & mask) << DOCA_GPUNETIO_MLX5_WQE_SQ_SHIFT));
}

/** Receive WQE slot of index `wqe_idx`. */
DOCA_SOFT_VERBS_HD static inline struct mlx5_wqe_data_seg *doca_gpu_dev_verbs_get_rwqe_ptr(struct doca_gpu_dev_verbs_qp *qp,
											  uint16_t wqe_idx)
{
	uint8_t *base = doca_priv_gpu_dev_verbs_ldg(&qp->rq_wqe_daddr);
	uint32_t mask = doca_priv_gpu_dev_verbs_ldg(&qp->rq_wqe_mask);
	return (struct mlx5_wqe_data_seg *)(base + ((uintptr_t)(wqe_idx & mask) << DOCA_GPUNETIO_MLX5_WQE_RQ_SHIFT));
}

/** (idx + inc) modulo the 16-bit WQE index space. */
DOCA_SOFT_VERBS_HD static inline uint32_t doca_gpu_dev_verbs_wqe_idx_inc_mask(uint32_t idx, uint32_t inc)
{
	return (idx + inc) & DOCA_GPUNETIO_VERBS_WQE_PI_MASK;
}

/* doca-soft: the CQ and counters of one work queue. */
template <enum doca_gpu_dev_verbs_qp_type qp_type>
__device__ static inline struct doca_gpu_dev_verbs_cq *doca_priv_gpu_dev_verbs_wq_cq(struct doca_gpu_dev_verbs_qp *qp)
{
	return qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? &qp->cq_sq : &qp->cq_rq;
}

/**
 * Waits until slot `wqe_idx` is free: its previous occupant (wqe_idx - ring size) has
 * completed. (DOCA 3.3 keeps the RQ size in 16 bits here, which breaks a 65536-entry RQ;
 * doca-soft uses the full size.)
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_gpu_dev_verbs_wait_until_slot_available(struct doca_gpu_dev_verbs_qp *qp, uint64_t wqe_idx)
{
	uint64_t size = qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? (uint64_t)doca_priv_gpu_dev_verbs_ldg(&qp->sq_wqe_num)
							     : (uint64_t)doca_priv_gpu_dev_verbs_ldg(&qp->rq_wqe_num);
	if (wqe_idx >= size)
		doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(doca_priv_gpu_dev_verbs_wq_cq<qp_type>(qp),
									      wqe_idx - size);
}

/** Reserves `count` consecutive WQE indices; returns the first. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ,
	  bool wait_for_availability = true>
__device__ static inline uint64_t doca_gpu_dev_verbs_reserve_wq_slots(struct doca_gpu_dev_verbs_qp *qp, uint32_t count)
{
	uint64_t *rsvd = qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? &qp->sq_rsvd_index : &qp->rq_rsvd_index;
	uint64_t base = doca_gpu_dev_verbs_atomic_add<uint64_t, resource_sharing_mode>(rsvd, (uint64_t)count);
	if constexpr (wait_for_availability) {
		if (count > 0)
			doca_gpu_dev_verbs_wait_until_slot_available<resource_sharing_mode, qp_type>(qp, base + count - 1);
	}
	return base;
}

/**
 * Declares WQEs `from`..`to` written. Shared queues publish in index order: each caller
 * waits until everything below `from` is ready, then moves the ready index to `to` + 1.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_gpu_dev_verbs_mark_wqes_ready(struct doca_gpu_dev_verbs_qp *qp, uint64_t from, uint64_t to)
{
	uint64_t *ready = qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? &qp->sq_ready_index : &qp->rq_ready_index;
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		*ready = to + 1;
	} else {
		constexpr enum doca_gpu_dev_verbs_sync_scope scope =
			resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA ? DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA
											       : DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU;
		doca_gpu_dev_verbs_fence_release<scope>();
		cuda::atomic_ref<uint64_t, doca_priv_gpu_dev_verbs_scope<resource_sharing_mode>::value> ref(*ready);
		while (ref.load(cuda::memory_order_relaxed) != from)
			;
		doca_gpu_dev_verbs_fence_acquire<scope>();
		ref.store(to + 1, cuda::memory_order_release);
	}
}

/** Doorbell record value of producer index `prod_index`. */
DOCA_SOFT_VERBS_HD static inline __be32 doca_gpu_dev_verbs_prepare_dbr(uint32_t prod_index)
{
	return doca_gpu_dev_verbs_bswap32(prod_index & DOCA_GPUNETIO_VERBS_WQE_PI_MASK);
}

/** Writes the doorbell record of the send (or receive) queue, relaxed at system scope. */
template <enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_priv_gpu_dev_verbs_update_dbr(struct doca_gpu_dev_verbs_qp *qp, uint32_t prod_index)
{
	__be32 *dbrec = qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? doca_priv_gpu_dev_verbs_ldg(&qp->sq_dbrec)
							     : doca_priv_gpu_dev_verbs_ldg(&qp->rq_dbrec);
	__be32 v = doca_gpu_dev_verbs_prepare_dbr(prod_index);
	asm volatile("st.relaxed.sys.global.u32 [%0], %1;" : : "l"(dbrec), "r"(v) : "memory");
}

/** Publishes producer index `prod_index` in the doorbell record (after a release fence). */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_gpu_dev_verbs_update_dbr(struct doca_gpu_dev_verbs_qp *qp, uint32_t prod_index)
{
	if constexpr ((code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE) != 0) {
		__be32 *dbrec = qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? doca_priv_gpu_dev_verbs_ldg(&qp->sq_dbrec)
								     : doca_priv_gpu_dev_verbs_ldg(&qp->rq_dbrec);
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_async_store_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>(
			(uint32_t *)dbrec,
			(uint32_t)doca_gpu_dev_verbs_prepare_dbr(prod_index));
	} else {
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_priv_gpu_dev_verbs_update_dbr<qp_type>(qp, prod_index);
	}
}

/** The 8 doorbell-register bytes for producer index `prod_index` (little-endian load). */
DOCA_SOFT_VERBS_HD static inline __be64 doca_gpu_dev_verbs_prepare_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	uint32_t word0 = doca_gpu_dev_verbs_bswap32((uint32_t)(prod_index << DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT));
	uint32_t word1 = doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be);
	return ((uint64_t)word1 << 32) | word0;
}

/** Rings the doorbell register with producer index `prod_index`. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static inline void doca_gpu_dev_verbs_ring_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	uint64_t *db = doca_priv_gpu_dev_verbs_ldg(&qp->sq_db);
	__be64 v = doca_gpu_dev_verbs_prepare_db(qp, prod_index);
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	if constexpr ((code_opt & DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE) != 0)
		doca_gpu_dev_verbs_async_store_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>(db, (uint64_t)v);
	else
		doca_gpu_dev_verbs_store_relaxed_mmio(db, (uint64_t)v);
}

/**
 * BlueFlame: writes the whole 64-byte WQE `smem_wqe` (any readable memory, typically
 * shared) to the doorbell area `sq_db`. DOCA 3.3 uses a bulk copy on sm >= 90; doca-soft
 * stores the eight 8-byte words (same bytes, any architecture).
 */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_verbs_ring_bf(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_wqe *smem_wqe)
{
	uint64_t *db = doca_priv_gpu_dev_verbs_ldg(&qp->sq_db);
	const uint64_t *src = (const uint64_t *)smem_wqe;
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	for (int i = 0; i < 8; i++)
		doca_gpu_dev_verbs_store_relaxed_mmio(db + i, src[i]);
}

/** BlueFlame by a warp: lanes 0-7 each store one 8-byte word (at least 8 lanes active). */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_verbs_ring_bf_warp(struct doca_gpu_dev_verbs_qp *qp,
							       struct doca_gpu_dev_verbs_wqe *smem_wqe)
{
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t *db = doca_priv_gpu_dev_verbs_ldg(&qp->sq_db);
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	if (lane < 8)
		doca_gpu_dev_verbs_store_relaxed_mmio(db + lane, ((const uint64_t *)smem_wqe)[lane]);
}

/**
 * CPU-proxy doorbell: writes `prod_index` (host order, 64-bit) to the proxy slot `sq_db`
 * and advances `sq_wqe_pi`. Shared queues do it under `sq_lock` and only forward an index
 * above the current one.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static inline void doca_gpu_dev_verbs_ring_proxy(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	uint64_t *db = doca_priv_gpu_dev_verbs_ldg(&qp->sq_db);
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_store_relaxed_mmio(db, prod_index);
		qp->sq_wqe_pi = prod_index;
	} else {
		doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->sq_lock);
		uint64_t old = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi);
		if (prod_index > old) {
			doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
			doca_gpu_dev_verbs_store_relaxed_mmio(db, prod_index);
			DOCA_GPUNETIO_VERBS_WRITE_ONCE(qp->sq_wqe_pi, prod_index);
		}
		doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->sq_lock);
	}
}

/* doca-soft: the receive-queue half of every submit: advance rq_wqe_pi, write the RQ DBR. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt>
__device__ static inline void doca_priv_gpu_dev_verbs_submit_rq(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->rq_lock);
	uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->rq_wqe_pi, prod_index);
	if (prod_index > old)
		doca_gpu_dev_verbs_update_dbr<sync_scope, code_opt, DOCA_GPUNETIO_VERBS_QP_RQ>(qp, (uint32_t)prod_index);
	doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->rq_lock);
}

/**
 * GPU doorbell submission. SQ: under `sq_lock`, if `prod_index` advances `sq_wqe_pi`: ring
 * the doorbell register, write the DBR, ring again. RQ: under `rq_lock`, advance
 * `rq_wqe_pi` and write the RQ DBR (receive queues have no doorbell register).
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_gpu_dev_verbs_submit_db(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_SQ) {
		doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->sq_lock);
		uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi, prod_index);
		if (prod_index > old) {
			doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qp, prod_index);
			doca_gpu_dev_verbs_update_dbr<sync_scope, code_opt, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)prod_index);
			doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qp, prod_index);
		}
		doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->sq_lock);
	} else {
		doca_priv_gpu_dev_verbs_submit_rq<resource_sharing_mode, sync_scope, code_opt>(qp, prod_index);
	}
}

/** Submission for QPs without a send DBR: SQ rings the doorbell register only, no lock. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_gpu_dev_verbs_submit_db_no_dbr(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_SQ) {
		uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi, prod_index);
		if (prod_index > old)
			doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qp, prod_index);
	} else {
		doca_priv_gpu_dev_verbs_submit_rq<resource_sharing_mode, sync_scope, code_opt>(qp, prod_index);
	}
}

/**
 * BlueFlame submission: under the lock, if `prod_index` advances `sq_wqe_pi`: BlueFlame
 * copy of the last WQE (`smem_wqe`), DBR, doorbell register. DOCA 3.3 falls back to
 * submit_db below sm_90; doca-soft does the same.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static inline void doca_gpu_dev_verbs_submit_bf(struct doca_gpu_dev_verbs_qp *qp,
							    uint64_t prod_index,
							    struct doca_gpu_dev_verbs_wqe *smem_wqe)
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_TMA_COPY
	doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->sq_lock);
	uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi, prod_index);
	if (prod_index > old) {
		doca_gpu_dev_verbs_ring_bf<sync_scope>(qp, smem_wqe);
		doca_gpu_dev_verbs_update_dbr<sync_scope, code_opt, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)prod_index);
		doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qp, prod_index);
	}
	doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->sq_lock);
#else
	(void)smem_wqe;
	doca_gpu_dev_verbs_submit_db<resource_sharing_mode, sync_scope, code_opt, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, prod_index);
#endif
}

/** BlueFlame submission by a whole warp (lane 0 locks; lanes 0-7 copy; lane 0 rings). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static inline void doca_gpu_dev_verbs_submit_bf_warp(struct doca_gpu_dev_verbs_qp *qp,
								 uint64_t prod_index,
								 struct doca_gpu_dev_verbs_wqe *smem_wqe)
{
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	int advanced = 0;
	if (lane == 0) {
		doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qp->sq_lock);
		uint64_t old = doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qp->sq_wqe_pi, prod_index);
		advanced = prod_index > old;
	}
	advanced = __shfl_sync(DOCA_GPUNETIO_VERBS_WARP_FULL_MASK, advanced, 0);
	if (advanced)
		doca_gpu_dev_verbs_ring_bf_warp<sync_scope>(qp, smem_wqe);
	__syncwarp();
	if (lane == 0) {
		if (advanced) {
			doca_gpu_dev_verbs_update_dbr<sync_scope, code_opt, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)prod_index);
			doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qp, prod_index);
		}
		doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qp->sq_lock);
	}
	__syncwarp();
}

/** CPU-proxy submission: release fence, then ring_proxy. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_verbs_submit_proxy(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	doca_gpu_dev_verbs_ring_proxy<resource_sharing_mode>(qp, prod_index);
}

/**
 * Publishes every WQE below `prod_index` the way the QP's NIC handler wants (AUTO: the
 * handler stored in the QP at export): GPU_SM_DB -> submit_db, GPU_SM_NO_DBR ->
 * submit_db_no_dbr, anything else (CPU_PROXY, and GPU_SM_BF, which only the explicit
 * submit_bf* use) -> submit_proxy.
 * Receive queues: DOCA 3.3 sends RQ submissions of the proxy path to the SQ proxy slot
 * (moving sq_wqe_pi to an RQ index); doca-soft writes the RQ doorbell record instead, on
 * every handler, so that receives work in CPU-proxy mode too.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_gpu_dev_verbs_submit(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod_index)
{
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_RQ) {
		doca_priv_gpu_dev_verbs_submit_rq<resource_sharing_mode, sync_scope, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(
			qp,
			prod_index);
	} else {
		enum doca_gpu_dev_verbs_nic_handler handler = nic_handler;
		if constexpr (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO)
			handler = doca_priv_gpu_dev_verbs_ldg(&qp->nic_handler);
		if (handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB)
			doca_gpu_dev_verbs_submit_db<resource_sharing_mode,
						     sync_scope,
						     DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT,
						     DOCA_GPUNETIO_VERBS_QP_SQ>(qp, prod_index);
		else if (handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR)
			doca_gpu_dev_verbs_submit_db_no_dbr<resource_sharing_mode,
							    sync_scope,
							    DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT,
							    DOCA_GPUNETIO_VERBS_QP_SQ>(qp, prod_index);
		else
			doca_gpu_dev_verbs_submit_proxy<resource_sharing_mode, sync_scope>(qp, prod_index);
	}
}

/* doca-soft: the control segment as two 64-bit words (little-endian memory order). */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_verbs_ctrl_words(uint64_t out[2],
									 uint16_t wqe_idx,
									 uint32_t opcode,
									 __be32 qpn_ds,
									 enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									 uint32_t imm)
{
	uint32_t w0 = doca_gpu_dev_verbs_bswap32(((uint32_t)wqe_idx << DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT) | (opcode & 0xff));
	uint32_t w2 = (uint32_t)((uint8_t)ctrl_flags) << 24; /* byte 11 = fm_ce_se */
	out[0] = ((uint64_t)qpn_ds << 32) | w0;
	out[1] = ((uint64_t)imm << 32) | w2;
}

/* doca-soft: {BE64 raddr, rkey, 0} as two words. */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_verbs_raddr_words(uint64_t out[2], uint64_t raddr, uint32_t rkey)
{
	out[0] = doca_gpu_dev_verbs_bswap64(raddr);
	out[1] = (uint64_t)rkey;
}

/* doca-soft: {BE32 bytes, key, BE64 addr} as two words. */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_verbs_data_words(uint64_t out[2], uint64_t addr, uint32_t key, uint32_t bytes)
{
	out[0] = ((uint64_t)key << 32) | doca_gpu_dev_verbs_bswap32(bytes);
	out[1] = doca_gpu_dev_verbs_bswap64(addr);
}

/* doca-soft: BE32(QPN << 8 | ds) from the QP's precomputed words. */
DOCA_SOFT_VERBS_HD static inline __be32 doca_priv_gpu_dev_verbs_qpn_ds(struct doca_gpu_dev_verbs_qp *qp, int ds)
{
	switch (ds) {
	case 1:
		return doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be_1ds);
	case 2:
		return doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be_2ds);
	case 3:
		return doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be_3ds);
	case 4:
		return doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8_be_4ds);
	default:
		return doca_gpu_dev_verbs_bswap32(doca_priv_gpu_dev_verbs_ldg(&qp->sq_num_shift8) | (uint32_t)ds);
	}
}

/* doca-soft: segment `i` (16 bytes) of a WQE. */
DOCA_SOFT_VERBS_HD static inline uint64_t *doca_priv_gpu_dev_verbs_seg(struct doca_gpu_dev_verbs_wqe *wqe, int i)
{
	return (uint64_t *)(wqe->inl_data + 16 * i);
}

/** RDMA write (or write with immediate) with one local segment: DS 3. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_write(struct doca_gpu_dev_verbs_qp *qp,
									   struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									   const uint16_t wqe_idx,
									   const uint32_t opcode,
									   enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									   const uint32_t immediate,
									   const uint64_t raddr,
									   const uint32_t rkey,
									   const uint64_t laddr0,
									   const uint32_t lkey0,
									   const uint32_t bytes0)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, opcode, doca_priv_gpu_dev_verbs_qpn_ds(qp, 3), ctrl_flags, immediate);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_raddr_words(seg, raddr, rkey);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, laddr0, lkey0, bytes0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 2), seg);
}

/** RDMA write (or write with immediate) with two local segments: DS 4. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_write(struct doca_gpu_dev_verbs_qp *qp,
									   struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									   const uint16_t wqe_idx,
									   const uint32_t opcode,
									   enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									   const uint32_t immediate,
									   const uint64_t raddr,
									   const uint32_t rkey,
									   const uint64_t laddr0,
									   const uint32_t lkey0,
									   const uint32_t bytes0,
									   const uint64_t laddr1,
									   const uint32_t lkey1,
									   const uint32_t bytes1)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, opcode, doca_priv_gpu_dev_verbs_qpn_ds(qp, 4), ctrl_flags, immediate);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_raddr_words(seg, raddr, rkey);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, laddr0, lkey0, bytes0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 2), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, laddr1, lkey1, bytes1);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 3), seg);
}

/* doca-soft: control + raddr segments and the inline header of an inline write. */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_verbs_inl_write_header(struct doca_gpu_dev_verbs_qp *qp,
									       struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									       const uint16_t wqe_idx,
									       const uint32_t opcode,
									       enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									       const uint32_t immediate,
									       const uint64_t raddr,
									       const uint32_t rkey,
									       const uint32_t bytes)
{
	uint64_t seg[2];
	int ds = bytes <= 12 ? DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MIN : DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MAX;
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, opcode, doca_priv_gpu_dev_verbs_qpn_ds(qp, ds), ctrl_flags, immediate);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_raddr_words(seg, raddr, rkey);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
	*(uint32_t *)(wqe_ptr->inl_data + 32) = doca_gpu_dev_verbs_bswap32(bytes | MLX5_INLINE_SEG);
}

/** Inline RDMA write, header part: control, raddr and inline header for `bytes` (<= 28). */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(struct doca_gpu_dev_verbs_qp *qp,
											   struct doca_gpu_dev_verbs_wqe *wqe_ptr,
											   const uint16_t wqe_idx,
											   enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
											   const uint64_t raddr,
											   const uint32_t rkey,
											   const uint32_t bytes)
{
	doca_priv_gpu_dev_verbs_inl_write_header(qp,
						 wqe_ptr,
						 wqe_idx,
						 DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE,
						 ctrl_flags,
						 0,
						 raddr,
						 rkey,
						 bytes);
}

/** Inline RDMA write, data part: `data` right after the inline header (byte 36). */
template <typename T>
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data(struct doca_gpu_dev_verbs_qp *qp,
											 struct doca_gpu_dev_verbs_wqe *wqe_ptr,
											 T data)
{
	static_assert(sizeof(T) <= DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE, "inline data is at most 28 bytes");
	(void)qp;
	uint8_t *dst = wqe_ptr->inl_data + 36;
	if constexpr (sizeof(T) <= 4 && (sizeof(T) & (sizeof(T) - 1)) == 0) {
		*(T *)dst = data;
	} else if constexpr ((sizeof(T) & 3) == 0) {
		uint32_t words[sizeof(T) / 4];
		memcpy(words, &data, sizeof(T));
		for (size_t i = 0; i < sizeof(T) / 4; i++)
			((uint32_t *)dst)[i] = words[i];
	} else {
		doca_gpu_dev_verbs_memcpy_data(dst, &data, sizeof(T));
	}
}

/** Inline RDMA write of `bytes` (<= 28) read from `laddr` now, at prepare time. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_write_inl(struct doca_gpu_dev_verbs_qp *qp,
									       struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									       const uint16_t wqe_idx,
									       enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									       const uint64_t raddr,
									       const uint32_t rkey,
									       const uint64_t laddr,
									       const uint32_t bytes)
{
	DOCA_GPUNETIO_VERBS_ASSERT(bytes <= DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE);
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp, wqe_ptr, wqe_idx, ctrl_flags, raddr, rkey, bytes);
	doca_gpu_dev_verbs_memcpy_data(wqe_ptr->inl_data + 36, (void *)(uintptr_t)laddr, bytes);
}

/** RDMA read from `raddr` into one local segment: DS 3. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_read(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  const uint16_t wqe_idx,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint64_t raddr,
									  const uint32_t rkey,
									  const uint64_t laddr0,
									  const uint32_t lkey0,
									  const uint32_t bytes0)
{
	doca_gpu_dev_verbs_wqe_prepare_write(qp,
					     wqe_ptr,
					     wqe_idx,
					     DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ,
					     ctrl_flags,
					     0,
					     raddr,
					     rkey,
					     laddr0,
					     lkey0,
					     bytes0);
}

/** RDMA read from `raddr` into two local segments: DS 4. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_read(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  const uint16_t wqe_idx,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint64_t raddr,
									  const uint32_t rkey,
									  const uint64_t laddr0,
									  const uint32_t lkey0,
									  const uint32_t bytes0,
									  const uint64_t laddr1,
									  const uint32_t lkey1,
									  const uint32_t bytes1)
{
	doca_gpu_dev_verbs_wqe_prepare_write(qp,
					     wqe_ptr,
					     wqe_idx,
					     DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ,
					     ctrl_flags,
					     0,
					     raddr,
					     rkey,
					     laddr0,
					     lkey0,
					     bytes0,
					     laddr1,
					     lkey1,
					     bytes1);
}

/**
 * Atomic on the 64-bit word at `raddr`; the old value lands at `laddr`. Fetch-add puts the
 * addend (`compare_add`) in both operand fields; compare-and-swap puts `swap_add` in the
 * swap field and `compare_add` in the compare field. DS 4.
 */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_atomic(struct doca_gpu_dev_verbs_qp *qp,
									    struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									    const uint16_t wqe_idx,
									    const uint32_t opcode,
									    enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									    const uint64_t raddr,
									    const uint32_t rkey,
									    const uint64_t laddr,
									    const uint32_t lkey,
									    const uint32_t bytes,
									    const uint64_t compare_add,
									    const uint64_t swap_add)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg,
					   wqe_idx,
					   opcode,
					   doca_priv_gpu_dev_verbs_qpn_ds(qp, DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_ATOMIC_FA_CAS),
					   ctrl_flags,
					   0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_raddr_words(seg, raddr, rkey);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
	bool fetch_add = opcode == DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA;
	seg[0] = doca_gpu_dev_verbs_bswap64(fetch_add ? compare_add : swap_add);
	seg[1] = doca_gpu_dev_verbs_bswap64(compare_add);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 2), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, laddr, lkey, bytes);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 3), seg);
}

/** WAIT (core-direct): hold this queue until CQ `qpn_cqn` has completed WQE `max_index`. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_wait(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  uint16_t wqe_idx,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint32_t max_index,
									  const uint32_t qpn_cqn)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg,
					   wqe_idx,
					   DOCA_GPUNETIO_MLX5_OPCODE_WAIT,
					   doca_priv_gpu_dev_verbs_qpn_ds(qp, DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_WAIT),
					   ctrl_flags,
					   0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	seg[0] = 0;
	seg[1] = ((uint64_t)doca_gpu_dev_verbs_bswap32(qpn_cqn) << 32) | doca_gpu_dev_verbs_bswap32(max_index);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
}

/** SEND or SEND_IMM without data: DS 1. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_send(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  const uint16_t wqe_idx,
									  const uint32_t opcode,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint32_t immediate)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, opcode, doca_priv_gpu_dev_verbs_qpn_ds(qp, 1), ctrl_flags, immediate);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
}

/** SEND or SEND_IMM with one segment: DS 2. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_send(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  const uint16_t wqe_idx,
									  const uint32_t opcode,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint32_t immediate,
									  const uint64_t addr_data0,
									  const uint32_t mkey_data0,
									  const uint32_t bytes_data0)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, opcode, doca_priv_gpu_dev_verbs_qpn_ds(qp, 2), ctrl_flags, immediate);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, addr_data0, mkey_data0, bytes_data0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
}

/** SEND or SEND_IMM with two segments: DS 3. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_send(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  const uint16_t wqe_idx,
									  const uint32_t opcode,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint32_t immediate,
									  const uint64_t addr_data0,
									  const uint32_t mkey_data0,
									  const uint32_t bytes_data0,
									  const uint64_t addr_data1,
									  const uint32_t mkey_data1,
									  const uint32_t bytes_data1)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, opcode, doca_priv_gpu_dev_verbs_qpn_ds(qp, 3), ctrl_flags, immediate);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, addr_data0, mkey_data0, bytes_data0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, addr_data1, mkey_data1, bytes_data1);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 2), seg);
}

/** SEND or SEND_IMM with three segments: DS 4. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_send(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  const uint16_t wqe_idx,
									  const uint32_t opcode,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint32_t immediate,
									  const uint64_t addr_data0,
									  const uint32_t mkey_data0,
									  const uint32_t bytes_data0,
									  const uint64_t addr_data1,
									  const uint32_t mkey_data1,
									  const uint32_t bytes_data1,
									  const uint64_t addr_data2,
									  const uint32_t mkey_data2,
									  const uint32_t bytes_data2)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, opcode, doca_priv_gpu_dev_verbs_qpn_ds(qp, 4), ctrl_flags, immediate);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, addr_data0, mkey_data0, bytes_data0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, addr_data1, mkey_data1, bytes_data1);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 2), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, addr_data2, mkey_data2, bytes_data2);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 3), seg);
}

/** One 16-byte receive WQE. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_recv(struct doca_gpu_dev_verbs_qp *qp,
									  struct mlx5_wqe_data_seg *rwqe_ptr,
									  const uint64_t addr,
									  const uint32_t mkey,
									  const uint32_t bytes)
{
	(void)qp;
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_data_words(seg, addr, mkey, bytes);
	doca_gpu_dev_verbs_store_wqe_seg((uint64_t *)rwqe_ptr, seg);
}

/** DUMP of `bytes` at `laddr` (a memory-ordering barrier for pre-Hopper GPUs): DS 2. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_wqe_prepare_dump(struct doca_gpu_dev_verbs_qp *qp,
									  struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									  const uint16_t wqe_idx,
									  enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags,
									  const uint64_t laddr,
									  const uint32_t lkey,
									  const uint32_t bytes)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, DOCA_GPUNETIO_MLX5_OPCODE_DUMP, doca_priv_gpu_dev_verbs_qpn_ds(qp, 2), ctrl_flags, 0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
	doca_priv_gpu_dev_verbs_data_words(seg, laddr, lkey, bytes);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 1), seg);
}

/* doca-soft: NOP (DS 1), posted for zero-byte transfers so that they still get a ticket. */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_verbs_wqe_prepare_nop(struct doca_gpu_dev_verbs_qp *qp,
									      struct doca_gpu_dev_verbs_wqe *wqe_ptr,
									      const uint16_t wqe_idx,
									      enum doca_gpu_dev_verbs_wqe_ctrl_flags ctrl_flags)
{
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg, wqe_idx, DOCA_GPUNETIO_MLX5_OPCODE_NOP, doca_priv_gpu_dev_verbs_qpn_ds(qp, 1), ctrl_flags, 0);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe_ptr, 0), seg);
}

/** Waits for the send-queue completion of ticket `*ticket`. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_wait(struct doca_gpu_dev_verbs_qp *qp, doca_gpu_dev_verbs_ticket_t *ticket)
{
	doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, *ticket);
}

/** Waits for the completion of the last WQE reserved on the send queue (none: returns). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_wait(struct doca_gpu_dev_verbs_qp *qp)
{
	uint64_t rsvd = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&qp->sq_rsvd_index);
	if (rsvd == 0)
		return;
	doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, rsvd - 1);
}

#endif /* DOCA_GPUNETIO_DEV_VERBS_QP_CUH_ */
