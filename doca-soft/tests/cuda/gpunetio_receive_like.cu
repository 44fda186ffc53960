/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Device half of ../c/gpunetio_receive_like.c: one block of 32 threads receives bursts with
 * the 3.3 device API (all attributes), reads each frame's IPv4 length and frame number from
 * packet memory, and sums what it saw.
 */
#include <cuda_runtime.h>

#include "gpunetio_like_gpu.cuh"

#include <doca_gpunetio_dev_eth_rxq.cuh>

#include "../c/gpunetio_receive_like.h"

#define RECEIVE_LIKE_THREADS 32u
#define RECEIVE_LIKE_MAX_BURST 64u

template <enum doca_gpu_dev_eth_exec_scope scope>
__global__ void receive_like(struct doca_gpu_eth_rxq *rxq,
			     uint64_t expected,
			     uint64_t timeout_ns,
			     struct receive_like_result *res)
{
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[RECEIVE_LIKE_MAX_BURST];
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ int done;
	__shared__ unsigned long long packets, bytes, sum, bad;
	const uint64_t start = doca_gpu_dev_eth_query_globaltimer();

	if (threadIdx.x == 0) {
		packets = bytes = sum = bad = 0;
		done = 0;
	}
	__syncthreads();
	while (!done) {
		// Thread scope: one thread receives for the block; the others call with the scope.
		if (scope != DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD || threadIdx.x == 0)
			doca_gpu_dev_eth_rxq_recv<scope,
						  DOCA_GPUNETIO_ETH_MCST_AUTO,
						  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
						  DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(rxq,
										 RECEIVE_LIKE_MAX_BURST,
										 500000,
										 &first,
										 &num,
										 attr);
		__syncthreads();
		for (uint32_t k = threadIdx.x; k < num; k += blockDim.x) {
			const uint8_t *p = (const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + k);
			const uint32_t ip_len = ((uint32_t)p[16] << 8) | p[17];
			const uint32_t number = (uint32_t)p[42] | ((uint32_t)p[43] << 8) | ((uint32_t)p[44] << 16) |
						((uint32_t)p[45] << 24);
			atomicAdd(&bytes, (unsigned long long)attr[k].bytes);
			atomicAdd(&sum, (unsigned long long)number);
			if (ip_len + 14 != attr[k].bytes)
				atomicAdd(&bad, 1ull);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			packets += num;
			done = packets >= expected || doca_gpu_dev_eth_query_globaltimer() - start >= timeout_ns;
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		res->packets = packets;
		res->bytes = bytes;
		res->number_sum = sum;
		res->bad_length = bad;
	}
}

extern "C" doca_error_t receive_like_gpu_select(const char *gpu_pci)
{
	return like_gpu_select(gpu_pci);
}

extern "C" doca_error_t receive_like_run(struct doca_gpu_eth_rxq *rxq,
					 int scope,
					 uint64_t expected,
					 uint32_t timeout_ms,
					 struct receive_like_result *res)
{
	struct receive_like_result *d_res = NULL;
	const uint64_t timeout_ns = (uint64_t)timeout_ms * 1000000ULL;
	doca_error_t status = DOCA_SUCCESS;

	if (rxq == NULL || res == NULL || scope < 0 || scope > 2)
		return DOCA_ERROR_INVALID_VALUE;
	if (cudaMalloc(&d_res, sizeof(*d_res)) != cudaSuccess)
		return DOCA_ERROR_NO_MEMORY;
	if (scope == 0)
		receive_like<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD><<<1, RECEIVE_LIKE_THREADS>>>(rxq, expected, timeout_ns, d_res);
	else if (scope == 1)
		receive_like<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP><<<1, RECEIVE_LIKE_THREADS>>>(rxq, expected, timeout_ns, d_res);
	else
		receive_like<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK><<<1, RECEIVE_LIKE_THREADS>>>(rxq, expected, timeout_ns, d_res);
	if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
	    cudaMemcpy(res, d_res, sizeof(*res), cudaMemcpyDeviceToHost) != cudaSuccess)
		status = DOCA_ERROR_DRIVER;
	cudaFree(d_res);
	return status;
}
