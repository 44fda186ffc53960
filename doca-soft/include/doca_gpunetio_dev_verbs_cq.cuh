/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API, GPU verbs: polling completion queues. Header-only CUDA, DOCA 3.3's
 * names and template signatures.
 *
 * The CQ ring holds `cqe_num` (a power of two) 64-byte mlx5 CQEs (struct mlx5_cqe64),
 * initialised to op_own 0xF1 (opcode INVALID, owner 1). CQE number k (64-bit, counted from
 * 0) lives in slot k & cqe_mask; the producer (the NIC, in doca-soft the CPU proxy) writes
 * it with op_own = opcode << 4 | flags | owner, owner = (k / cqe_num) & 1, and op_own last:
 *   byte 63 op_own: opcode (REQ 0x0 for any successful send-queue completion, RESP_WR_IMM
 *       0x1, RESP_SEND 0x2, RESP_SEND_IMM 0x3, REQ_ERR 0xD, RESP_ERR 0xE), bit 0x4 set when
 *       received data is inline in bytes 0-31, bit 0 the owner bit;
 *   bytes 60-61 wqe_counter: BE16 of the index of the WQE that completed;
 *   bytes 44-47 byte_cnt: BE32 received length; bytes 36-39 imm_inval_pkey: the immediate
 *       (raw, as the sender gave it); bytes 56-59 sop_drop_qpn: QPN in the low 24 bits.
 * Every helper-built WQE asks for a completion (CQ_UPDATE), so on each queue CQE number k
 * completes WQE index k. The pollers here never write the CQ doorbell record (the CQs are
 * created with overrun allowed).
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_CQ_CUH_
#define DOCA_GPUNETIO_DEV_VERBS_CQ_CUH_

#include "doca_gpunetio_dev_verbs_common.cuh"

__device__ static inline struct doca_gpu_dev_verbs_cq *doca_gpu_dev_verbs_qp_get_cq_sq(struct doca_gpu_dev_verbs_qp *qp)
{
	return &qp->cq_sq;
}

__device__ static inline struct doca_gpu_dev_verbs_cq *doca_gpu_dev_verbs_qp_get_cq_rq(struct doca_gpu_dev_verbs_qp *qp)
{
	return &qp->cq_rq;
}

/** (idx + inc) modulo the 24-bit CQ index space. */
DOCA_SOFT_VERBS_HD static inline uint32_t doca_gpu_dev_verbs_cqe_idx_inc_mask(uint32_t idx, uint32_t inc)
{
	return (idx + inc) & DOCA_GPUNETIO_VERBS_CQE_CI_MASK;
}

/** Non-zero when the received data sits in the CQE itself (first 32 bytes). */
DOCA_SOFT_VERBS_HD static inline uint32_t doca_gpu_dev_verbs_cqe_is_inline(struct mlx5_cqe64 *cqe64)
{
	return cqe64->op_own & MLX5_INLINE_SCATTER_32;
}

/** Received length in bytes. */
DOCA_SOFT_VERBS_HD static inline uint32_t doca_gpu_dev_verbs_cqe_get_bytes(struct mlx5_cqe64 *cqe64)
{
	return doca_gpu_dev_verbs_bswap32(cqe64->byte_cnt);
}

/** Inline-received data: the CQE's first 32 bytes. */
DOCA_SOFT_VERBS_HD static inline uint8_t *doca_gpu_dev_verbs_cqe_get_inl_data(struct mlx5_cqe64 *cqe64)
{
	return (uint8_t *)cqe64;
}

/*
 * doca-soft: the state of CQE number `cons_index` given its slot's op_own and wqe_counter
 * bytes (as read from memory): 0 present and successful, EBUSY not written yet, -EIO an
 * error CQE. `check_counter` adds DOCA's pre-Hopper requirement that wqe_counter match
 * too. Host-callable so the tests check the rules on a CPU.
 */
DOCA_SOFT_VERBS_HD static inline int doca_priv_gpu_dev_verbs_cqe_status(uint8_t op_own,
									 __be16 wqe_counter,
									 uint64_t cons_index,
									 uint32_t cqe_num,
									 bool check_counter)
{
	uint8_t expected_owner = (cons_index & cqe_num) ? 1 : 0;
	if ((op_own & MLX5_CQE_OWNER_MASK) != expected_owner)
		return EBUSY;
	if (check_counter && doca_priv_gpu_dev_verbs_bswap16(wqe_counter) != (uint16_t)(cons_index & 0xffff))
		return EBUSY;
	uint8_t opcode = op_own >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT;
	if (opcode == MLX5_CQE_INVALID)
		return EBUSY;
	if (opcode == MLX5_CQE_REQ_ERR || opcode == MLX5_CQE_RESP_ERR)
		return -EIO;
	return 0;
}

/** Prints an error CQE (only when DOCA_GPUNETIO_VERBS_ENABLE_DEBUG is 1). */
__device__ static inline void doca_gpu_dev_verbs_cq_print_cqe_err(struct mlx5_cqe64 *cqe64)
{
#if DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1
	struct mlx5_err_cqe_ex *err = (struct mlx5_err_cqe_ex *)cqe64;
	printf("error CQE: wqe_counter %u opcode 0x%x syndrome 0x%x vendor syndrome 0x%x hw syndrome 0x%x type 0x%x qpn 0x%x\n",
	       (unsigned)doca_priv_gpu_dev_verbs_bswap16(err->wqe_counter),
	       (unsigned)(err->op_own >> 4),
	       (unsigned)err->syndrome,
	       (unsigned)err->vendor_err_synd,
	       (unsigned)err->hw_err_synd,
	       (unsigned)err->hw_synd_type,
	       (unsigned)(doca_gpu_dev_verbs_bswap32(err->s_wqe_opcode_qpn) & 0xffffff));
#else
	(void)cqe64;
#endif
}

/* doca-soft: slot of CQE number `cons_index`. */
__device__ static inline struct mlx5_cqe64 *doca_priv_gpu_dev_verbs_cqe_ptr(struct doca_gpu_dev_verbs_cq *cq,
									  uint64_t cons_index)
{
	uint8_t *base = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_daddr);
	uint32_t mask = doca_priv_gpu_dev_verbs_ldg(&cq->cqe_mask);
	return (struct mlx5_cqe64 *)(base + ((cons_index & mask) * DOCA_GPUNETIO_VERBS_CQE_SIZE));
}

/* doca-soft: reads one slot once (op_own first, relaxed at system scope); acquire on success. */
__device__ static inline int doca_priv_gpu_dev_verbs_cqe_read_status(struct doca_gpu_dev_verbs_cq *cq, uint64_t cons_index)
{
	struct mlx5_cqe64 *cqe = doca_priv_gpu_dev_verbs_cqe_ptr(cq, cons_index);
	uint8_t op_own = doca_gpu_dev_verbs_load_relaxed_sys_global(&cqe->op_own);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
	const bool check_counter = true;
#else
	const bool check_counter = false;
#endif
	__be16 counter = check_counter ? DOCA_GPUNETIO_VERBS_VOLATILE(cqe->wqe_counter) : (__be16)0;
	int r = doca_priv_gpu_dev_verbs_cqe_status(op_own,
						   counter,
						   cons_index,
						   doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num),
						   check_counter);
	if (r == 0)
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	else if (r < 0)
		doca_gpu_dev_verbs_cq_print_cqe_err(cqe);
	return r;
}

/** Internal: whether CQE `cons_index` is there (0, EBUSY, -EIO), without consuming it. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline int doca_priv_gpu_dev_verbs_poll_one_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t cons_index)
{
	uint64_t ci = doca_gpu_dev_verbs_atomic_read<uint64_t, resource_sharing_mode>(&cq->cqe_ci);
	if (cons_index < ci)
		return 0;
	if (cons_index >= ci + doca_priv_gpu_dev_verbs_ldg(&cq->cqe_num))
		return EBUSY;
	return doca_priv_gpu_dev_verbs_cqe_read_status(cq, cons_index);
}

/** Internal: waits for CQE `cons_index` (0 or -EIO), without consuming it. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline int doca_priv_gpu_dev_verbs_poll_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t cons_index)
{
	int r;
	do {
		r = doca_priv_gpu_dev_verbs_poll_one_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
	} while (r == EBUSY);
	return r;
}

/* doca-soft: after a poll that found CQE `cons_index` (`r` == 0), moves `cqe_ci` past it; returns `r`. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static inline int doca_priv_gpu_dev_verbs_cq_consume_if_found(struct doca_gpu_dev_verbs_cq *cq,
									  uint64_t cons_index,
									  int r)
{
	if (r == 0)
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&cq->cqe_ci, cons_index + 1);
	return r;
}

/**
 * Waits until CQE number `cons_index` is present: 0 (and `cqe_ci` moves past it), or
 * -EIO for an error CQE (`cqe_ci` unchanged). Returns at once for an already consumed
 * CQE; spins while the CQE is more than a ring ahead of `cqe_ci`.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline int doca_gpu_dev_verbs_poll_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t cons_index)
{
	return doca_priv_gpu_dev_verbs_cq_consume_if_found<resource_sharing_mode>(
		cq, cons_index, doca_priv_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(cq, cons_index));
}

/** Non-blocking poll_cq_at: 0 done, EBUSY not yet (or too far ahead), -EIO error CQE. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline int doca_gpu_dev_verbs_poll_one_cq_at(struct doca_gpu_dev_verbs_cq *cq, uint64_t cons_index)
{
	return doca_priv_gpu_dev_verbs_cq_consume_if_found<resource_sharing_mode>(
		cq, cons_index, doca_priv_gpu_dev_verbs_poll_one_cq_at<resource_sharing_mode, qp_type>(cq, cons_index));
}

/**
 * poll_cq_at that also returns the CQE's address in `*cqe64`. With blocking DISABLED the
 * slot is read once without checking that the CQE is there (DOCA 3.3 behaviour): unless
 * that read shows an error opcode (-EIO) the call consumes the CQE and returns 0.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED>
__device__ static inline int doca_gpu_dev_verbs_poll_cq(struct doca_gpu_dev_verbs_cq *cq,
							 uint64_t cons_index,
							 struct mlx5_cqe64 **cqe64)
{
	struct mlx5_cqe64 *cqe = doca_priv_gpu_dev_verbs_cqe_ptr(cq, cons_index);
	*cqe64 = cqe;
	if constexpr (blocking_mode == DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED) {
		return doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(cq, cons_index);
	} else {
		uint8_t op_own = doca_gpu_dev_verbs_load_relaxed_sys_global(&cqe->op_own);
		uint8_t opcode = op_own >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT;
		if (opcode == MLX5_CQE_REQ_ERR || opcode == MLX5_CQE_RESP_ERR) {
			doca_gpu_dev_verbs_cq_print_cqe_err(cqe);
			return -EIO;
		}
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&cq->cqe_ci, cons_index + 1);
		return 0;
	}
}

/** Reserves the next `count` CQEs (from `cqe_rsvd`) and waits for the last of them. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline int doca_gpu_dev_verbs_poll_cq(struct doca_gpu_dev_verbs_cq *cq, uint32_t count)
{
	if (count == 0)
		return 0;
	uint64_t base = doca_gpu_dev_verbs_atomic_add<uint64_t, resource_sharing_mode>(&cq->cqe_rsvd, (uint64_t)count);
	return doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, qp_type>(cq, base + count - 1);
}

/**
 * Consumes `num_cqes` CQEs: `cqe_ci` advances by that many, and unless the CQ runs in
 * overrun mode the CQ doorbell record gets the new 24-bit consumer index (big-endian).
 * Returns that 24-bit index.
 */
template <bool is_overrun>
__device__ static inline uint32_t doca_gpu_dev_verbs_cq_update_dbrec(struct doca_gpu_dev_verbs_cq *cq, uint32_t num_cqes)
{
	uint64_t next = cq->cqe_ci + num_cqes;
	uint32_t ci = (uint32_t)(next & DOCA_GPUNETIO_VERBS_CQE_CI_MASK);
	if constexpr (!is_overrun) {
		doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		DOCA_GPUNETIO_VERBS_WRITE_ONCE(*doca_priv_gpu_dev_verbs_ldg(&cq->dbrec), doca_gpu_dev_verbs_bswap32(ci));
	}
	DOCA_GPUNETIO_VERBS_WRITE_ONCE(cq->cqe_ci, next);
	return ci;
}

#endif /* DOCA_GPUNETIO_DEV_VERBS_CQ_CUH_ */
