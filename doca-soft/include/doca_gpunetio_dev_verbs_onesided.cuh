/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API, GPU verbs: one-sided operations (put = RDMA write, p = inline
 * write of a value, get = RDMA read, signal = remote fetch-add, and their combinations).
 * Header-only CUDA, DOCA 3.3's names, template signatures and default arguments.
 *
 * THREAD scope: each calling thread reserves, builds, publishes and submits its own WQEs;
 * transfers above 1 GiB are split into 1 GiB WQEs. WARP scope: all 32 lanes call with the
 * same QP; lane 0 reserves 32 WQEs (+1 for a signal or DUMP), lane i builds WQE base + i,
 * lane 0 publishes and submits; no splitting (size <= 1 GiB); needs sm_80 or newer.
 * Every WQE asks for a completion; a ticket is the index of the WQE to wait for.
 * doca-soft: a zero-byte THREAD put/get posts one NOP WQE and returns its ticket (DOCA
 * 3.3 posts nothing and leaves the ticket unset).
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_ONESIDED_CUH_
#define DOCA_GPUNETIO_DEV_VERBS_ONESIDED_CUH_

#include "doca_gpunetio_dev_verbs_qp.cuh"

/* doca-soft: the warp path needs sm_80; older GPUs get DOCA's message and ticket 0. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out)                 \
	do {                                                          \
		printf("__CUDA_ARCH__ < 800, WARP mode not enabled\n"); \
		*(out) = 0;                                           \
		return;                                               \
	} while (0)
#else
#define DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out) \
	do {                                          \
	} while (0)
#endif

/* doca-soft: number of WQEs a THREAD transfer of `size` bytes takes (a NOP for 0). */
__device__ static inline uint64_t doca_priv_gpu_dev_verbs_num_chunks(size_t size)
{
	uint64_t n = doca_gpu_dev_verbs_div_ceil_aligned_pow2((uint64_t)size, DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT);
	return n == 0 ? 1 : n;
}

/* doca-soft: bytes of chunk `i` of a `size`-byte transfer. */
__device__ static inline uint32_t doca_priv_gpu_dev_verbs_chunk_bytes(size_t size, uint64_t i)
{
	uint64_t left = (uint64_t)size - i * DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE;
	return (uint32_t)(left < DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE ? left : DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE);
}

/* doca-soft: writes (or reads, or a NOP for size 0) of a THREAD transfer at base.. */
__device__ static inline void doca_priv_gpu_dev_verbs_rw_chunks(struct doca_gpu_dev_verbs_qp *qp,
								 uint64_t base,
								 uint64_t nchunks,
								 uint32_t opcode,
								 struct doca_gpu_dev_verbs_addr raddr,
								 struct doca_gpu_dev_verbs_addr laddr,
								 size_t size)
{
	for (uint64_t i = 0; i < nchunks; i++) {
		uint64_t idx = base + i;
		struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
		if (size == 0) {
			doca_priv_gpu_dev_verbs_wqe_prepare_nop(qp, wqe, (uint16_t)idx, DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE);
			continue;
		}
		uint64_t off = i * DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE;
		uint32_t bytes = doca_priv_gpu_dev_verbs_chunk_bytes(size, i);
		if (opcode == DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ)
			doca_gpu_dev_verbs_wqe_prepare_read(qp,
							    wqe,
							    (uint16_t)idx,
							    DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
							    raddr.addr + off,
							    raddr.key,
							    laddr.addr + off,
							    laddr.key,
							    bytes);
		else
			doca_gpu_dev_verbs_wqe_prepare_write(qp,
							     wqe,
							     (uint16_t)idx,
							     opcode,
							     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
							     0,
							     raddr.addr + off,
							     raddr.key,
							     laddr.addr + off,
							     laddr.key,
							     bytes);
	}
}

/* doca-soft: the RDMA write WQE at `idx` of `bytes` bytes from laddr to raddr, asking for a CQE. */
__device__ static inline void doca_priv_gpu_dev_verbs_prepare_put_at(struct doca_gpu_dev_verbs_qp *qp,
								      uint64_t idx,
								      struct doca_gpu_dev_verbs_addr raddr,
								      struct doca_gpu_dev_verbs_addr laddr,
								      uint32_t bytes)
{
	doca_gpu_dev_verbs_wqe_prepare_write(qp,
					     doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx),
					     (uint16_t)idx,
					     DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE,
					     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					     0,
					     raddr.addr,
					     raddr.key,
					     laddr.addr,
					     laddr.key,
					     bytes);
}

/* doca-soft: the fetch-add WQE of a signal (old value to sig_laddr). */
__device__ static inline void doca_priv_gpu_dev_verbs_prepare_signal(struct doca_gpu_dev_verbs_qp *qp,
								      uint64_t idx,
								      struct doca_gpu_dev_verbs_addr sig_raddr,
								      struct doca_gpu_dev_verbs_addr sig_laddr,
								      uint64_t sig_val)
{
	doca_gpu_dev_verbs_wqe_prepare_atomic(qp,
					      doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx),
					      (uint16_t)idx,
					      DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA,
					      DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					      sig_raddr.addr,
					      sig_raddr.key,
					      sig_laddr.addr,
					      sig_laddr.key,
					      sizeof(uint64_t),
					      sig_val,
					      0);
}

/* doca-soft: the inline write WQE of a value. */
template <typename T>
__device__ static inline void doca_priv_gpu_dev_verbs_prepare_p(struct doca_gpu_dev_verbs_qp *qp,
								 uint64_t idx,
								 struct doca_gpu_dev_verbs_addr raddr,
								 T value)
{
	struct doca_gpu_dev_verbs_wqe *wqe = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_header(qp,
							     wqe,
							     (uint16_t)idx,
							     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
							     raddr.addr,
							     raddr.key,
							     sizeof(T));
	doca_gpu_dev_verbs_prepare_inl_rdma_write_wqe_data<T>(qp, wqe, value);
}

/* doca-soft: the DUMP WQE of a get/receive. */
__device__ static inline void doca_priv_gpu_dev_verbs_prepare_dump_at(struct doca_gpu_dev_verbs_qp *qp,
								       uint64_t idx,
								       struct doca_gpu_dev_verbs_addr daddr)
{
	doca_gpu_dev_verbs_wqe_prepare_dump(qp,
					    doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx),
					    (uint16_t)idx,
					    DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					    daddr.addr,
					    daddr.key,
					    1);
}

/* doca-soft: publish WQEs base..base+n-1 of the `qp_type` queue and submit them. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_priv_gpu_dev_verbs_post(struct doca_gpu_dev_verbs_qp *qp, uint64_t base, uint64_t n)
{
	doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode, qp_type>(qp, base, base + n - 1);
	doca_gpu_dev_verbs_submit<resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler, qp_type>(qp, base + n);
}

/* doca-soft: lane 0's value of a 64-bit index, for the whole warp. */
__device__ static inline uint64_t doca_priv_gpu_dev_verbs_bcast(uint64_t v)
{
	return __shfl_sync(DOCA_GPUNETIO_VERBS_WARP_FULL_MASK, (unsigned long long)v, 0);
}

/* doca-soft: lane 0 reserves `count` WQEs on the `qp_type` queue; every lane gets the first index. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_qp_type qp_type>
__device__ static inline uint64_t doca_priv_gpu_dev_verbs_warp_reserve(struct doca_gpu_dev_verbs_qp *qp,
									unsigned int lane,
									uint32_t count)
{
	uint64_t base = 0;
	if (lane == 0)
		base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, qp_type>(qp, count);
	return doca_priv_gpu_dev_verbs_bcast(base);
}

/* doca-soft: after every lane wrote its WQE, lane 0 posts `count` WQEs from `base` for the warp. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler,
	  enum doca_gpu_dev_verbs_qp_type qp_type = DOCA_GPUNETIO_VERBS_QP_SQ>
__device__ static inline void doca_priv_gpu_dev_verbs_warp_post(struct doca_gpu_dev_verbs_qp *qp,
								 unsigned int lane,
								 uint64_t base,
								 uint64_t count)
{
	__syncwarp();
	if (lane == 0)
		doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler, qp_type>(qp, base, count);
	__syncwarp();
}

/** RDMA write of `size` bytes from `laddr` to `raddr`, by the calling thread. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_put_thread(struct doca_gpu_dev_verbs_qp *qp,
							     struct doca_gpu_dev_verbs_addr raddr,
							     struct doca_gpu_dev_verbs_addr laddr,
							     size_t size,
							     doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t n = doca_priv_gpu_dev_verbs_num_chunks(size);
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)n);
	doca_priv_gpu_dev_verbs_rw_chunks(qp, base, n, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE, raddr, laddr, size);
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, base, n);
	*out_ticket = base + n - 1;
}

/** RDMA write by a whole warp: lane i writes its own range with WQE base + i. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_put_warp(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr raddr,
							   struct doca_gpu_dev_verbs_addr laddr,
							   size_t size,
							   doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out_ticket);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, lane, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	uint64_t idx = base + lane;
	doca_priv_gpu_dev_verbs_prepare_put_at(qp, idx, raddr, laddr, (uint32_t)size);
	doca_priv_gpu_dev_verbs_warp_post<resource_sharing_mode, nic_handler>(qp, lane, base, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	*out_ticket = idx;
}

/** RDMA write of `size` bytes from `laddr` (local) to `raddr` (remote); ticket in `*out_ticket`. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_put(struct doca_gpu_dev_verbs_qp *qp,
						      struct doca_gpu_dev_verbs_addr raddr,
						      struct doca_gpu_dev_verbs_addr laddr,
						      size_t size,
						      doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_put_warp<resource_sharing_mode, nic_handler>(qp, raddr, laddr, size, out_ticket);
	else
		doca_gpu_dev_verbs_put_thread<resource_sharing_mode, nic_handler>(qp, raddr, laddr, size, out_ticket);
}

template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_put(struct doca_gpu_dev_verbs_qp *qp,
						      struct doca_gpu_dev_verbs_addr raddr,
						      struct doca_gpu_dev_verbs_addr laddr,
						      size_t size)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put<resource_sharing_mode, nic_handler, exec_scope>(qp, raddr, laddr, size, &ticket);
}

/** Inline RDMA write of `value` (sizeof(T) <= 28 bytes) to `raddr`, by the calling thread. */
template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_p_thread(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr raddr,
							   T value,
							   doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
	doca_priv_gpu_dev_verbs_prepare_p<T>(qp, idx, raddr, value);
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, idx, 1);
	*out_ticket = idx;
}

/** Inline RDMA writes by a whole warp: lane i writes its value with WQE base + i. */
template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_p_warp(struct doca_gpu_dev_verbs_qp *qp,
							 struct doca_gpu_dev_verbs_addr raddr,
							 T value,
							 doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out_ticket);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, lane, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	doca_priv_gpu_dev_verbs_prepare_p<T>(qp, base + lane, raddr, value);
	doca_priv_gpu_dev_verbs_warp_post<resource_sharing_mode, nic_handler>(qp, lane, base, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	*out_ticket = base + lane;
}

/** Inline RDMA write of `value` to `raddr`; ticket in `*out_ticket`. */
template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_p(struct doca_gpu_dev_verbs_qp *qp,
						    struct doca_gpu_dev_verbs_addr raddr,
						    T value,
						    doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_p_warp<T, resource_sharing_mode, nic_handler>(qp, raddr, value, out_ticket);
	else
		doca_gpu_dev_verbs_p_thread<T, resource_sharing_mode, nic_handler>(qp, raddr, value, out_ticket);
}

template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_p(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr raddr, T value)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_p<T, resource_sharing_mode, nic_handler, exec_scope>(qp, raddr, value, &ticket);
}

/**
 * RDMA read of `size` bytes from `raddr` (remote) into `laddr` (local), by the calling
 * thread. MCST_ENABLED adds a one-byte DUMP of `daddr` after the reads; BLOCKING_ENABLED
 * waits for the last WQE. Ticket: the last read, or the DUMP.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_thread(struct doca_gpu_dev_verbs_qp *qp,
							     struct doca_gpu_dev_verbs_addr raddr,
							     struct doca_gpu_dev_verbs_addr laddr,
							     size_t size,
							     struct doca_gpu_dev_verbs_addr daddr,
							     doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t n = doca_priv_gpu_dev_verbs_num_chunks(size);
	uint64_t total = n + (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED ? 1 : 0);
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)total);
	doca_priv_gpu_dev_verbs_rw_chunks(qp, base, n, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ, raddr, laddr, size);
	if constexpr (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED)
		doca_priv_gpu_dev_verbs_prepare_dump_at(qp, base + n, daddr);
	else
		(void)daddr;
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, base, total);
	*out_ticket = base + total - 1;
	if constexpr (blocking_mode == DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED)
		doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, base + total - 1);
}

/**
 * RDMA read by a whole warp: lane i reads its range with WQE base + i; with MCST_ENABLED
 * lane 0 adds a DUMP at base + 32 and every lane's ticket is the DUMP (doca-soft's choice:
 * it completes after all 32 reads); otherwise lane i's ticket is base + i.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_warp(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr raddr,
							   struct doca_gpu_dev_verbs_addr laddr,
							   size_t size,
							   struct doca_gpu_dev_verbs_addr daddr,
							   doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out_ticket);
	constexpr uint32_t total = DOCA_GPUNETIO_VERBS_WARP_SIZE + (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED ? 1 : 0);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, lane, total);
	uint64_t idx = base + lane;
	doca_gpu_dev_verbs_wqe_prepare_read(qp,
					    doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx),
					    (uint16_t)idx,
					    DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					    raddr.addr,
					    raddr.key,
					    laddr.addr,
					    laddr.key,
					    (uint32_t)size);
	if constexpr (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED) {
		if (lane == 0)
			doca_priv_gpu_dev_verbs_prepare_dump_at(qp, base + DOCA_GPUNETIO_VERBS_WARP_SIZE, daddr);
		idx = base + DOCA_GPUNETIO_VERBS_WARP_SIZE;
	} else {
		(void)daddr;
	}
	__syncwarp();
	if (lane == 0) {
		doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, base, total);
		if constexpr (blocking_mode == DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED)
			doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq,
												   base + total - 1);
	}
	__syncwarp();
	*out_ticket = idx;
}

/** RDMA read of `size` bytes from `raddr` into `laddr` (see get_thread / get_warp). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED,
	  enum doca_gpu_dev_verbs_blocking_mode blocking_mode = DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get(struct doca_gpu_dev_verbs_qp *qp,
						      struct doca_gpu_dev_verbs_addr raddr,
						      struct doca_gpu_dev_verbs_addr laddr,
						      size_t size,
						      struct doca_gpu_dev_verbs_addr daddr,
						      doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_get_warp<resource_sharing_mode, nic_handler, mcst_mode, blocking_mode>(qp,
													 raddr,
													 laddr,
													 size,
													 daddr,
													 out_ticket);
	else
		doca_gpu_dev_verbs_get_thread<resource_sharing_mode, nic_handler, mcst_mode, blocking_mode>(qp,
													   raddr,
													   laddr,
													   size,
													   daddr,
													   out_ticket);
}

/**
 * Completes earlier gets: with MCST_ENABLED first posts a one-byte DUMP of `daddr` and
 * waits for it; then waits for `*ticket`.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_wait(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr daddr,
							   doca_gpu_dev_verbs_ticket_t *ticket)
{
	if constexpr (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED) {
		uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
		doca_priv_gpu_dev_verbs_prepare_dump_at(qp, idx, daddr);
		doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, idx, 1);
		doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, idx);
	} else {
		(void)daddr;
	}
	doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, *ticket);
}

/** get_wait for everything reserved so far on the send queue. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_mcst_mode mcst_mode = DOCA_GPUNETIO_VERBS_MCST_DISABLED>
__device__ static inline void doca_gpu_dev_verbs_get_wait(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_addr daddr)
{
	if constexpr (mcst_mode == DOCA_GPUNETIO_VERBS_MCST_ENABLED) {
		uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
		doca_priv_gpu_dev_verbs_prepare_dump_at(qp, idx, daddr);
		doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, idx, 1);
		doca_gpu_dev_verbs_poll_cq_at<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(&qp->cq_sq, idx);
	} else {
		(void)daddr;
	}
	doca_gpu_dev_verbs_wait<resource_sharing_mode, nic_handler>(qp);
}

/** put + fetch-add of `sig_val` on `sig_raddr` (old value to `sig_laddr`), by the calling thread. */
template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_put_signal_thread(struct doca_gpu_dev_verbs_qp *qp,
								    struct doca_gpu_dev_verbs_addr raddr,
								    struct doca_gpu_dev_verbs_addr laddr,
								    size_t size,
								    struct doca_gpu_dev_verbs_addr sig_raddr,
								    struct doca_gpu_dev_verbs_addr sig_laddr,
								    uint64_t sig_val,
								    doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t n = doca_priv_gpu_dev_verbs_num_chunks(size);
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)(n + 1));
	doca_priv_gpu_dev_verbs_rw_chunks(qp, base, n, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE, raddr, laddr, size);
	doca_priv_gpu_dev_verbs_prepare_signal(qp, base + n, sig_raddr, sig_laddr, sig_val);
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, base, n + 1);
	*out_ticket = base + n;
}

/** put_signal by a whole warp: 32 writes, then one fetch-add by lane 0 with lane 0's signal. */
template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_put_signal_warp(struct doca_gpu_dev_verbs_qp *qp,
								  struct doca_gpu_dev_verbs_addr raddr,
								  struct doca_gpu_dev_verbs_addr laddr,
								  size_t size,
								  struct doca_gpu_dev_verbs_addr sig_raddr,
								  struct doca_gpu_dev_verbs_addr sig_laddr,
								  uint64_t sig_val,
								  doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out_ticket);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, lane, DOCA_GPUNETIO_VERBS_WARP_SIZE + 1);
	uint64_t idx = base + lane;
	doca_priv_gpu_dev_verbs_prepare_put_at(qp, idx, raddr, laddr, (uint32_t)size);
	if (lane == 0) {
		idx = base + DOCA_GPUNETIO_VERBS_WARP_SIZE;
		doca_priv_gpu_dev_verbs_prepare_signal(qp, idx, sig_raddr, sig_laddr, sig_val);
	}
	doca_priv_gpu_dev_verbs_warp_post<resource_sharing_mode, nic_handler>(qp, lane, base, DOCA_GPUNETIO_VERBS_WARP_SIZE + 1);
	*out_ticket = idx;
}

/** RDMA write, then fetch-add of `sig_val` on `sig_raddr` (old value to `sig_laddr`). */
template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_put_signal(struct doca_gpu_dev_verbs_qp *qp,
							     struct doca_gpu_dev_verbs_addr raddr,
							     struct doca_gpu_dev_verbs_addr laddr,
							     size_t size,
							     struct doca_gpu_dev_verbs_addr sig_raddr,
							     struct doca_gpu_dev_verbs_addr sig_laddr,
							     uint64_t sig_val,
							     doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_put_signal_warp<sig_op, resource_sharing_mode, nic_handler>(qp,
											     raddr,
											     laddr,
											     size,
											     sig_raddr,
											     sig_laddr,
											     sig_val,
											     out_ticket);
	else
		doca_gpu_dev_verbs_put_signal_thread<sig_op, resource_sharing_mode, nic_handler>(qp,
											       raddr,
											       laddr,
											       size,
											       sig_raddr,
											       sig_laddr,
											       sig_val,
											       out_ticket);
}

template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_put_signal(struct doca_gpu_dev_verbs_qp *qp,
							     struct doca_gpu_dev_verbs_addr raddr,
							     struct doca_gpu_dev_verbs_addr laddr,
							     size_t size,
							     struct doca_gpu_dev_verbs_addr sig_raddr,
							     struct doca_gpu_dev_verbs_addr sig_laddr,
							     uint64_t sig_val)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_put_signal<sig_op, resource_sharing_mode, nic_handler, exec_scope>(qp,
											    raddr,
											    laddr,
											    size,
											    sig_raddr,
											    sig_laddr,
											    sig_val,
											    &ticket);
}

/** Inline write of `value` + fetch-add signal, by the calling thread (2 WQEs). */
template <typename T,
	  enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_p_signal_thread(struct doca_gpu_dev_verbs_qp *qp,
								  struct doca_gpu_dev_verbs_addr raddr,
								  T value,
								  struct doca_gpu_dev_verbs_addr sig_raddr,
								  struct doca_gpu_dev_verbs_addr sig_laddr,
								  uint64_t sig_val,
								  doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 2);
	doca_priv_gpu_dev_verbs_prepare_p<T>(qp, base, raddr, value);
	doca_priv_gpu_dev_verbs_prepare_signal(qp, base + 1, sig_raddr, sig_laddr, sig_val);
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, base, 2);
	*out_ticket = base + 1;
}

/**
 * p_signal by a whole warp: 32 inline writes, then one fetch-add by lane 0 with lane 0's
 * signal. (DOCA 3.3's version does not compile; this one follows put_signal_warp.)
 */
template <typename T,
	  enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_p_signal_warp(struct doca_gpu_dev_verbs_qp *qp,
								struct doca_gpu_dev_verbs_addr raddr,
								T value,
								struct doca_gpu_dev_verbs_addr sig_raddr,
								struct doca_gpu_dev_verbs_addr sig_laddr,
								uint64_t sig_val,
								doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	DOCA_PRIV_GPUNETIO_VERBS_WARP_UNSUPPORTED(out_ticket);
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, lane, DOCA_GPUNETIO_VERBS_WARP_SIZE + 1);
	uint64_t idx = base + lane;
	doca_priv_gpu_dev_verbs_prepare_p<T>(qp, idx, raddr, value);
	if (lane == 0) {
		idx = base + DOCA_GPUNETIO_VERBS_WARP_SIZE;
		doca_priv_gpu_dev_verbs_prepare_signal(qp, idx, sig_raddr, sig_laddr, sig_val);
	}
	doca_priv_gpu_dev_verbs_warp_post<resource_sharing_mode, nic_handler>(qp, lane, base, DOCA_GPUNETIO_VERBS_WARP_SIZE + 1);
	*out_ticket = idx;
}

/** Inline write of `value` to `raddr`, then fetch-add of `sig_val` on `sig_raddr`. */
template <typename T,
	  enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_p_signal(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr raddr,
							   T value,
							   struct doca_gpu_dev_verbs_addr sig_raddr,
							   struct doca_gpu_dev_verbs_addr sig_laddr,
							   uint64_t sig_val,
							   doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_p_signal_warp<T, sig_op, resource_sharing_mode, nic_handler>(qp,
											      raddr,
											      value,
											      sig_raddr,
											      sig_laddr,
											      sig_val,
											      out_ticket);
	else
		doca_gpu_dev_verbs_p_signal_thread<T, sig_op, resource_sharing_mode, nic_handler>(qp,
												raddr,
												value,
												sig_raddr,
												sig_laddr,
												sig_val,
												out_ticket);
}

/** p_signal without a ticket (DOCA 3.3's version shifts its template arguments; this one does not). */
template <typename T,
	  enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_p_signal(struct doca_gpu_dev_verbs_qp *qp,
							   struct doca_gpu_dev_verbs_addr raddr,
							   T value,
							   struct doca_gpu_dev_verbs_addr sig_raddr,
							   struct doca_gpu_dev_verbs_addr sig_laddr,
							   uint64_t sig_val)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_p_signal<T, sig_op, exec_scope, resource_sharing_mode, nic_handler>(qp,
											     raddr,
											     value,
											     sig_raddr,
											     sig_laddr,
											     sig_val,
											     &ticket);
}

/** One fetch-add of `sig_val` on `sig_raddr` (old value to `sig_laddr`). */
template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_signal(struct doca_gpu_dev_verbs_qp *qp,
							 struct doca_gpu_dev_verbs_addr sig_raddr,
							 struct doca_gpu_dev_verbs_addr sig_laddr,
							 uint64_t sig_val,
							 doca_gpu_dev_verbs_ticket_t *out_ticket)
{
	uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
	doca_priv_gpu_dev_verbs_prepare_signal(qp, idx, sig_raddr, sig_laddr, sig_val);
	doca_priv_gpu_dev_verbs_post<resource_sharing_mode, nic_handler>(qp, idx, 1);
	*out_ticket = idx;
}

template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_signal(struct doca_gpu_dev_verbs_qp *qp,
							 struct doca_gpu_dev_verbs_addr sig_raddr,
							 struct doca_gpu_dev_verbs_addr sig_laddr,
							 uint64_t sig_val)
{
	doca_gpu_dev_verbs_ticket_t ticket;
	doca_gpu_dev_verbs_signal<sig_op, resource_sharing_mode, nic_handler>(qp, sig_raddr, sig_laddr, sig_val, &ticket);
}

#endif /* DOCA_GPUNETIO_DEV_VERBS_ONESIDED_CUH_ */
