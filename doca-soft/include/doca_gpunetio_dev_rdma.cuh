/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: legacy GPU RDMA (the GPU datapath of a doca_rdma context). In DOCA
 * 3.3 these are extern device functions of a static device library; doca-soft defines them
 * inline here, as it does the semaphore and buffer device API, so programs compile with or
 * without -rdc and link nothing extra. The handles are doca-soft's
 * (doca_soft_dev_rdma_ring.h): every connection is a GPU verbs QP, and this API writes the
 * same mlx5 WQEs as doca_gpunetio_dev_verbs_*.cuh, so one proxy NIC serves both.
 *
 * Weak calls take the queue position explicitly (from doca_gpu_dev_rdma_get_info, masked
 * with its mask); strong calls take the next position themselves and may be called by
 * many threads at once. Nothing is sent before a commit. Commits, wait_all and
 * recv_wait_all are for one thread at a time. Every call returns DOCA_ERROR_INVALID_VALUE
 * for a NULL handle or buffer, an unknown connection index, a length above the limits, or
 * non-zero flags where none are defined.
 */
#ifndef DOCA_GPUNETIO_DEV_RDMA_CUH_
#define DOCA_GPUNETIO_DEV_RDMA_CUH_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio_dev_buf.cuh"
#include "doca_gpunetio_dev_verbs_qp.cuh"
#include "doca_soft_dev_rdma_ring.h"

/** Write flags: IMM sends `imm` with the write (it consumes a receive at the peer). */
enum doca_gpu_dev_rdma_write_flags {
	DOCA_GPU_RDMA_WRITE_FLAG_NONE = 0,
	DOCA_GPU_RDMA_WRITE_FLAG_IMM = 1,
};

/** Send flags: IMM sends `imm` with the message. */
enum doca_gpu_dev_rdma_send_flags {
	DOCA_GPU_RDMA_SEND_FLAG_NONE = 0,
	DOCA_GPU_RDMA_SEND_FLAG_IMM = 1,
};

/** recv_wait_all: NB reports what completed and never blocks; B waits for the last commit's receives. */
enum doca_gpu_dev_rdma_recv_wait_flags {
	DOCA_GPU_RDMA_RECV_WAIT_FLAG_NB = 0,
	DOCA_GPU_RDMA_RECV_WAIT_FLAG_B = 1,
};

/* doca-soft: the QP of connection `connection_index`, or NULL. */
__device__ __forceinline__ struct doca_gpu_dev_verbs_qp *doca_soft_dev_rdma_conn(struct doca_gpu_dev_rdma *rdma,
										   uint32_t connection_index)
{
	if (rdma == nullptr || rdma->conn_qps == nullptr || connection_index >= rdma->num_connections)
		return nullptr;
	return &rdma->conn_qps[connection_index];
}

/* doca-soft: address of `offset` in `buf` (false on NULL or overflow). */
__device__ __forceinline__ bool doca_soft_dev_rdma_buf_addr(const struct doca_gpu_buf *buf, uint64_t offset, uint64_t *addr)
{
	if (buf == nullptr || offset > UINT64_MAX - buf->addr)
		return false;
	*addr = buf->addr + offset;
	return true;
}

/* doca-soft: WQE index of weak `position` on the send (or receive) queue of `qp`. */
template <enum doca_gpu_dev_verbs_qp_type qp_type>
__device__ __forceinline__ uint64_t doca_soft_dev_rdma_weak_index(struct doca_gpu_dev_verbs_qp *qp, uint32_t position)
{
	uint64_t pi;
	uint64_t mask;
	if constexpr (qp_type == DOCA_GPUNETIO_VERBS_QP_SQ) {
		pi = DOCA_GPUNETIO_VERBS_VOLATILE(qp->sq_wqe_pi);
		mask = qp->sq_wqe_mask;
	} else {
		pi = DOCA_GPUNETIO_VERBS_VOLATILE(qp->rq_wqe_pi);
		mask = qp->rq_wqe_mask;
	}
	uint64_t idx = pi + (((uint64_t)position - pi) & mask);
	doca_gpu_dev_verbs_wait_until_slot_available<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, qp_type>(qp, idx);
	return idx;
}

/* doca-soft: WQE index of a strong operation (next reserved index, slot free). */
template <enum doca_gpu_dev_verbs_qp_type qp_type>
__device__ __forceinline__ uint64_t doca_soft_dev_rdma_strong_index(struct doca_gpu_dev_verbs_qp *qp)
{
	return doca_gpu_dev_verbs_reserve_wq_slots<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, qp_type>(qp, 1);
}

/*
 * doca-soft: RDMA write / write-with-immediate / read WQE at `idx`; a zero length has no
 * data segment (DS 2). Host-callable for the encoding tests.
 */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_rdma_prepare_rw(struct doca_gpu_dev_verbs_qp *qp,
									 uint64_t idx,
									 uint32_t opcode,
									 uint32_t imm,
									 uint64_t raddr,
									 uint32_t rkey,
									 uint64_t laddr,
									 uint32_t lkey,
									 uint32_t length)
{
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	if (length > 0) {
		doca_gpu_dev_verbs_wqe_prepare_write(qp,
						     wqe,
						     (uint16_t)idx,
						     opcode,
						     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
						     imm,
						     raddr,
						     rkey,
						     laddr,
						     lkey,
						     length);
		return;
	}
	uint64_t seg[2];
	doca_priv_gpu_dev_verbs_ctrl_words(seg,
					   (uint16_t)idx,
					   opcode,
					   doca_priv_gpu_dev_verbs_qpn_ds(qp, 2),
					   DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					   imm);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe, 0), seg);
	doca_priv_gpu_dev_verbs_raddr_words(seg, raddr, rkey);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe, 1), seg);
}

/* doca-soft: inline RDMA write (<= 28 bytes) with or without immediate. Host-callable. */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_rdma_prepare_write_inl(struct doca_gpu_dev_verbs_qp *qp,
									        uint64_t idx,
									        uint32_t opcode,
									        uint32_t imm,
									        uint64_t raddr,
									        uint32_t rkey,
									        const uint8_t *data,
									        uint32_t length)
{
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	doca_priv_gpu_dev_verbs_inl_write_header(qp,
						 wqe,
						 (uint16_t)idx,
						 opcode,
						 DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
						 imm,
						 raddr,
						 rkey,
						 length);
	doca_gpu_dev_verbs_memcpy_data(wqe->inl_data + 36, (void *)data, length);
}

/* doca-soft: SEND / SEND_IMM with one data segment, or none for a zero length. Host-callable. */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_rdma_prepare_send(struct doca_gpu_dev_verbs_qp *qp,
									   uint64_t idx,
									   uint32_t opcode,
									   uint32_t imm,
									   uint64_t laddr,
									   uint32_t lkey,
									   uint32_t length)
{
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	if (length > 0)
		doca_gpu_dev_verbs_wqe_prepare_send(qp,
						    wqe,
						    (uint16_t)idx,
						    opcode,
						    DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
						    imm,
						    laddr,
						    lkey,
						    length);
	else
		doca_gpu_dev_verbs_wqe_prepare_send(qp, wqe, (uint16_t)idx, opcode, DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE, imm);
}

/*
 * doca-soft: inline SEND / SEND_IMM (<= 44 bytes): at byte 16 BE32(len | 0x80000000), the
 * payload right after; DS = ceil((20 + len) / 16). Host-callable.
 */
DOCA_SOFT_VERBS_HD static inline void doca_priv_gpu_dev_rdma_prepare_send_inl(struct doca_gpu_dev_verbs_qp *qp,
									       uint64_t idx,
									       uint32_t opcode,
									       uint32_t imm,
									       const uint8_t *data,
									       uint32_t length)
{
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	uint64_t seg[2];
	int ds = (int)((16 + 4 + length + 15) / 16);
	doca_priv_gpu_dev_verbs_ctrl_words(seg,
					   (uint16_t)idx,
					   opcode,
					   doca_priv_gpu_dev_verbs_qpn_ds(qp, ds),
					   DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					   imm);
	doca_gpu_dev_verbs_store_wqe_seg(doca_priv_gpu_dev_verbs_seg(wqe, 0), seg);
	*(uint32_t *)(wqe->inl_data + 16) = doca_gpu_dev_verbs_bswap32(length | MLX5_INLINE_SEG);
	doca_gpu_dev_verbs_memcpy_data(wqe->inl_data + 20, (void *)data, length);
}

/* doca-soft: the write WQE of write_weak/write_strong. */
__device__ __forceinline__ doca_error_t doca_soft_dev_rdma_write_at(struct doca_gpu_dev_verbs_qp *qp,
								     uint64_t idx,
								     uint64_t raddr,
								     uint32_t rkey,
								     uint64_t laddr,
								     uint32_t lkey,
								     size_t length,
								     uint32_t imm,
								     enum doca_gpu_dev_rdma_write_flags flags)
{
	uint32_t opcode = (flags & DOCA_GPU_RDMA_WRITE_FLAG_IMM) ? DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM
								  : DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE;
	doca_priv_gpu_dev_rdma_prepare_rw(qp, idx, opcode, imm, raddr, rkey, laddr, lkey, (uint32_t)length);
	return DOCA_SUCCESS;
}

/** RDMA write at an explicit queue `position`; IMM adds the immediate `imm`. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_write_weak(struct doca_gpu_dev_rdma *rdma,
								      uint32_t connection_index,
								      struct doca_gpu_buf *remote_buf,
								      uint64_t remote_offset,
								      struct doca_gpu_buf *local_buf,
								      uint64_t local_offset,
								      size_t length,
								      uint32_t imm,
								      const enum doca_gpu_dev_rdma_write_flags flags,
								      uint32_t position)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t raddr, laddr;
	if (qp == nullptr || !doca_soft_dev_rdma_buf_addr(remote_buf, remote_offset, &raddr) ||
	    !doca_soft_dev_rdma_buf_addr(local_buf, local_offset, &laddr) || length > DOCA_SOFT_DEV_RDMA_MAX_LENGTH ||
	    (flags & ~DOCA_GPU_RDMA_WRITE_FLAG_IMM) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_weak_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, position);
	return doca_soft_dev_rdma_write_at(qp, idx, raddr, remote_buf->mkey, laddr, local_buf->mkey, length, imm, flags);
}

/** RDMA write at the next queue position (thread-safe). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_write_strong(struct doca_gpu_dev_rdma *rdma,
									uint32_t connection_index,
									struct doca_gpu_buf *remote_buf,
									uint64_t remote_offset,
									struct doca_gpu_buf *local_buf,
									uint64_t local_offset,
									size_t length,
									uint32_t imm,
									const enum doca_gpu_dev_rdma_write_flags flags)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t raddr, laddr;
	if (qp == nullptr || !doca_soft_dev_rdma_buf_addr(remote_buf, remote_offset, &raddr) ||
	    !doca_soft_dev_rdma_buf_addr(local_buf, local_offset, &laddr) || length > DOCA_SOFT_DEV_RDMA_MAX_LENGTH ||
	    (flags & ~DOCA_GPU_RDMA_WRITE_FLAG_IMM) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_strong_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp);
	return doca_soft_dev_rdma_write_at(qp, idx, raddr, remote_buf->mkey, laddr, local_buf->mkey, length, imm, flags);
}

/* doca-soft: argument checks of the inline writes. */
__device__ __forceinline__ bool doca_soft_dev_rdma_inline_write_ok(struct doca_gpu_dev_verbs_qp *qp,
								    struct doca_gpu_buf *remote_buf,
								    uint64_t remote_offset,
								    uint8_t *inl_data,
								    uint32_t length,
								    enum doca_gpu_dev_rdma_write_flags flags,
								    uint64_t *raddr)
{
	return qp != nullptr && doca_soft_dev_rdma_buf_addr(remote_buf, remote_offset, raddr) &&
	       (inl_data != nullptr || length == 0) && length <= DOCA_SOFT_DEV_RDMA_MAX_INLINE_WRITE &&
	       (flags & ~DOCA_GPU_RDMA_WRITE_FLAG_IMM) == 0;
}

/** Inline RDMA write of `inl_lenght` (<= 28) bytes of `inl_data`, at an explicit position. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_write_inline_weak(struct doca_gpu_dev_rdma *rdma,
									     uint32_t connection_index,
									     struct doca_gpu_buf *remote_buf,
									     uint64_t remote_offset,
									     uint8_t *inl_data,
									     uint32_t inl_lenght,
									     uint32_t imm,
									     const enum doca_gpu_dev_rdma_write_flags flags,
									     uint32_t position)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t raddr;
	if (!doca_soft_dev_rdma_inline_write_ok(qp, remote_buf, remote_offset, inl_data, inl_lenght, flags, &raddr))
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_weak_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, position);
	uint32_t opcode = (flags & DOCA_GPU_RDMA_WRITE_FLAG_IMM) ? DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM
								  : DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE;
	doca_priv_gpu_dev_rdma_prepare_write_inl(qp, idx, opcode, imm, raddr, remote_buf->mkey, inl_data, inl_lenght);
	return DOCA_SUCCESS;
}

/** Inline RDMA write at the next queue position (thread-safe). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_write_inline_strong(struct doca_gpu_dev_rdma *rdma,
									       uint32_t connection_index,
									       struct doca_gpu_buf *remote_buf,
									       uint64_t remote_offset,
									       uint8_t *inl_data,
									       uint32_t inl_lenght,
									       uint32_t imm,
									       const enum doca_gpu_dev_rdma_write_flags flags)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t raddr;
	if (!doca_soft_dev_rdma_inline_write_ok(qp, remote_buf, remote_offset, inl_data, inl_lenght, flags, &raddr))
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_strong_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp);
	uint32_t opcode = (flags & DOCA_GPU_RDMA_WRITE_FLAG_IMM) ? DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM
								  : DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE;
	doca_priv_gpu_dev_rdma_prepare_write_inl(qp, idx, opcode, imm, raddr, remote_buf->mkey, inl_data, inl_lenght);
	return DOCA_SUCCESS;
}

/** RDMA read of `length` bytes from the remote buffer into the local one, at an explicit position. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_read_weak(struct doca_gpu_dev_rdma *rdma,
								     uint32_t connection_index,
								     struct doca_gpu_buf *remote_buf,
								     uint64_t remote_offset,
								     struct doca_gpu_buf *local_buf,
								     uint64_t local_offset,
								     size_t length,
								     const uint32_t flags_bitmask,
								     uint32_t position)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t raddr, laddr;
	if (qp == nullptr || !doca_soft_dev_rdma_buf_addr(remote_buf, remote_offset, &raddr) ||
	    !doca_soft_dev_rdma_buf_addr(local_buf, local_offset, &laddr) || length > DOCA_SOFT_DEV_RDMA_MAX_LENGTH ||
	    flags_bitmask != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_weak_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, position);
	doca_priv_gpu_dev_rdma_prepare_rw(qp,
					  idx,
					  DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ,
					  0,
					  raddr,
					  remote_buf->mkey,
					  laddr,
					  local_buf->mkey,
					  (uint32_t)length);
	return DOCA_SUCCESS;
}

/** RDMA read at the next queue position (thread-safe). `flags_bitmask` must be 0. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_read_strong(struct doca_gpu_dev_rdma *rdma,
								       uint32_t connection_index,
								       struct doca_gpu_buf *remote_buf,
								       uint64_t remote_offset,
								       struct doca_gpu_buf *local_buf,
								       uint64_t local_offset,
								       size_t length,
								       const uint32_t flags_bitmask)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t raddr, laddr;
	if (qp == nullptr || !doca_soft_dev_rdma_buf_addr(remote_buf, remote_offset, &raddr) ||
	    !doca_soft_dev_rdma_buf_addr(local_buf, local_offset, &laddr) || length > DOCA_SOFT_DEV_RDMA_MAX_LENGTH ||
	    flags_bitmask != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_strong_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp);
	doca_priv_gpu_dev_rdma_prepare_rw(qp,
					  idx,
					  DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ,
					  0,
					  raddr,
					  remote_buf->mkey,
					  laddr,
					  local_buf->mkey,
					  (uint32_t)length);
	return DOCA_SUCCESS;
}

/** Send of `src_length` bytes of `send_buf` at `send_offset`, at an explicit position. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_send_weak(struct doca_gpu_dev_rdma *rdma,
								     uint32_t connection_index,
								     struct doca_gpu_buf *send_buf,
								     uint64_t send_offset,
								     size_t src_length,
								     uint32_t imm,
								     const enum doca_gpu_dev_rdma_send_flags flags,
								     uint32_t position)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t laddr;
	if (qp == nullptr || !doca_soft_dev_rdma_buf_addr(send_buf, send_offset, &laddr) ||
	    src_length > DOCA_SOFT_DEV_RDMA_MAX_LENGTH || (flags & ~DOCA_GPU_RDMA_SEND_FLAG_IMM) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_weak_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, position);
	uint32_t opcode = (flags & DOCA_GPU_RDMA_SEND_FLAG_IMM) ? DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM : DOCA_GPUNETIO_MLX5_OPCODE_SEND;
	doca_priv_gpu_dev_rdma_prepare_send(qp, idx, opcode, imm, laddr, send_buf->mkey, (uint32_t)src_length);
	return DOCA_SUCCESS;
}

/** Send at the next queue position (thread-safe). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_send_strong(struct doca_gpu_dev_rdma *rdma,
								       uint32_t connection_index,
								       struct doca_gpu_buf *send_buf,
								       uint64_t send_offset,
								       size_t src_length,
								       uint32_t imm,
								       const enum doca_gpu_dev_rdma_send_flags flags)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	uint64_t laddr;
	if (qp == nullptr || !doca_soft_dev_rdma_buf_addr(send_buf, send_offset, &laddr) ||
	    src_length > DOCA_SOFT_DEV_RDMA_MAX_LENGTH || (flags & ~DOCA_GPU_RDMA_SEND_FLAG_IMM) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_strong_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp);
	uint32_t opcode = (flags & DOCA_GPU_RDMA_SEND_FLAG_IMM) ? DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM : DOCA_GPUNETIO_MLX5_OPCODE_SEND;
	doca_priv_gpu_dev_rdma_prepare_send(qp, idx, opcode, imm, laddr, send_buf->mkey, (uint32_t)src_length);
	return DOCA_SUCCESS;
}

/** Inline send of `inl_lenght` (<= 44) bytes of `inl_data`, at an explicit position. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_send_inline_weak(struct doca_gpu_dev_rdma *rdma,
									    uint32_t connection_index,
									    uint8_t *inl_data,
									    uint32_t inl_lenght,
									    uint32_t imm,
									    const enum doca_gpu_dev_rdma_send_flags flags,
									    uint32_t position)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	if (qp == nullptr || (inl_data == nullptr && inl_lenght != 0) || inl_lenght > DOCA_SOFT_DEV_RDMA_MAX_INLINE_SEND ||
	    (flags & ~DOCA_GPU_RDMA_SEND_FLAG_IMM) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_weak_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, position);
	uint32_t opcode = (flags & DOCA_GPU_RDMA_SEND_FLAG_IMM) ? DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM : DOCA_GPUNETIO_MLX5_OPCODE_SEND;
	doca_priv_gpu_dev_rdma_prepare_send_inl(qp, idx, opcode, imm, inl_data, inl_lenght);
	return DOCA_SUCCESS;
}

/** Inline send at the next queue position (thread-safe). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_send_inline_strong(struct doca_gpu_dev_rdma *rdma,
									      uint32_t connection_index,
									      uint8_t *inl_data,
									      uint32_t inl_lenght,
									      uint32_t imm,
									      const enum doca_gpu_dev_rdma_send_flags flags)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	if (qp == nullptr || (inl_data == nullptr && inl_lenght != 0) || inl_lenght > DOCA_SOFT_DEV_RDMA_MAX_INLINE_SEND ||
	    (flags & ~DOCA_GPU_RDMA_SEND_FLAG_IMM) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_strong_index<DOCA_GPUNETIO_VERBS_QP_SQ>(qp);
	uint32_t opcode = (flags & DOCA_GPU_RDMA_SEND_FLAG_IMM) ? DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM : DOCA_GPUNETIO_MLX5_OPCODE_SEND;
	doca_priv_gpu_dev_rdma_prepare_send_inl(qp, idx, opcode, imm, inl_data, inl_lenght);
	return DOCA_SUCCESS;
}

/* doca-soft: publish the queue (send or receive half of `qp`) up to `prod` and ring it. */
template <enum doca_gpu_dev_verbs_qp_type qp_type>
__device__ __forceinline__ void doca_soft_dev_rdma_publish(struct doca_gpu_dev_verbs_qp *qp, uint64_t prod)
{
	uint64_t *rsvd = qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? &qp->sq_rsvd_index : &qp->rq_rsvd_index;
	uint64_t *ready = qp_type == DOCA_GPUNETIO_VERBS_QP_SQ ? &qp->sq_ready_index : &qp->rq_ready_index;
	doca_gpu_dev_verbs_atomic_max<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(rsvd, prod);
	doca_gpu_dev_verbs_atomic_max<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(ready, prod);
	doca_gpu_dev_verbs_submit<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
				  DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
				  DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
				  qp_type>(qp, prod);
}

/** Submits the `num_ops` weak operations written from the current position on. One thread. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_commit_weak(struct doca_gpu_dev_rdma *rdma,
								       uint32_t connection_index,
								       uint32_t num_ops)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	if (qp == nullptr || num_ops > (uint32_t)qp->sq_wqe_num)
		return DOCA_ERROR_INVALID_VALUE;
	doca_soft_dev_rdma_publish<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, DOCA_GPUNETIO_VERBS_VOLATILE(qp->sq_wqe_pi) + num_ops);
	doca_gpu_dev_verbs_atomic_add<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(&rdma->commits, 1);
	return DOCA_SUCCESS;
}

/** Submits every strong operation enqueued on the connection. One thread. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_commit_strong(struct doca_gpu_dev_rdma *rdma, uint32_t connection_index)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	if (qp == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	doca_soft_dev_rdma_publish<DOCA_GPUNETIO_VERBS_QP_SQ>(qp, DOCA_GPUNETIO_VERBS_VOLATILE(qp->sq_rsvd_index));
	doca_gpu_dev_verbs_atomic_add<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(&rdma->commits, 1);
	return DOCA_SUCCESS;
}

/**
 * Waits until everything committed on every connection has completed; `*num_commits`
 * gets the number of commits made since the previous wait_all (doca-soft's reading of
 * DOCA's "commits completed"). An error completion gives DOCA_ERROR_IO_FAILED. One thread.
 */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_wait_all(struct doca_gpu_dev_rdma *rdma, uint32_t *num_commits)
{
	if (rdma == nullptr || num_commits == nullptr || (rdma->conn_qps == nullptr && rdma->num_connections != 0))
		return DOCA_ERROR_INVALID_VALUE;
	cuda::atomic_ref<uint64_t, cuda::thread_scope_device> commits(rdma->commits);
	uint64_t n = commits.exchange(0, cuda::memory_order_relaxed);
	doca_error_t result = DOCA_SUCCESS;
	for (uint32_t i = 0; i < rdma->num_connections; i++) {
		struct doca_gpu_dev_verbs_qp *qp = &rdma->conn_qps[i];
		uint64_t pi = DOCA_GPUNETIO_VERBS_VOLATILE(qp->sq_wqe_pi);
		if (pi == 0)
			continue;
		if (doca_gpu_dev_verbs_poll_cq_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq,
															     pi - 1) != 0)
			result = DOCA_ERROR_IO_FAILED;
	}
	*num_commits = (uint32_t)n;
	return result;
}

/** Next free position (moves at each commit) and the position mask of a connection. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_get_info(struct doca_gpu_dev_rdma *rdma,
								    uint32_t connection_index,
								    uint32_t *curr_position,
								    uint32_t *mask_max_position)
{
	struct doca_gpu_dev_verbs_qp *qp = doca_soft_dev_rdma_conn(rdma, connection_index);
	if (qp == nullptr || curr_position == nullptr || mask_max_position == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*curr_position = (uint32_t)(DOCA_GPUNETIO_VERBS_VOLATILE(qp->sq_wqe_pi) & qp->sq_wqe_mask);
	*mask_max_position = qp->sq_wqe_mask;
	return DOCA_SUCCESS;
}

/** The receive side of the handle. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_get_recv(struct doca_gpu_dev_rdma *rdma,
								    struct doca_gpu_dev_rdma_r **rdma_r)
{
	if (rdma == nullptr || rdma_r == nullptr || rdma->recv.qp == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	*rdma_r = &rdma->recv;
	return DOCA_SUCCESS;
}

/* doca-soft: the receive WQE of recv_weak/recv_strong (no buffer: invalid key, length 0). */
__device__ __forceinline__ void doca_soft_dev_rdma_recv_at(struct doca_gpu_dev_verbs_qp *qp,
							    uint64_t idx,
							    struct doca_gpu_buf *recv_buf,
							    uint64_t addr,
							    size_t recv_length)
{
	uint32_t key = recv_buf != nullptr ? recv_buf->mkey : doca_gpu_dev_verbs_bswap32(MLX5_INVALID_LKEY);
	doca_gpu_dev_verbs_wqe_prepare_recv(qp, doca_gpu_dev_verbs_get_rwqe_ptr(qp, (uint16_t)idx), addr, key, (uint32_t)recv_length);
}

/* doca-soft: argument checks of the receives. */
__device__ __forceinline__ bool doca_soft_dev_rdma_recv_ok(struct doca_gpu_dev_rdma_r *rdma_r,
							    struct doca_gpu_buf *recv_buf,
							    size_t recv_length,
							    uint64_t recv_offset,
							    uint32_t flags_bitmask,
							    uint64_t *addr)
{
	if (rdma_r == nullptr || rdma_r->qp == nullptr || flags_bitmask != 0 || recv_length > DOCA_SOFT_DEV_RDMA_MAX_LENGTH)
		return false;
	if (recv_buf == nullptr) {
		*addr = 0;
		return recv_length == 0;
	}
	return doca_soft_dev_rdma_buf_addr(recv_buf, recv_offset, addr);
}

/** Posts a receive (`recv_buf` NULL with length 0: absorbs a write with immediate) at an explicit position. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_recv_weak(struct doca_gpu_dev_rdma_r *rdma_r,
								     struct doca_gpu_buf *recv_buf,
								     size_t recv_length,
								     uint64_t recv_offset,
								     const uint32_t flags_bitmask,
								     uint32_t position)
{
	uint64_t addr;
	if (!doca_soft_dev_rdma_recv_ok(rdma_r, recv_buf, recv_length, recv_offset, flags_bitmask, &addr))
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_weak_index<DOCA_GPUNETIO_VERBS_QP_RQ>(rdma_r->qp, position);
	doca_soft_dev_rdma_recv_at(rdma_r->qp, idx, recv_buf, addr, recv_length);
	return DOCA_SUCCESS;
}

/** Posts a receive at the next position (thread-safe). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_recv_strong(struct doca_gpu_dev_rdma_r *rdma_r,
								       struct doca_gpu_buf *recv_buf,
								       size_t recv_length,
								       uint64_t recv_offset,
								       const uint32_t flags_bitmask)
{
	uint64_t addr;
	if (!doca_soft_dev_rdma_recv_ok(rdma_r, recv_buf, recv_length, recv_offset, flags_bitmask, &addr))
		return DOCA_ERROR_INVALID_VALUE;
	uint64_t idx = doca_soft_dev_rdma_strong_index<DOCA_GPUNETIO_VERBS_QP_RQ>(rdma_r->qp);
	doca_soft_dev_rdma_recv_at(rdma_r->qp, idx, recv_buf, addr, recv_length);
	return DOCA_SUCCESS;
}

/** Makes the `num_ops` weak receives from the current position on available. One thread. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_recv_commit_weak(struct doca_gpu_dev_rdma_r *rdma_r, uint32_t num_ops)
{
	if (rdma_r == nullptr || rdma_r->qp == nullptr || num_ops > rdma_r->qp->rq_wqe_num)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_gpu_dev_verbs_qp *qp = rdma_r->qp;
	doca_soft_dev_rdma_publish<DOCA_GPUNETIO_VERBS_QP_RQ>(qp, DOCA_GPUNETIO_VERBS_VOLATILE(qp->rq_wqe_pi) + num_ops);
	return DOCA_SUCCESS;
}

/** Makes every strong receive posted so far available. One thread. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_recv_commit_strong(struct doca_gpu_dev_rdma_r *rdma_r)
{
	if (rdma_r == nullptr || rdma_r->qp == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_gpu_dev_verbs_qp *qp = rdma_r->qp;
	doca_soft_dev_rdma_publish<DOCA_GPUNETIO_VERBS_QP_RQ>(qp, DOCA_GPUNETIO_VERBS_VOLATILE(qp->rq_rsvd_index));
	return DOCA_SUCCESS;
}

/* doca-soft: the connection whose QP number is `qpn` (UINT32_MAX when none). */
__device__ __forceinline__ uint32_t doca_soft_dev_rdma_conn_of_qpn(struct doca_gpu_dev_rdma_r *rdma_r, uint32_t qpn)
{
	struct doca_gpu_dev_rdma *rdma =
		(struct doca_gpu_dev_rdma *)((uint8_t *)rdma_r - offsetof(struct doca_gpu_dev_rdma, recv));
	for (uint32_t i = 0; i < rdma->num_connections; i++)
		if ((rdma->conn_qps[i].sq_num & 0xffffff) == qpn)
			return i;
	return UINT32_MAX;
}

/**
 * Reports the receives completed since the previous call, in arrival order: their count
 * in `*num_ops`, and per receive the immediate (0 without one) in `imm_val[i]` and the
 * connection index in `connection_index[i]` (either array may be NULL; size them for the
 * receives of the last commit). FLAG_B first waits for every committed receive; FLAG_NB
 * reports those present now. An error completion gives DOCA_ERROR_IO_FAILED. One thread.
 */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_recv_wait_all(struct doca_gpu_dev_rdma_r *rdma_r,
									 const enum doca_gpu_dev_rdma_recv_wait_flags flags,
									 uint32_t *num_ops,
									 uint32_t *imm_val,
									 uint32_t *connection_index)
{
	if (rdma_r == nullptr || rdma_r->qp == nullptr || num_ops == nullptr ||
	    (flags != DOCA_GPU_RDMA_RECV_WAIT_FLAG_NB && flags != DOCA_GPU_RDMA_RECV_WAIT_FLAG_B))
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_gpu_dev_verbs_qp *qp = rdma_r->qp;
	struct doca_gpu_dev_verbs_cq *cq = &qp->cq_rq;
	uint64_t target = DOCA_GPUNETIO_VERBS_VOLATILE(qp->rq_wqe_pi);
	uint64_t ci = DOCA_GPUNETIO_VERBS_VOLATILE(cq->cqe_ci);
	uint32_t n = 0;
	doca_error_t result = DOCA_SUCCESS;
	if (flags == DOCA_GPU_RDMA_RECV_WAIT_FLAG_B && target > ci) {
		if (doca_priv_gpu_dev_verbs_poll_cq_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_QP_RQ>(
			    cq,
			    target - 1) != 0)
			result = DOCA_ERROR_IO_FAILED;
	}
	for (uint64_t k = ci; k < target && result == DOCA_SUCCESS; k++) {
		int r = doca_priv_gpu_dev_verbs_poll_one_cq_at<DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU, DOCA_GPUNETIO_VERBS_QP_RQ>(
			cq,
			k);
		if (r == EBUSY)
			break;
		if (r != 0) {
			result = DOCA_ERROR_IO_FAILED;
			break;
		}
		struct mlx5_cqe64 *cqe = doca_priv_gpu_dev_verbs_cqe_ptr(cq, k);
		uint8_t opcode = cqe->op_own >> DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT;
		bool has_imm = opcode == MLX5_CQE_RESP_WR_IMM || opcode == MLX5_CQE_RESP_SEND_IMM;
		if (imm_val != nullptr)
			imm_val[n] = has_imm ? cqe->imm_inval_pkey : 0;
		if (connection_index != nullptr)
			connection_index[n] =
				doca_soft_dev_rdma_conn_of_qpn(rdma_r, doca_gpu_dev_verbs_bswap32(cqe->sop_drop_qpn) & 0xffffff);
		n++;
	}
	if (n > 0)
		doca_gpu_dev_verbs_atomic_max<uint64_t, DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>(&cq->cqe_ci, ci + n);
	*num_ops = n;
	return result;
}

/** Next free receive position (moves at each receive commit) and the position mask. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_rdma_recv_get_info(struct doca_gpu_dev_rdma_r *rdma_r,
									 uint32_t *curr_position,
									 uint32_t *mask_max_position)
{
	if (rdma_r == nullptr || rdma_r->qp == nullptr || curr_position == nullptr || mask_max_position == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_gpu_dev_verbs_qp *qp = rdma_r->qp;
	*curr_position = (uint32_t)(DOCA_GPUNETIO_VERBS_VOLATILE(qp->rq_wqe_pi) & qp->rq_wqe_mask);
	*mask_max_position = qp->rq_wqe_mask;
	return DOCA_SUCCESS;
}

#endif /* DOCA_GPUNETIO_DEV_RDMA_CUH_ */
