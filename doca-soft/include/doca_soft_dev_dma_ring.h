/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: the GPU handle of a doca_dma on the GPU datapath (struct doca_gpu_dma,
 * opaque in DOCA 3.3) and its request ring. C-compatible; the Rust side mirrors these
 * structs and both sides assert the same sizes and offsets.
 *
 * Ring protocol (device side in doca_gpunetio_dev_dma.cuh, consumer = the CPU proxy that
 * runs each request as a CUDA copy on its own stream, in index order):
 *   - The handle and its `desc_num` (a power of two) descriptors at `desc_addr` live in
 *     memory both sides reach coherently (device-mapped pinned host memory): the GPU
 *     writes descriptors, `rsvd_idx` and `pi`, the proxy writes `done`. Descriptor i lives
 *     in slot i & desc_mask. Counters are free-running 64-bit values, each alone in its
 *     64-byte line.
 *   - doca_gpu_dev_dma_memcpy (any number of threads): i = atomic add 1 on `rsvd_idx`;
 *     wait (acquire load of `done`) until i - done < desc_num; write src, dst, len and the
 *     two keys; system-scope release fence; write seq = i + 1. The descriptor is complete
 *     only when its seq is i + 1.
 *   - doca_gpu_dev_dma_commit (one thread at a time): system-scope release fence, then
 *     `pi` = max(pi, rsvd_idx) with a release store. Everything enqueued before is
 *     submitted.
 *   - The proxy reads `pi` with acquire; for each i below it waits until descriptor i's
 *     seq is i + 1 (a thread may still be writing it), copies len bytes from src to dst,
 *     and once the copy finished publishes `done` = i + 1 with a release store. A request it
 *     cannot run (address outside every registered region, bad key) is skipped, counted and
 *     logged; `done` still advances, so the ring never stalls.
 * DOCA 3.3 has no device-side completion call; programs watch the destination.
 */
#ifndef DOCA_SOFT_DEV_DMA_RING_H_
#define DOCA_SOFT_DEV_DMA_RING_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_soft_ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Layout version of the DMA handle and descriptor; bumped on any change. */
#define DOCA_SOFT_DMA_RING_VERSION 1

/** One copy request. Keys are big-endian, as doca_gpu_buf holds them. */
struct doca_soft_dma_desc {
	uint64_t src;
	uint64_t dst;
	uint64_t len;
	uint32_t src_mkey;
	uint32_t dst_mkey;
	uint64_t seq; /* index + 1 once the descriptor is complete */
	uint64_t rsvd[3];
};

/** GPU handle of a doca_dma (doca_dma_get_gpu_handle). */
struct doca_gpu_dma {
	uint32_t version;   /* DOCA_SOFT_DMA_RING_VERSION */
	uint32_t desc_num;  /* ring entries, a power of two */
	uint32_t desc_mask; /* desc_num - 1 */
	uint32_t rsvd0;
	uint64_t desc_addr; /* struct doca_soft_dma_desc[desc_num] */
	uint64_t rsvd1[5];
	struct doca_soft_ring_index rsvd_idx; /* next descriptor index (GPU atomics) */
	struct doca_soft_ring_index pi;       /* descriptors below are submitted (GPU, release) */
	struct doca_soft_ring_index done;     /* descriptors below are finished (proxy, release) */
};

DOCA_SOFT_RING_ASSERT(sizeof(struct doca_soft_dma_desc) == 64, "dma desc size");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_dma_desc, len) == 16, "dma desc len");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_dma_desc, src_mkey) == 24, "dma desc src_mkey");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_dma_desc, dst_mkey) == 28, "dma desc dst_mkey");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_dma_desc, seq) == 32, "dma desc seq");
DOCA_SOFT_RING_ASSERT(sizeof(struct doca_gpu_dma) == 256, "dma handle size");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_dma, desc_num) == 4, "dma desc_num");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_dma, desc_mask) == 8, "dma desc_mask");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_dma, desc_addr) == 16, "dma desc_addr");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_dma, rsvd_idx) == 64, "dma rsvd_idx");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_dma, pi) == 128, "dma pi");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_dma, done) == 192, "dma done");

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_DEV_DMA_RING_H_ */
