/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Device half of ../c/gpunetio_send_like.c: the send kernels and their launchers, built by
 * nvcc and linked with the host half (built by gcc or g++). One block of 32 threads sends
 * `rounds` rounds of 32 frames.
 */
#include <cuda_runtime.h>

#include "gpunetio_like_gpu.cuh"

#include <doca_gpunetio_dev_eth_txq.cuh>

#include "../c/gpunetio_send_like.h"

#define SEND_LIKE_THREADS 32u

/* The device API's send, warp scope: the last lane asks for a completion; thread 0 polls the
 * round's one completion (LAST) before the next round reuses the frames. */
__global__ void send_like_warp(struct doca_gpu_eth_txq *txq,
			       uint8_t *frames,
			       uint32_t mkey_be,
			       uint32_t size,
			       uint32_t rounds,
			       struct send_like_result *res)
{
	uint8_t *frame = frames + (uint64_t)size * threadIdx.x;
	for (uint32_t r = 0; r < rounds; r++) {
		doca_gpu_dev_eth_ticket_t ticket;
		doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					  DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
					  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					  DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(txq,
									     (uint64_t)frame,
									     mkey_be,
									     size,
									     threadIdx.x == SEND_LIKE_THREADS - 1
										     ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY
										     : DOCA_GPUNETIO_ETH_SEND_FLAG_NONE,
									     &ticket);
		__syncwarp();
		if (threadIdx.x == 0) {
			uint32_t done = 0;
			doca_error_t e = doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
				txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);
			res->sent += SEND_LIKE_THREADS;
			res->completions += done;
			res->errors += e != DOCA_SUCCESS;
		}
		__syncwarp();
	}
}

/* The low-level helpers on an exclusive queue: each thread fills its WQE, the last one
 * submits the round and polls its completion by index. */
__global__ void send_like_low_level(struct doca_gpu_eth_txq *txq,
				    uint8_t *frames,
				    uint32_t mkey_be,
				    uint32_t size,
				    uint32_t rounds,
				    struct send_like_result *res)
{
	__shared__ uint32_t prepare_errors;
	uint8_t *frame = frames + (uint64_t)size * threadIdx.x;
	const bool last = threadIdx.x == blockDim.x - 1;
	uint64_t base = 0;
	if (threadIdx.x == 0)
		prepare_errors = 0;
	__syncthreads();
	for (uint32_t r = 0; r < rounds; r++) {
		const uint16_t idx = (uint16_t)(base + threadIdx.x);
		struct doca_gpu_dev_eth_txq_wqe *wqe = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, idx);
		if (doca_gpu_dev_eth_txq_wqe_prepare_send(txq,
							  wqe,
							  idx,
							  (uint64_t)frame,
							  mkey_be,
							  size,
							  last ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY
							       : DOCA_GPUNETIO_ETH_SEND_FLAG_NONE) != DOCA_SUCCESS)
			atomicAdd(&prepare_errors, 1u);
		__syncthreads();
		if (last) {
			doca_gpu_dev_eth_txq_submit<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
						    DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
						    DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>(txq, base + blockDim.x);
			doca_error_t e =
				doca_gpu_dev_eth_txq_poll_completion_at<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
									DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(
					txq, r, DOCA_GPUNETIO_ETH_WAIT_FLAG_B);
			res->sent += blockDim.x;
			res->completions += e == DOCA_SUCCESS;
			res->errors += e != DOCA_SUCCESS;
		}
		base += blockDim.x;
		__syncthreads();
	}
	if (threadIdx.x == 0)
		res->errors += prepare_errors;
}

/* Timed bursts: block scope, a wait-on-time WQE before each round's sends. */
__global__ void send_like_wait_time(struct doca_gpu_eth_txq *txq,
				    uint8_t *frames,
				    uint32_t mkey_be,
				    uint32_t size,
				    uint32_t rounds,
				    const uint64_t *wait_on_time,
				    struct send_like_result *res)
{
	uint8_t *frame = frames + (uint64_t)size * threadIdx.x;
	for (uint32_t r = 0; r < rounds; r++) {
		doca_gpu_dev_eth_ticket_t ticket;
		doca_gpu_dev_eth_txq_wait_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
					       DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
					       DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					       DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(txq,
										   wait_on_time[r],
										   (uint64_t)frame,
										   mkey_be,
										   size,
										   threadIdx.x == blockDim.x - 1
											   ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY
											   : DOCA_GPUNETIO_ETH_SEND_FLAG_NONE,
										   &ticket);
		__syncthreads();
		if (threadIdx.x == 0) {
			uint32_t done = 0;
			doca_error_t e = doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
				txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);
			res->sent += blockDim.x;
			res->completions += done;
			res->errors += e != DOCA_SUCCESS;
		}
		__syncthreads();
	}
}

extern "C" doca_error_t send_like_gpu_select(const char *gpu_pci)
{
	return like_gpu_select(gpu_pci);
}

extern "C" doca_error_t send_like_copy_to_gpu(void *gpu_dst, const void *src, size_t len)
{
	return cudaMemcpy(gpu_dst, src, len, cudaMemcpyHostToDevice) == cudaSuccess ? DOCA_SUCCESS : DOCA_ERROR_DRIVER;
}

extern "C" doca_error_t send_like_run(struct doca_gpu_eth_txq *txq,
				      enum send_like_mode mode,
				      void *frames,
				      uint32_t mkey_be,
				      uint32_t size,
				      uint32_t rounds,
				      const uint64_t *wait_on_time,
				      struct send_like_result *res)
{
	struct send_like_result *d_res = NULL;
	cudaStream_t stream;
	doca_error_t status = DOCA_SUCCESS;

	if (txq == NULL || frames == NULL || res == NULL || (mode == SEND_LIKE_WAIT_TIME && wait_on_time == NULL))
		return DOCA_ERROR_INVALID_VALUE;
	if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
		return DOCA_ERROR_DRIVER;
	if (cudaMalloc(&d_res, sizeof(*d_res)) != cudaSuccess) {
		cudaStreamDestroy(stream);
		return DOCA_ERROR_NO_MEMORY;
	}
	cudaMemsetAsync(d_res, 0, sizeof(*d_res), stream);
	switch (mode) {
	case SEND_LIKE_WARP:
		send_like_warp<<<1, SEND_LIKE_THREADS, 0, stream>>>(txq, (uint8_t *)frames, mkey_be, size, rounds, d_res);
		break;
	case SEND_LIKE_LOW_LEVEL:
		send_like_low_level<<<1, SEND_LIKE_THREADS, 0, stream>>>(txq, (uint8_t *)frames, mkey_be, size, rounds, d_res);
		break;
	case SEND_LIKE_WAIT_TIME:
		send_like_wait_time<<<1, SEND_LIKE_THREADS, 0, stream>>>(txq,
									 (uint8_t *)frames,
									 mkey_be,
									 size,
									 rounds,
									 wait_on_time,
									 d_res);
		break;
	default:
		status = DOCA_ERROR_INVALID_VALUE;
	}
	if (status == DOCA_SUCCESS && (cudaGetLastError() != cudaSuccess || cudaStreamSynchronize(stream) != cudaSuccess ||
				       cudaMemcpy(res, d_res, sizeof(*res), cudaMemcpyDeviceToHost) != cudaSuccess))
		status = DOCA_ERROR_DRIVER;
	cudaFree(d_res);
	cudaStreamDestroy(stream);
	return status;
}
