/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: GPUNetIO host API: the GPU handle, GPU memory, and semaphores shared
 * between CPU and GPU code.
 */
#ifndef DOCA_GPUNETIO_H_
#define DOCA_GPUNETIO_H_

#include <inttypes.h>
#include <stddef.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_log.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu;
struct doca_gpu_semaphore;
struct doca_gpu_semaphore_gpu;

/* Force a fresh read (or write) of x through memory another agent may change. */
#define DOCA_GPUNETIO_VOLATILE(x) (*(volatile __typeof__(x) *)&(x))

/* State of one semaphore item, as CPU and GPU code agree on it. */
enum doca_gpu_semaphore_status {
	DOCA_GPU_SEMAPHORE_STATUS_FREE = 0,
	DOCA_GPU_SEMAPHORE_STATUS_READY = 1,
	DOCA_GPU_SEMAPHORE_STATUS_DONE = 2,
	DOCA_GPU_SEMAPHORE_STATUS_HOLD = 3,
	DOCA_GPU_SEMAPHORE_STATUS_ERROR = 4,
	DOCA_GPU_SEMAPHORE_STATUS_EXIT = 5,
};

/* Open the GPU at a PCIe address such as "17:00.0" (a CUDA context must exist). */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_create(const char *gpu_bus_id, struct doca_gpu **gpu_dev);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_destroy(struct doca_gpu *gpu_dev);

/*
 * Allocate size bytes of the given kind. alignment 0 means default, else a power of two.
 * memptr_cpu may be NULL for DOCA_GPU_MEM_TYPE_GPU; the other kinds fill both pointers.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_mem_alloc(struct doca_gpu *gpu_dev,
				size_t size,
				size_t alignment,
				enum doca_gpu_mem_type mtype,
				void **memptr_gpu,
				void **memptr_cpu);

/* Free memory from doca_gpu_mem_alloc, by its GPU pointer. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_mem_free(struct doca_gpu *gpu_dev, void *memptr_gpu);

/* dmabuf file descriptor of GPU memory; DOCA_ERROR_NOT_SUPPORTED when unavailable. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_dmabuf_fd(struct doca_gpu *gpu_dev, void *memptr_gpu, size_t size, int *dmabuf_fd);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_create(struct doca_gpu *gpu_dev, struct doca_gpu_semaphore **semaphore);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_destroy(struct doca_gpu_semaphore *semaphore);

/* Freeze the attributes and allocate the items. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_start(struct doca_gpu_semaphore *semaphore);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_stop(struct doca_gpu_semaphore *semaphore);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_memory_type(struct doca_gpu_semaphore *semaphore,
						enum doca_gpu_mem_type mtype);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_items_num(struct doca_gpu_semaphore *semaphore, uint32_t num_items);

/* Give every item a blob of nbytes of caller data, in memory of type mtype. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_custom_info(struct doca_gpu_semaphore *semaphore,
						uint32_t nbytes,
						enum doca_gpu_mem_type mtype);

/* Handle to pass to GPU code (after start). */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_gpu_handle(struct doca_gpu_semaphore *semaphore_cpu,
					       struct doca_gpu_semaphore_gpu **semaphore_gpu);

/* CPU access to an item: only for semaphores in CPU-reachable memory. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_status(struct doca_gpu_semaphore *semaphore_cpu,
					   uint32_t idx,
					   enum doca_gpu_semaphore_status status);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_status(struct doca_gpu_semaphore *semaphore_cpu,
					   uint32_t idx,
					   enum doca_gpu_semaphore_status *status);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_custom_info_addr(struct doca_gpu_semaphore *semaphore_cpu,
						     uint32_t idx,
						     void **custom_info);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_H_ */
