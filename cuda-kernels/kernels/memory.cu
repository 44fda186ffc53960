// Small utility kernels for tests and examples: fill GPU memory with a pattern that the
// host can check, and sum a buffer (reads every word).
#include <stdint.h>

extern "C" __global__ void doca_rs_fill_pattern(uint32_t *dst, uint64_t n, uint32_t seed)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		dst[i] = (uint32_t)(i * 2654435761u) + seed;
}

extern "C" __global__ void doca_rs_sum_u32(const uint32_t *src, uint64_t n,
					   unsigned long long *out)
{
	unsigned long long acc = 0;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		acc += src[i];
	atomicAdd(out, acc);
}
