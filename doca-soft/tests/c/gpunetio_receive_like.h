/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The interface between gpunetio_receive_like.c (host, gcc or g++) and
 * ../cuda/gpunetio_receive_like.cu (kernel and launcher, nvcc).
 */
#ifndef GPUNETIO_RECEIVE_LIKE_H_
#define GPUNETIO_RECEIVE_LIKE_H_

#include <doca_error.h>
#include <doca_gpunetio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu_eth_rxq;

/** What the kernel received: UDP frames, their bytes (from the receive attributes), the
 * sum of the frame numbers their payloads carry (bytes 42..45, little-endian), and frames
 * whose length attribute disagrees with their IPv4 total length. */
struct receive_like_result {
	uint64_t packets;
	uint64_t bytes;
	uint64_t number_sum;
	uint64_t bad_length;
};

/** Makes the GPU with PCI address `gpu_pci` current (and creates its context). */
doca_error_t receive_like_gpu_select(const char *gpu_pci);

/**
 * Receives on `rxq` with one block of 32 threads in execution scope `scope` (0 thread,
 * 1 warp, 2 block) until `expected` packets arrived or `timeout_ms` passed, waits for the
 * kernel and fills `res`.
 */
doca_error_t receive_like_run(struct doca_gpu_eth_rxq *rxq,
			      int scope,
			      uint64_t expected,
			      uint32_t timeout_ms,
			      struct receive_like_result *res);

#ifdef __cplusplus
}
#endif

#endif /* GPUNETIO_RECEIVE_LIKE_H_ */
