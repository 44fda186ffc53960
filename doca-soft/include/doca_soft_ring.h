/*
 * doca-soft: the pieces of doca-soft's own ring layouts that several of them share (the
 * GPU DMA ring, doca_soft_dev_dma_ring.h): a free-running counter alone in its cache line,
 * and a static assert that works in C and C++.
 *
 * The Ethernet queues do not use it: their rings are DOCA 3.3's mlx5 rings, described by
 * the public structs of doca_gpunetio_eth_def.h (doca-soft/include/README.md, "Ethernet
 * ring formats").
 */
#ifndef DOCA_SOFT_RING_H_
#define DOCA_SOFT_RING_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define DOCA_SOFT_RING_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define DOCA_SOFT_RING_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** One free-running counter alone in its cache line (its writer differs from its
 * neighbours'). */
struct doca_soft_ring_index {
	uint64_t value;
	uint64_t pad[7];
};

DOCA_SOFT_RING_ASSERT(sizeof(struct doca_soft_ring_index) == 64, "ring index line");

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_RING_H_ */
