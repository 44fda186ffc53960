/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: GPU buffers ({address, mkey}) and buffer arrays. A buffer array's
 * GPU handle points at its first `struct doca_gpu_buf`; RX queues keep one per packet slot
 * for the legacy receive API. Header-only CUDA.
 */
#ifndef DOCA_GPUNETIO_DEV_BUF_CUH_
#define DOCA_GPUNETIO_DEV_BUF_CUH_

#include <stdint.h>

#include "doca_error.h"

/** One buffer: address and mkey (big-endian, as the send calls take it). */
struct doca_gpu_buf {
	uint64_t addr;
	uint32_t mkey;
	uint32_t rsvd;
};

/** A buffer array as device code sees it: consecutive doca_gpu_buf entries. */
struct doca_gpu_buf_arr {
	struct doca_gpu_buf bufs[1];
};

static_assert(sizeof(struct doca_gpu_buf) == 16, "doca_gpu_buf size");

/** Buffer `idx` of an array. */
__device__ __forceinline__ void doca_gpu_dev_buf_get_buf(const struct doca_gpu_buf_arr *buf_arr,
							 const uint64_t idx,
							 struct doca_gpu_buf **buf)
{
	*buf = (struct doca_gpu_buf *)&buf_arr->bufs[0] + idx;
}

__device__ __forceinline__ void doca_gpu_dev_buf_get_addr(const struct doca_gpu_buf *buf, uintptr_t *addr)
{
	*addr = (uintptr_t)buf->addr;
}

__device__ __forceinline__ void doca_gpu_dev_buf_get_mkey(const struct doca_gpu_buf *buf, uint32_t *mkey)
{
	*mkey = buf->mkey;
}

/** Fills a caller-provided buffer descriptor (`*buf` must point to storage). */
__device__ __forceinline__ void doca_gpu_dev_buf_create(uintptr_t addr, uint32_t mkey, struct doca_gpu_buf **buf)
{
	(*buf)->addr = (uint64_t)addr;
	(*buf)->mkey = mkey;
	(*buf)->rsvd = 0;
}

#endif /* DOCA_GPUNETIO_DEV_BUF_CUH_ */
