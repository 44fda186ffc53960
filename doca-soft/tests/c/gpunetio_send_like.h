/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The interface between gpunetio_send_like.c (host, built by gcc or g++) and
 * ../cuda/gpunetio_send_like.cu (kernels and their launchers, built by nvcc), split the way
 * GPUNetIO programs split their host and device files.
 */
#ifndef GPUNETIO_SEND_LIKE_H_
#define GPUNETIO_SEND_LIKE_H_

#include <doca_error.h>
#include <doca_gpunetio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu_eth_txq;

/** How the kernel sends: the device API's send with warp scope (one NOTIFY per warp round),
 * the low-level helpers (WQE pointer, prepare, submit, poll one completion by index), or
 * timed bursts (one wait-on-time WQE, then a block's sends). */
enum send_like_mode {
	SEND_LIKE_WARP = 0,
	SEND_LIKE_LOW_LEVEL = 1,
	SEND_LIKE_WAIT_TIME = 2,
};

/** What the kernel saw. */
struct send_like_result {
	uint32_t sent;	      /* frames handed to the queue */
	uint32_t completions; /* NOTIFY completions polled */
	uint32_t errors;      /* prepare failures and error completions */
};

/** Makes the GPU with PCI address `gpu_pci` current (and creates its context). */
doca_error_t send_like_gpu_select(const char *gpu_pci);

/** Copies `len` host bytes to GPU memory. */
doca_error_t send_like_copy_to_gpu(void *gpu_dst, const void *src, size_t len);

/**
 * Sends `rounds` rounds of 32 frames of `size` bytes from `frames` (GPU memory, 32 frames
 * one after the other; `mkey_be` big-endian) on `txq` with one block of 32 threads, waits
 * for the kernel and fills `res`. SEND_LIKE_WAIT_TIME holds round r until `wait_on_time[r]`
 * (values from doca_eth_txq_calculate_timestamp; GPU-readable memory).
 */
doca_error_t send_like_run(struct doca_gpu_eth_txq *txq,
			   enum send_like_mode mode,
			   void *frames,
			   uint32_t mkey_be,
			   uint32_t size,
			   uint32_t rounds,
			   const uint64_t *wait_on_time,
			   struct send_like_result *res);

#ifdef __cplusplus
}
#endif

#endif /* GPUNETIO_SEND_LIKE_H_ */
