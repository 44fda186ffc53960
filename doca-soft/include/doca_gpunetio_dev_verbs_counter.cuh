/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API, GPU verbs: counters through a companion QP. The main QP carries
 * the data (writes, optionally a signal); the companion QP (core-direct master) carries a
 * WAIT on the main QP's send CQ followed by a fetch-add on the counter, so the counter
 * moves only after the main WQE it waits for has completed. Both QPs are submitted
 * together. Header-only CUDA, DOCA 3.3's names, template signatures and defaults.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_COUNTER_CUH_
#define DOCA_GPUNETIO_DEV_VERBS_COUNTER_CUH_

#include "doca_gpunetio_dev_verbs_onesided.cuh"

/** GPU doorbell submission of several QPs: early doorbells, then DBRs and doorbells again. */
template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static inline void doca_gpu_dev_verbs_submit_db_multi_qps(struct doca_gpu_dev_verbs_qp **qps, uint64_t *prod_indices)
{
	bool advanced[num_qps];
	for (unsigned int i = 0; i < num_qps; i++) {
		doca_gpu_dev_verbs_lock<resource_sharing_mode>(&qps[i]->sq_lock);
		uint64_t old =
			doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qps[i]->sq_wqe_pi, prod_indices[i]);
		advanced[i] = prod_indices[i] > old;
		if (advanced[i])
			doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qps[i], prod_indices[i]);
	}
	for (unsigned int i = 0; i < num_qps; i++) {
		if (advanced[i]) {
			doca_gpu_dev_verbs_update_dbr<sync_scope, code_opt, DOCA_GPUNETIO_VERBS_QP_SQ>(qps[i],
												  (uint32_t)prod_indices[i]);
			doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qps[i], prod_indices[i]);
		}
		doca_gpu_dev_verbs_unlock<resource_sharing_mode>(&qps[i]->sq_lock);
	}
}

/** Doorbell-only submission of several QPs (no DBR, no locks). */
template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_gpu_code_opt code_opt = DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>
__device__ static inline void doca_gpu_dev_verbs_submit_db_multi_qps_no_dbr(struct doca_gpu_dev_verbs_qp **qps,
									     uint64_t *prod_indices)
{
	for (unsigned int i = 0; i < num_qps; i++) {
		uint64_t old =
			doca_gpu_dev_verbs_atomic_max<uint64_t, resource_sharing_mode>(&qps[i]->sq_wqe_pi, prod_indices[i]);
		if (prod_indices[i] > old)
			doca_gpu_dev_verbs_ring_db<sync_scope, code_opt>(qps[i], prod_indices[i]);
	}
}

/** CPU-proxy submission of several QPs, in order. */
template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_verbs_submit_proxy_multi_qps(struct doca_gpu_dev_verbs_qp **qps, uint64_t *prod_indices)
{
	doca_gpu_dev_verbs_fence_release<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	for (unsigned int i = 0; i < num_qps; i++)
		doca_gpu_dev_verbs_ring_proxy<resource_sharing_mode>(qps[i], prod_indices[i]);
}

/** Submits `qps[i]` up to `prod_indices[i]`, dispatching on the handler of `qps[0]`. */
template <unsigned int num_qps,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_submit_multi_qps(struct doca_gpu_dev_verbs_qp **qps, uint64_t *prod_indices)
{
	enum doca_gpu_dev_verbs_nic_handler handler = nic_handler;
	if constexpr (nic_handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO)
		handler = doca_priv_gpu_dev_verbs_ldg(&qps[0]->nic_handler);
	if (handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB)
		doca_gpu_dev_verbs_submit_db_multi_qps<num_qps, resource_sharing_mode, sync_scope, DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(
			qps,
			prod_indices);
	else if (handler == DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR)
		doca_gpu_dev_verbs_submit_db_multi_qps_no_dbr<num_qps,
							      resource_sharing_mode,
							      sync_scope,
							      DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT>(qps, prod_indices);
	else
		doca_gpu_dev_verbs_submit_proxy_multi_qps<num_qps, resource_sharing_mode, sync_scope>(qps, prod_indices);
}

/*
 * doca-soft: companion WQEs: WAIT for main WQE `wait_index` on the main QP's send CQ, then
 * fetch-add `counter_val` on `counter_raddr`. Reserves and publishes them; returns the
 * companion's producer index.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
__device__ static inline uint64_t doca_priv_gpu_dev_verbs_companion_counter(struct doca_gpu_dev_verbs_qp *qp,
									     struct doca_gpu_dev_verbs_qp *companion_qp,
									     uint64_t wait_index,
									     struct doca_gpu_dev_verbs_addr counter_raddr,
									     struct doca_gpu_dev_verbs_addr counter_laddr,
									     uint64_t counter_val)
{
	uint64_t cbase =
		doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(companion_qp, 2);
	doca_gpu_dev_verbs_wqe_prepare_wait(companion_qp,
					    doca_gpu_dev_verbs_get_wqe_ptr(companion_qp, (uint16_t)cbase),
					    (uint16_t)cbase,
					    DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE,
					    (uint32_t)wait_index,
					    doca_priv_gpu_dev_verbs_ldg(&qp->cq_sq.cq_num));
	doca_priv_gpu_dev_verbs_prepare_signal(companion_qp, cbase + 1, counter_raddr, counter_laddr, counter_val);
	doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(companion_qp, cbase, cbase + 1);
	return cbase + 2;
}

/* doca-soft: submit main up to `main_prod` and the companion up to `comp_prod` together. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static inline void doca_priv_gpu_dev_verbs_submit_pair(struct doca_gpu_dev_verbs_qp *qp,
								   uint64_t main_prod,
								   struct doca_gpu_dev_verbs_qp *companion_qp,
								   uint64_t comp_prod)
{
	struct doca_gpu_dev_verbs_qp *qps[2] = {qp, companion_qp};
	uint64_t prods[2] = {main_prod, comp_prod};
	doca_gpu_dev_verbs_submit_multi_qps<2, resource_sharing_mode, DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU, nic_handler>(qps, prods);
}

/*
 * doca-soft: publishes main WQEs first..last, adds the companion's WAIT for `last` and its
 * counter fetch-add, and submits both QPs.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode, enum doca_gpu_dev_verbs_nic_handler nic_handler>
__device__ static inline void doca_priv_gpu_dev_verbs_post_with_counter(struct doca_gpu_dev_verbs_qp *qp,
									 uint64_t first,
									 uint64_t last,
									 struct doca_gpu_dev_verbs_qp *companion_qp,
									 struct doca_gpu_dev_verbs_addr counter_raddr,
									 struct doca_gpu_dev_verbs_addr counter_laddr,
									 uint64_t counter_val)
{
	doca_gpu_dev_verbs_mark_wqes_ready<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, first, last);
	uint64_t comp_prod = doca_priv_gpu_dev_verbs_companion_counter<resource_sharing_mode>(qp,
											      companion_qp,
											      last,
											      counter_raddr,
											      counter_laddr,
											      counter_val);
	doca_priv_gpu_dev_verbs_submit_pair<resource_sharing_mode, nic_handler>(qp, last + 1, companion_qp, comp_prod);
}

/** put + counter, by the calling thread. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_put_counter_thread(struct doca_gpu_dev_verbs_qp *qp,
								     struct doca_gpu_dev_verbs_addr raddr,
								     struct doca_gpu_dev_verbs_addr laddr,
								     size_t size,
								     struct doca_gpu_dev_verbs_qp *companion_qp,
								     struct doca_gpu_dev_verbs_addr counter_raddr,
								     struct doca_gpu_dev_verbs_addr counter_laddr,
								     uint64_t counter_val)
{
	uint64_t n = doca_priv_gpu_dev_verbs_num_chunks(size);
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)n);
	doca_priv_gpu_dev_verbs_rw_chunks(qp, base, n, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE, raddr, laddr, size);
	doca_priv_gpu_dev_verbs_post_with_counter<resource_sharing_mode, nic_handler>(
		qp, base, base + n - 1, companion_qp, counter_raddr, counter_laddr, counter_val);
}

/** put + counter by a whole warp: 32 writes; lane 0 adds WAIT + counter on the companion. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_put_counter_warp(struct doca_gpu_dev_verbs_qp *qp,
								   struct doca_gpu_dev_verbs_addr raddr,
								   struct doca_gpu_dev_verbs_addr laddr,
								   size_t size,
								   struct doca_gpu_dev_verbs_qp *companion_qp,
								   struct doca_gpu_dev_verbs_addr counter_raddr,
								   struct doca_gpu_dev_verbs_addr counter_laddr,
								   uint64_t counter_val)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
	printf("__CUDA_ARCH__ < 800, WARP mode not enabled\n");
	return;
#endif
	unsigned int lane = doca_gpu_dev_verbs_get_lane_id();
	uint64_t base =
		doca_priv_gpu_dev_verbs_warp_reserve<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, lane, DOCA_GPUNETIO_VERBS_WARP_SIZE);
	uint64_t idx = base + lane;
	doca_priv_gpu_dev_verbs_prepare_put_at(qp, idx, raddr, laddr, (uint32_t)size);
	__syncwarp();
	if (lane == 0) {
		uint64_t last = base + DOCA_GPUNETIO_VERBS_WARP_SIZE - 1;
		doca_priv_gpu_dev_verbs_post_with_counter<resource_sharing_mode, nic_handler>(
			qp, base, last, companion_qp, counter_raddr, counter_laddr, counter_val);
	}
	__syncwarp();
}

/**
 * RDMA write of `size` bytes from `laddr` to `raddr` on `qp`, then on `companion_qp` a
 * WAIT for that write and a fetch-add of `counter_val` on `counter_raddr` (old value to
 * `counter_laddr`). No ticket: wait on `qp` for the write.
 */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO,
	  enum doca_gpu_dev_verbs_exec_scope exec_scope = DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD>
__device__ static inline void doca_gpu_dev_verbs_put_counter(struct doca_gpu_dev_verbs_qp *qp,
							      struct doca_gpu_dev_verbs_addr raddr,
							      struct doca_gpu_dev_verbs_addr laddr,
							      size_t size,
							      struct doca_gpu_dev_verbs_qp *companion_qp,
							      struct doca_gpu_dev_verbs_addr counter_raddr,
							      struct doca_gpu_dev_verbs_addr counter_laddr,
							      uint64_t counter_val)
{
	if constexpr (exec_scope == DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP)
		doca_gpu_dev_verbs_put_counter_warp<resource_sharing_mode, nic_handler>(qp,
										      raddr,
										      laddr,
										      size,
										      companion_qp,
										      counter_raddr,
										      counter_laddr,
										      counter_val);
	else
		doca_gpu_dev_verbs_put_counter_thread<resource_sharing_mode, nic_handler>(qp,
											raddr,
											laddr,
											size,
											companion_qp,
											counter_raddr,
											counter_laddr,
											counter_val);
}

/** Inline write of `value` on `qp`, then WAIT + counter fetch-add on `companion_qp`. */
template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_p_counter(struct doca_gpu_dev_verbs_qp *qp,
							    struct doca_gpu_dev_verbs_addr raddr,
							    T value,
							    struct doca_gpu_dev_verbs_qp *companion_qp,
							    struct doca_gpu_dev_verbs_addr counter_raddr,
							    struct doca_gpu_dev_verbs_addr counter_laddr,
							    uint64_t counter_val)
{
	uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
	doca_priv_gpu_dev_verbs_prepare_p<T>(qp, idx, raddr, value);
	doca_priv_gpu_dev_verbs_post_with_counter<resource_sharing_mode, nic_handler>(
		qp, idx, idx, companion_qp, counter_raddr, counter_laddr, counter_val);
}

/** put + signal on `qp`, then WAIT for the signal + counter fetch-add on `companion_qp`. */
template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_put_signal_counter(struct doca_gpu_dev_verbs_qp *qp,
								     struct doca_gpu_dev_verbs_addr raddr,
								     struct doca_gpu_dev_verbs_addr laddr,
								     size_t size,
								     struct doca_gpu_dev_verbs_addr sig_raddr,
								     struct doca_gpu_dev_verbs_addr sig_laddr,
								     uint64_t sig_val,
								     struct doca_gpu_dev_verbs_qp *companion_qp,
								     struct doca_gpu_dev_verbs_addr counter_raddr,
								     struct doca_gpu_dev_verbs_addr counter_laddr,
								     uint64_t counter_val)
{
	uint64_t n = doca_priv_gpu_dev_verbs_num_chunks(size);
	uint64_t base = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, (uint32_t)(n + 1));
	doca_priv_gpu_dev_verbs_rw_chunks(qp, base, n, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE, raddr, laddr, size);
	doca_priv_gpu_dev_verbs_prepare_signal(qp, base + n, sig_raddr, sig_laddr, sig_val);
	doca_priv_gpu_dev_verbs_post_with_counter<resource_sharing_mode, nic_handler>(
		qp, base, base + n, companion_qp, counter_raddr, counter_laddr, counter_val);
}

/** Signal on `qp`, then WAIT for it + counter fetch-add on `companion_qp`. */
template <enum doca_gpu_dev_verbs_signal_op sig_op = DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  enum doca_gpu_dev_verbs_nic_handler nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO>
__device__ static inline void doca_gpu_dev_verbs_signal_counter(struct doca_gpu_dev_verbs_qp *qp,
								 struct doca_gpu_dev_verbs_addr sig_raddr,
								 struct doca_gpu_dev_verbs_addr sig_laddr,
								 uint64_t sig_val,
								 struct doca_gpu_dev_verbs_qp *companion_qp,
								 struct doca_gpu_dev_verbs_addr counter_raddr,
								 struct doca_gpu_dev_verbs_addr counter_laddr,
								 uint64_t counter_val)
{
	uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<resource_sharing_mode, DOCA_GPUNETIO_VERBS_QP_SQ>(qp, 1);
	doca_priv_gpu_dev_verbs_prepare_signal(qp, idx, sig_raddr, sig_laddr, sig_val);
	doca_priv_gpu_dev_verbs_post_with_counter<resource_sharing_mode, nic_handler>(
		qp, idx, idx, companion_qp, counter_raddr, counter_laddr, counter_val);
}

#endif /* DOCA_GPUNETIO_DEV_VERBS_COUNTER_CUH_ */
