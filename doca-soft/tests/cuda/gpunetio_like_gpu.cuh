/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * What the device halves of the GPUNetIO test programs share: selecting the GPU the host
 * half names by PCI address, with a context created on it.
 */
#ifndef GPUNETIO_LIKE_GPU_CUH
#define GPUNETIO_LIKE_GPU_CUH

#include <cuda_runtime.h>

#include <doca_error.h>

/* Makes the GPU at `gpu_pci` current (its primary context created): DOCA_ERROR_NOT_FOUND
 * without such a GPU, DOCA_ERROR_DRIVER when CUDA refuses it. */
static inline doca_error_t like_gpu_select(const char *gpu_pci)
{
	int dev = 0;
	if (gpu_pci == NULL || cudaDeviceGetByPCIBusId(&dev, gpu_pci) != cudaSuccess)
		return DOCA_ERROR_NOT_FOUND;
	if (cudaSetDevice(dev) != cudaSuccess || cudaFree(0) != cudaSuccess)
		return DOCA_ERROR_DRIVER;
	return DOCA_SUCCESS;
}

#endif /* GPUNETIO_LIKE_GPU_CUH */
