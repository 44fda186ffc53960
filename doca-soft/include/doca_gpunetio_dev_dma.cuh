/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: GPU-initiated DMA (the GPU datapath of a doca_dma context). In DOCA
 * 3.3 these are extern device functions of a static device library; doca-soft defines them
 * inline here, as it does the semaphore and buffer device API. The handle and the request
 * ring are doca-soft's (doca_soft_dev_dma_ring.h, which documents the protocol); a proxy
 * thread runs the requests as CUDA copies, in order.
 */
#ifndef DOCA_GPUNETIO_DEV_DMA_CUH_
#define DOCA_GPUNETIO_DEV_DMA_CUH_

#include <stddef.h>
#include <stdint.h>

#include <cuda/atomic>

#include "doca_error.h"
#include "doca_gpunetio_dev_buf.cuh"
#include "doca_soft_dev_dma_ring.h"

/**
 * Enqueues a copy of `length` bytes from `src_buf` + `src_offset` to `dst_buf` +
 * `dst_offset`; nothing moves before doca_gpu_dev_dma_commit. Any number of threads may
 * enqueue at once; when the ring is full the call waits for the proxy to free a slot.
 * DOCA_ERROR_INVALID_VALUE for NULL arguments or an address overflow; a zero length
 * enqueues nothing.
 */
__device__ __forceinline__ doca_error_t doca_gpu_dev_dma_memcpy(struct doca_gpu_dma *dma,
								struct doca_gpu_buf *src_buf,
								uint64_t src_offset,
								struct doca_gpu_buf *dst_buf,
								uint64_t dst_offset,
								size_t length)
{
	if (dma == nullptr || src_buf == nullptr || dst_buf == nullptr || dma->desc_addr == 0 || dma->desc_num == 0 ||
	    src_offset > UINT64_MAX - src_buf->addr || dst_offset > UINT64_MAX - dst_buf->addr ||
	    (uint64_t)length > UINT64_MAX - (src_buf->addr + src_offset) ||
	    (uint64_t)length > UINT64_MAX - (dst_buf->addr + dst_offset))
		return DOCA_ERROR_INVALID_VALUE;
	if (length == 0)
		return DOCA_SUCCESS;
	cuda::atomic_ref<uint64_t, cuda::thread_scope_device> rsvd(dma->rsvd_idx.value);
	uint64_t idx = rsvd.fetch_add(1, cuda::memory_order_relaxed);
	cuda::atomic_ref<uint64_t, cuda::thread_scope_system> done(dma->done.value);
	while (idx - done.load(cuda::memory_order_acquire) >= dma->desc_num)
		;
	struct doca_soft_dma_desc *desc = (struct doca_soft_dma_desc *)dma->desc_addr + (idx & dma->desc_mask);
	desc->src = src_buf->addr + src_offset;
	desc->dst = dst_buf->addr + dst_offset;
	desc->len = (uint64_t)length;
	desc->src_mkey = src_buf->mkey;
	desc->dst_mkey = dst_buf->mkey;
	cuda::atomic_ref<uint64_t, cuda::thread_scope_system> seq(desc->seq);
	seq.store(idx + 1, cuda::memory_order_release);
	return DOCA_SUCCESS;
}

/**
 * Submits every copy enqueued so far. One thread at a time. There is no device-side
 * completion call (as in DOCA 3.3): watch the destination.
 */
__device__ __forceinline__ doca_error_t doca_gpu_dev_dma_commit(struct doca_gpu_dma *dma)
{
	if (dma == nullptr)
		return DOCA_ERROR_INVALID_VALUE;
	cuda::atomic_ref<uint64_t, cuda::thread_scope_device> rsvd(dma->rsvd_idx.value);
	cuda::atomic_ref<uint64_t, cuda::thread_scope_system> pi(dma->pi.value);
	__threadfence_system();
	uint64_t target = rsvd.load(cuda::memory_order_relaxed);
	if (target > pi.load(cuda::memory_order_relaxed))
		pi.store(target, cuda::memory_order_release);
	return DOCA_SUCCESS;
}

#endif /* DOCA_GPUNETIO_DEV_DMA_CUH_ */
