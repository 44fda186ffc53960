// The kernel of the GPUNetIO sample gpunetio_dma_memcpy (examples/gpunetio_dma_memcpy.rs):
// prints the text the CPU-datapath copy left in GPU memory (if NUL-terminated within
// `text_len` bytes), then copies `length` bytes of the source buffer to the destination
// buffer (each thread its own buffer index) through the GPU-datapath DMA context, and
// thread 0 commits. There is no device-side completion:
// the host watches the destination. `status` (CPU-visible) gets the first failing
// doca_error_t, 0 when none.
#include <doca_gpunetio_dev_buf.cuh>
#include <doca_gpunetio_dev_dma.cuh>

extern "C" __global__ void doca_rs_dma_memcpy(const char *cpu_copied_text,
					      uint64_t text_len,
					      struct doca_gpu_dma *dma,
					      struct doca_gpu_buf_arr *src_arr,
					      struct doca_gpu_buf_arr *dst_arr,
					      uint64_t length,
					      uint32_t *status)
{
	struct doca_gpu_buf *src;
	struct doca_gpu_buf *dst;
	doca_error_t err;

	bool terminated = false;
	for (uint64_t k = 0; cpu_copied_text != nullptr && k < text_len && !terminated; k++)
		terminated = cpu_copied_text[k] == '\0';
	if (terminated && threadIdx.x == 0)
		printf("CUDA KERNEL INFO: The GPU destination buffer value after the memcpy: %s \n", cpu_copied_text);

	doca_gpu_dev_buf_get_buf(src_arr, threadIdx.x, &src);
	doca_gpu_dev_buf_get_buf(dst_arr, threadIdx.x, &dst);
	err = doca_gpu_dev_dma_memcpy(dma, src, 0, dst, 0, length);
	if (err != DOCA_SUCCESS) {
		printf("Error %d doca_gpu_dev_dma_memcpy thread %d\n", err, threadIdx.x);
		atomicCAS(status, 0u, (uint32_t)err);
	}
	__syncthreads();

	if (threadIdx.x == 0) {
		err = doca_gpu_dev_dma_commit(dma);
		if (err != DOCA_SUCCESS) {
			printf("Error %d doca_gpu_dev_dma_commit\n", err);
			atomicCAS(status, 0u, (uint32_t)err);
		}
	}
	__threadfence_system();
}
