/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: GPU semaphores (the device side of doca_gpu_semaphore). Header-only
 * CUDA. The handle layout is shared with the runtime (doca-soft/src/semaphore.rs).
 */
#ifndef DOCA_GPUNETIO_DEV_SEM_CUH_
#define DOCA_GPUNETIO_DEV_SEM_CUH_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio.h"

/** Device handle: status words, packet info and custom info of `num_items` items. */
struct doca_gpu_semaphore_gpu {
	uint64_t status_addr; /* uint32_t[num_items] */
	uint64_t info_addr;   /* struct doca_soft_sem_packet_info[num_items] */
	uint64_t custom_addr; /* custom_nbytes x num_items, 0 when none */
	uint32_t num_items;
	uint32_t custom_nbytes;
	uint64_t rsvd[4];
};

/** Per-item packet info. */
struct doca_soft_sem_packet_info {
	uint32_t num_packets;
	uint32_t pad;
	uint64_t doca_buf_idx_start;
};

static_assert(sizeof(struct doca_gpu_semaphore_gpu) == 64, "semaphore handle size");
static_assert(offsetof(struct doca_gpu_semaphore_gpu, num_items) == 24, "semaphore num_items");
static_assert(sizeof(struct doca_soft_sem_packet_info) == 16, "semaphore packet info size");

__device__ __forceinline__ uint32_t *doca_soft_sem_status(const struct doca_gpu_semaphore_gpu *sem, uint32_t idx)
{
	return (uint32_t *)sem->status_addr + idx;
}

__device__ __forceinline__ struct doca_soft_sem_packet_info *doca_soft_sem_info(const struct doca_gpu_semaphore_gpu *sem,
										 uint32_t idx)
{
	return (struct doca_soft_sem_packet_info *)sem->info_addr + idx;
}

/** Sets item `idx`'s status (earlier writes are visible to the CPU first). */
__device__ __forceinline__ doca_error_t doca_gpu_dev_semaphore_set_status(struct doca_gpu_semaphore_gpu *sem,
									  uint32_t idx,
									  enum doca_gpu_semaphore_status status)
{
	if (sem == nullptr || idx >= sem->num_items)
		return DOCA_ERROR_INVALID_VALUE;
	__threadfence_system();
	*(volatile uint32_t *)doca_soft_sem_status(sem, idx) = (uint32_t)status;
	__threadfence_system();
	return DOCA_SUCCESS;
}

/** Sets item `idx` to `value` if it is `compare`; DOCA_ERROR_AGAIN when it was not. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_semaphore_set_status_cas(struct doca_gpu_semaphore_gpu *sem,
									      uint32_t idx,
									      enum doca_gpu_semaphore_status compare,
									      enum doca_gpu_semaphore_status value)
{
	if (sem == nullptr || idx >= sem->num_items)
		return DOCA_ERROR_INVALID_VALUE;
	__threadfence_system();
	unsigned int old = atomicCAS_system((unsigned int *)doca_soft_sem_status(sem, idx),
					    (unsigned int)compare,
					    (unsigned int)value);
	return old == (unsigned int)compare ? DOCA_SUCCESS : DOCA_ERROR_AGAIN;
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_semaphore_get_status(const struct doca_gpu_semaphore_gpu *sem,
									  uint32_t idx,
									  enum doca_gpu_semaphore_status *status)
{
	if (sem == nullptr || status == nullptr || idx >= sem->num_items)
		return DOCA_ERROR_INVALID_VALUE;
	*status = (enum doca_gpu_semaphore_status)(*(volatile uint32_t *)doca_soft_sem_status(sem, idx));
	__threadfence_system();
	return DOCA_SUCCESS;
}

/** Writes item `idx`'s packet info, then its status. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_semaphore_set_packet_info(const struct doca_gpu_semaphore_gpu *sem,
									       uint32_t idx,
									       enum doca_gpu_semaphore_status status,
									       uint32_t num_packets,
									       uint64_t doca_buf_idx_start)
{
	if (sem == nullptr || idx >= sem->num_items)
		return DOCA_ERROR_INVALID_VALUE;
	struct doca_soft_sem_packet_info *info = doca_soft_sem_info(sem, idx);
	info->num_packets = num_packets;
	info->doca_buf_idx_start = doca_buf_idx_start;
	__threadfence_system();
	*(volatile uint32_t *)doca_soft_sem_status(sem, idx) = (uint32_t)status;
	__threadfence_system();
	return DOCA_SUCCESS;
}

__device__ __forceinline__ doca_error_t doca_gpu_dev_semaphore_get_packet_info(const struct doca_gpu_semaphore_gpu *sem,
									       uint32_t idx,
									       enum doca_gpu_semaphore_status *status,
									       uint32_t *num_packets,
									       uint64_t *doca_buf_idx_start)
{
	if (sem == nullptr || status == nullptr || num_packets == nullptr || doca_buf_idx_start == nullptr ||
	    idx >= sem->num_items)
		return DOCA_ERROR_INVALID_VALUE;
	*status = (enum doca_gpu_semaphore_status)(*(volatile uint32_t *)doca_soft_sem_status(sem, idx));
	__threadfence_system();
	volatile struct doca_soft_sem_packet_info *info = doca_soft_sem_info(sem, idx);
	*num_packets = info->num_packets;
	*doca_buf_idx_start = info->doca_buf_idx_start;
	return DOCA_SUCCESS;
}

/** Packet info of item `idx` if its status is `status`; DOCA_ERROR_NOT_FOUND otherwise. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_semaphore_get_packet_info_status(
	const struct doca_gpu_semaphore_gpu *sem,
	uint32_t idx,
	enum doca_gpu_semaphore_status status,
	uint32_t *num_packets,
	uint64_t *doca_buf_idx_start)
{
	enum doca_gpu_semaphore_status cur;
	doca_error_t r = doca_gpu_dev_semaphore_get_packet_info(sem, idx, &cur, num_packets, doca_buf_idx_start);
	if (r != DOCA_SUCCESS)
		return r;
	return cur == status ? DOCA_SUCCESS : DOCA_ERROR_NOT_FOUND;
}

/** Item `idx`'s custom info blob. */
__device__ __forceinline__ doca_error_t doca_gpu_dev_semaphore_get_custom_info_addr(struct doca_gpu_semaphore_gpu *sem,
										    uint32_t idx,
										    void **custom_info)
{
	if (sem == nullptr || custom_info == nullptr || idx >= sem->num_items || sem->custom_addr == 0)
		return DOCA_ERROR_INVALID_VALUE;
	*custom_info = (void *)(sem->custom_addr + (uint64_t)idx * sem->custom_nbytes);
	return DOCA_SUCCESS;
}

#endif /* DOCA_GPUNETIO_DEV_SEM_CUH_ */
