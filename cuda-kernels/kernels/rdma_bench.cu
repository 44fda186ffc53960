// Bench kernels of GPU-initiated RDMA and DMA (benches/rdma_dma.rs), on the legacy device
// API as an application would use it.
//
// doca_rs_rdma_bench_write: `iters` RDMA writes of `size` bytes from buffer 0 of `local`
// to buffer 0 of `remote` on one connection. The block's threads post each batch of
// `batch` writes together (strong positions), thread 0 commits it; the writes of later
// batches wait for queue slots by themselves, so up to a queue of writes is in flight.
// At the end thread 0 waits for every commit (wait_all). With one thread and batch 1 it
// is a latency loop: post, commit, wait for the completion, again.
//
// doca_rs_dma_bench_copy: `iters` copies of `size` bytes from buffer 0 of `src` to buffer
// 0 of `dst`, enqueued by the block's threads and committed by thread 0 per batch (a
// batch must fit the request ring), then a copy of the 8-byte `marker_src` to
// `marker_dst`: copies complete in order, so the marker's arrival (watched by the host)
// means every copy is done.
//
// Both record the first failing doca_error_t in `status[0]`.
#include <doca_gpunetio_dev_buf.cuh>
#include <doca_gpunetio_dev_dma.cuh>
#include <doca_gpunetio_dev_rdma.cuh>

extern "C" __global__ void doca_rs_rdma_bench_write(struct doca_gpu_dev_rdma *rdma,
						    uint32_t connection_index,
						    struct doca_gpu_buf_arr *remote,
						    struct doca_gpu_buf_arr *local,
						    uint64_t size,
						    uint32_t iters,
						    uint32_t batch,
						    uint32_t *status)
{
	struct doca_gpu_buf *r;
	struct doca_gpu_buf *l;
	doca_error_t err;

	doca_gpu_dev_buf_get_buf(remote, 0, &r);
	doca_gpu_dev_buf_get_buf(local, 0, &l);
	for (uint32_t done = 0; done < iters; done += batch) {
		uint32_t n = min(batch, iters - done);
		for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
			err = doca_gpu_dev_rdma_write_strong(rdma, connection_index, r, 0, l, 0, size, 0,
							     DOCA_GPU_RDMA_WRITE_FLAG_NONE);
			if (err != DOCA_SUCCESS)
				atomicCAS(status, 0u, (uint32_t)err);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			err = doca_gpu_dev_rdma_commit_strong(rdma, connection_index);
			if (err != DOCA_SUCCESS)
				atomicCAS(status, 0u, (uint32_t)err);
			if (batch == 1) {
				uint32_t commits;
				err = doca_gpu_dev_rdma_wait_all(rdma, &commits);
				if (err != DOCA_SUCCESS)
					atomicCAS(status, 0u, (uint32_t)err);
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0 && batch != 1) {
		uint32_t commits;
		err = doca_gpu_dev_rdma_wait_all(rdma, &commits);
		if (err != DOCA_SUCCESS)
			atomicCAS(status, 0u, (uint32_t)err);
	}
	__threadfence_system();
}

extern "C" __global__ void doca_rs_dma_bench_copy(struct doca_gpu_dma *dma,
						  struct doca_gpu_buf_arr *src,
						  struct doca_gpu_buf_arr *dst,
						  uint64_t size,
						  uint32_t iters,
						  uint32_t batch,
						  struct doca_gpu_buf_arr *marker_src,
						  struct doca_gpu_buf_arr *marker_dst,
						  uint32_t *status)
{
	struct doca_gpu_buf *s;
	struct doca_gpu_buf *d;
	doca_error_t err;

	doca_gpu_dev_buf_get_buf(src, 0, &s);
	doca_gpu_dev_buf_get_buf(dst, 0, &d);
	for (uint32_t done = 0; done < iters; done += batch) {
		uint32_t n = min(batch, iters - done);
		for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
			err = doca_gpu_dev_dma_memcpy(dma, s, 0, d, 0, size);
			if (err != DOCA_SUCCESS)
				atomicCAS(status, 0u, (uint32_t)err);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			err = doca_gpu_dev_dma_commit(dma);
			if (err != DOCA_SUCCESS)
				atomicCAS(status, 0u, (uint32_t)err);
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		doca_gpu_dev_buf_get_buf(marker_src, 0, &s);
		doca_gpu_dev_buf_get_buf(marker_dst, 0, &d);
		err = doca_gpu_dev_dma_memcpy(dma, s, 0, d, 0, 8);
		if (err == DOCA_SUCCESS)
			err = doca_gpu_dev_dma_commit(dma);
		if (err != DOCA_SUCCESS)
			atomicCAS(status, 0u, (uint32_t)err);
	}
	__threadfence_system();
}
