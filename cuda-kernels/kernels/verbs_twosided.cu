// GPU verbs sample kernels, two-sided (twosided_bw, <<<1, T>>>, thread and warp scope):
// per round the server posts one receive per thread and writes the round number into the
// client's flag; the client waits for it and sends one message per thread; the server
// waits for the receives (inline mode: every thread checks its CQE: inline bit, length,
// first byte = the buffer's fill value).
#include "verbs_common.cuh"

template <enum doca_gpu_dev_verbs_exec_scope scope>
__device__ static inline void verbs_twosided_client(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
						    uint64_t src, uint32_t skey, uint64_t flag, uint64_t start,
						    uint32_t *errors, const uint32_t *exit)
{
	__shared__ int stop;
	uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t rounds = iters / blockDim.x;
	if (rounds == 0)
		rounds = 1;
	for (uint32_t it = 0; it < rounds; it++) {
		if (threadIdx.x == 0) {
			stop = 0;
			while (verbs_load_u64((const uint64_t *)flag) != start + it + 1) {
				if (verbs_stopped(exit)) {
					stop = 1;
					break;
				}
			}
		}
		__syncthreads();
		if (stop)
			return;
		doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
		doca_gpu_dev_verbs_ticket_t t;
		doca_gpu_dev_verbs_send<VERBS_GPU, VERBS_AUTO, scope>(qp, verbs_addr(src + (uint64_t)size * gtid, skey), size, &t);
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		uint64_t rsvd = doca_gpu_dev_verbs_atomic_read<uint64_t, VERBS_GPU>(&qp->sq_rsvd_index);
		if (rsvd > 0 && doca_gpu_dev_verbs_poll_cq_at<VERBS_GPU>(&qp->cq_sq, rsvd - 1) != 0)
			verbs_error(errors);
	}
}

template <enum doca_gpu_dev_verbs_exec_scope scope, bool is_inline>
__device__ static inline void verbs_twosided_server(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size,
						    uint64_t buf, uint32_t bkey, uint64_t lflag, uint32_t lfkey,
						    uint64_t rflag, uint32_t rfkey, uint64_t dump, uint32_t dkey,
						    uint64_t start, uint8_t fill, uint32_t *errors, const uint32_t *exit)
{
	(void)exit; // waits only for completions of its own queues (flushed if the peer goes)
	uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t rounds = iters / blockDim.x;
	if (rounds == 0)
		rounds = 1;
	for (uint32_t it = 0; it < rounds; it++) {
		doca_gpu_dev_verbs_ticket_t t;
		doca_gpu_dev_verbs_recv<VERBS_GPU, VERBS_AUTO, scope>(qp, verbs_addr(buf + (uint64_t)size * gtid, bkey), size, &t);
		__syncthreads();
		if (threadIdx.x == 0) {
			*(volatile uint64_t *)lflag = start + it + 1;
			uint64_t idx = doca_gpu_dev_verbs_reserve_wq_slots<VERBS_GPU>(qp, 1);
			struct doca_gpu_dev_verbs_wqe *w = doca_gpu_dev_verbs_get_wqe_ptr(qp, (uint16_t)idx);
			doca_gpu_dev_verbs_wqe_prepare_write(qp, w, (uint16_t)idx, DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE,
							     DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE, 0, rflag, rfkey, lflag,
							     lfkey, 8);
			doca_gpu_dev_verbs_mark_wqes_ready<VERBS_GPU>(qp, idx, idx);
			doca_gpu_dev_verbs_submit<VERBS_GPU>(qp, idx + 1);
		}
		struct mlx5_cqe64 *cqe = NULL;
		if constexpr (is_inline) {
			doca_gpu_dev_verbs_recv_wait<VERBS_GPU, VERBS_AUTO>(qp, verbs_addr(dump, dkey), &t, &cqe);
			uint8_t *d = doca_gpu_dev_verbs_cqe_get_inl_data(cqe);
			if (!doca_gpu_dev_verbs_cqe_is_inline(cqe) || doca_gpu_dev_verbs_cqe_get_bytes(cqe) != size ||
			    d[0] != fill) {
				printf("Error: CQE %ld is not the inline receive expected\n", (long)t);
				if (errors != NULL)
					atomicAdd(errors, 1u);
			}
		} else if (threadIdx.x == 0) {
#if __CUDA_ARCH__ < 900
			doca_gpu_dev_verbs_recv_wait<VERBS_GPU, VERBS_AUTO, DOCA_GPUNETIO_VERBS_MCST_ENABLED>(qp, verbs_addr(dump, dkey),
													 &cqe);
#else
			doca_gpu_dev_verbs_recv_wait<VERBS_GPU, VERBS_AUTO>(qp, verbs_addr(dump, dkey), &cqe);
#endif
			if (cqe != NULL && (cqe->op_own >> 4) >= 0xd)
				verbs_error(errors);
		}
		__syncthreads();
	}
	if (threadIdx.x == 0)
		doca_gpu_dev_verbs_wait<VERBS_GPU, VERBS_AUTO>(qp);
}

#define VERBS_TWOSIDED_CLIENT(name, scope)                                                                             \
	extern "C" __global__ void name(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size, uint64_t src, \
					uint32_t skey, uint64_t flag, uint64_t start, uint32_t *errors,                \
					const uint32_t *exit)                                                          \
	{                                                                                                              \
		verbs_twosided_client<scope>(qp, iters, size, src, skey, flag, start, errors, exit);                   \
	}

#define VERBS_TWOSIDED_SERVER(name, scope, is_inline)                                                                  \
	extern "C" __global__ void name(struct doca_gpu_dev_verbs_qp *qp, uint32_t iters, uint32_t size, uint64_t buf, \
					uint32_t bkey, uint64_t lflag, uint32_t lfkey, uint64_t rflag, uint32_t rfkey, \
					uint64_t dump, uint32_t dkey, uint64_t start, uint8_t fill, uint32_t *errors,  \
					const uint32_t *exit)                                                          \
	{                                                                                                              \
		verbs_twosided_server<scope, is_inline>(qp, iters, size, buf, bkey, lflag, lfkey, rflag, rfkey, dump,  \
							dkey, start, fill, errors, exit);                              \
	}

VERBS_TWOSIDED_CLIENT(doca_rs_verbs_twosided_client_thread, VERBS_THREAD)
VERBS_TWOSIDED_CLIENT(doca_rs_verbs_twosided_client_warp, VERBS_WARP)
VERBS_TWOSIDED_SERVER(doca_rs_verbs_twosided_server_thread, VERBS_THREAD, false)
VERBS_TWOSIDED_SERVER(doca_rs_verbs_twosided_server_warp, VERBS_WARP, false)
VERBS_TWOSIDED_SERVER(doca_rs_verbs_twosided_server_inline_thread, VERBS_THREAD, true)
VERBS_TWOSIDED_SERVER(doca_rs_verbs_twosided_server_inline_warp, VERBS_WARP, true)
