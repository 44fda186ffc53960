// GPU verbs sample kernels, one-sided: write_bw (raw WQEs), write_lat (byte ping-pong),
// put_bw and get_bw (thread and warp scope), as DOCA 3.3's gpunetio_verbs_* samples run
// them (reference facts §3.11). Keys are big-endian; `errors` counts failed completions.
#include "verbs_common.cuh"

// write_bw, <<<1, T>>>: per round each thread takes slot sq_wqe_pi + tid, writes `size`
// bytes from src + size*tid to dst + size*tid; the last thread submits; rounds of T until
// `iters` WQEs; the last thread waits for the last CQE.
extern "C" __global__ void doca_rs_verbs_write_bw(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
						  uint64_t src, uint32_t skey, uint64_t dst, uint32_t dkey,
						  uint32_t *errors, const uint32_t *exit)
{
	uint32_t tid = threadIdx.x;
	uint64_t idx = 0;
	for (uint32_t done = 0; done < iters; done += blockDim.x) {
		idx = doca_gpu_dev_verbs_atomic_read<uint64_t, VERBS_GPU>(&qp->sq_wqe_pi) + tid;
		struct doca_gpu_dev_verbs_wqe *w = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)(idx & qp->sq_wqe_mask));
		doca_gpu_dev_verbs_wqe_prepare_write(qp, w, (uint16_t)idx, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE,
						     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE, 0, dst + (uint64_t)size * tid,
						     dkey, src + (uint64_t)size * tid, skey, size);
		__syncthreads();
		if (tid == blockDim.x - 1)
			doca_gpu_dev_verbs_submit<VERBS_GPU>(qp, idx + 1);
		__syncthreads();
	}
	if (tid == blockDim.x - 1 && doca_gpu_dev_verbs_poll_cq_at<VERBS_GPU>(&qp->cq_sq, idx) != 0)
		verbs_error(errors);
}

// write_lat, <<<1, 1>>>: `iters` round trips of one message of `size` bytes. The client
// writes first and waits for the peer's answer in byte 0 of `poll`; the server answers.
// Round i carries (start + i + 1) mod 256 in byte 0.
__device__ static inline void verbs_write_lat(struct doca_gpu_dev_verbs_qp *qp, bool client, uint32_t iters,
					      uint32_t size, uint64_t poll, uint64_t post, uint32_t pkey, uint64_t dst,
					      uint32_t dkey, uint32_t start, uint32_t *errors, const uint32_t *exit)
{
	for (uint32_t i = 0; i < iters; i++) {
		uint8_t v = (uint8_t)(start + i + 1);
		if (!client) {
			while (verbs_load_u8((const uint8_t *)poll) != v)
				if (verbs_stopped(exit))
					return;
		}
		*(volatile uint8_t *)post = v;
		uint64_t idx = doca_gpu_dev_verbs_atomic_read<uint64_t, VERBS_EXCL>(&qp->sq_wqe_pi);
		struct doca_gpu_dev_verbs_wqe *w = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
		doca_gpu_dev_verbs_wqe_prepare_write(qp, w, (uint16_t)idx, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE,
						     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE, 0, dst, dkey, post, pkey, size);
		doca_gpu_dev_verbs_submit<VERBS_EXCL>(qp, idx + 1);
		if (doca_gpu_dev_verbs_poll_cq_at<VERBS_EXCL>(&qp->cq_sq, idx) != 0) {
			verbs_error(errors);
			return;
		}
		if (client) {
			while (verbs_load_u8((const uint8_t *)poll) != v)
				if (verbs_stopped(exit))
					return;
		}
	}
}

extern "C" __global__ void doca_rs_verbs_write_lat_client(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
							  uint64_t poll, uint64_t post, uint32_t pkey, uint64_t dst,
							  uint32_t dkey, uint32_t start, uint32_t *errors, const uint32_t *exit)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		verbs_write_lat(qp, true, iters, size, poll, post, pkey, dst, dkey, start, errors, exit);
}

extern "C" __global__ void doca_rs_verbs_write_lat_server(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
							  uint64_t poll, uint64_t post, uint32_t pkey, uint64_t dst,
							  uint32_t dkey, uint32_t start, uint32_t *errors, const uint32_t *exit)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		verbs_write_lat(qp, false, iters, size, poll, post, pkey, dst, dkey, start, errors, exit);
}

// put_bw, <<<2, T/2>>>: each round every thread puts `size` bytes from src + size*gtid to
// dst + size*gtid and waits for its completion (warp scope: lane 31 waits for the warp).
template <enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static inline void verbs_put_bw(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
					   uint64_t src, uint32_t skey, uint64_t dst, uint32_t dkey, uint32_t *errors, const uint32_t *exit)
{
	uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t total = gridDim.x * blockDim.x;
	uint32_t lane = doca_gpu_dev_verbs_get_lane_id();
	(void)exit; // waits only for local completions, which the NIC always delivers
	for (uint32_t done = 0; done < iters; done += total) {
		doca_gpu_dev_verbs_ticket_t t;
		doca_gpu_dev_verbs_put<VERBS_GPU, VERBS_AUTO, scope>(qp, verbs_addr(dst + (uint64_t)size * gtid, dkey),
								     verbs_addr(src + (uint64_t)size * gtid, skey), size, &t);
		if (scope == VERBS_THREAD || lane == DOCA_GPUNETIO_VERBS_WARP_SIZE - 1) {
			if (doca_gpu_dev_verbs_poll_cq_at<VERBS_GPU>(&qp->cq_sq, t) != 0)
				verbs_error(errors);
		}
		__syncthreads();
	}
}

extern "C" __global__ void doca_rs_verbs_put_bw_thread(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
						       uint64_t src, uint32_t skey, uint64_t dst, uint32_t dkey, uint32_t *errors, const uint32_t *exit)
{
	verbs_put_bw<VERBS_THREAD>(qp, iters, size, src, skey, dst, dkey, errors, exit);
}

extern "C" __global__ void doca_rs_verbs_put_bw_warp(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
						     uint64_t src, uint32_t skey, uint64_t dst, uint32_t dkey, uint32_t *errors, const uint32_t *exit)
{
	verbs_put_bw<VERBS_WARP>(qp, iters, size, src, skey, dst, dkey, errors, exit);
}

// get_bw, <<<2, T/2>>>: each round every thread reads `size` bytes from remote + size*gtid
// into local + size*gtid; thread 0 then completes the round's reads (with a DUMP of the
// flag byte before Hopper, where read data needs it to be visible to the GPU).
template <enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static inline void verbs_get_bw(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
					   uint64_t local, uint32_t lkey, uint64_t remote, uint32_t rkey, uint64_t dump,
					   uint32_t dkey, uint32_t *errors, const uint32_t *exit)
{
	uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t total = gridDim.x * blockDim.x;
	(void)errors;
	(void)exit; // waits only for local completions, which the NIC always delivers
	for (uint32_t done = 0; done < iters; done += total) {
		doca_gpu_dev_verbs_ticket_t t;
		doca_gpu_dev_verbs_get<VERBS_GPU, VERBS_AUTO, scope, DOCA_GPUNETIO_VERBS_MCST_DISABLED,
				       DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED>(
			qp, verbs_addr(remote + (uint64_t)size * gtid, rkey), verbs_addr(local + (uint64_t)size * gtid, lkey),
			size, verbs_addr(0, 0), &t);
		__syncthreads();
		if (threadIdx.x == 0) {
#if __CUDA_ARCH__ < 900
			doca_gpu_dev_verbs_get_wait<VERBS_GPU, VERBS_AUTO, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, verbs_addr(dump, dkey));
#else
			(void)dump;
			(void)dkey;
			doca_gpu_dev_verbs_get_wait<VERBS_GPU, VERBS_AUTO, DOCA_GPUNETIO_VERBS_MCST_DISABLED>(qp, verbs_addr(0, 0));
#endif
		}
		__syncthreads();
	}
}

extern "C" __global__ void doca_rs_verbs_get_bw_thread(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
						       uint64_t local, uint32_t lkey, uint64_t remote, uint32_t rkey,
						       uint64_t dump, uint32_t dkey, uint32_t *errors, const uint32_t *exit)
{
	verbs_get_bw<VERBS_THREAD>(qp, iters, size, local, lkey, remote, rkey, dump, dkey, errors, exit);
}

extern "C" __global__ void doca_rs_verbs_get_bw_warp(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
						     uint64_t local, uint32_t lkey, uint64_t remote, uint32_t rkey,
						     uint64_t dump, uint32_t dkey, uint32_t *errors, const uint32_t *exit)
{
	verbs_get_bw<VERBS_WARP>(qp, iters, size, local, lkey, remote, rkey, dump, dkey, errors, exit);
}
