// What the GPU verbs sample kernels share (verbs_*.cu): addresses with big-endian keys, the
// error counter the host reads, and the spin loops on flags another agent writes.
#ifndef DOCA_RS_VERBS_COMMON_CUH_
#define DOCA_RS_VERBS_COMMON_CUH_

#include <doca_gpunetio_dev_verbs_counter.cuh>
#include <doca_gpunetio_dev_verbs_twosided.cuh>

#include <stdio.h>

#define VERBS_GPU DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU
#define VERBS_EXCL DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE
#define VERBS_AUTO DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO
#define VERBS_THREAD DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD
#define VERBS_WARP DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP
#define VERBS_ADD DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD

// An address with its key, the key already big-endian (the host passes htobe32(key)).
__device__ static inline struct doca_gpu_dev_verbs_addr verbs_addr(uint64_t addr, uint32_t key_be)
{
	struct doca_gpu_dev_verbs_addr a;
	a.addr = addr;
	a.key = key_be;
	return a;
}

// Counts a failed completion where the host can read it, and says so as the samples do.
__device__ static inline void verbs_error(uint32_t *errors)
{
	printf("Error CQE!\n");
	if (errors != NULL)
		atomicAdd(errors, 1u);
}

// Whether the host asked the kernel to give up waiting for its peer (the exit flag of the
// kernel scope: set when the host stops waiting, e.g. after the peer died).
__device__ static inline bool verbs_stopped(const uint32_t *exit)
{
	return *(volatile const uint32_t *)exit != 0;
}

// A system-scope acquire read of a value another agent (the peer's NIC) writes.
__device__ static inline uint64_t verbs_load_u64(const uint64_t *p)
{
	uint64_t v = *(volatile const uint64_t *)p;
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	return v;
}

__device__ static inline uint8_t verbs_load_u8(const uint8_t *p)
{
	uint8_t v = *(volatile const uint8_t *)p;
	doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>();
	return v;
}

#endif
