/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: helpers shared by the Ethernet RX/TX device calls (timers, byte
 * swaps, fences and atomics with a scope chosen at compile time). Header-only CUDA.
 *
 * The rings these calls work on are doca-soft's (doca_soft_ring.h): a CPU proxy plays the
 * NIC, so there are no doorbells to ring; "submitting" is publishing a ring index.
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_
#define DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_

#include <stdint.h>

#include "doca_error.h"
#include "doca_gpunetio_eth_def.h"

/** Ticket of a send: the index of its descriptor in the send ring. */
typedef uint64_t doca_gpu_dev_eth_ticket_t;

/** Re-read `x` from memory every time. */
#define DOCA_GPUNETIO_ETH_VOLATILE(x) (*(volatile __typeof__(x) *)&(x))
/** Store `v` to `x` once, as written. */
#define DOCA_GPUNETIO_ETH_WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
/** Byte swap of a 16-bit value. */
#define DOCA_GPUNETIO_ETH_BSWAP16(x) ((uint16_t)((((uint16_t)(x)&0xffu) << 8) | (((uint16_t)(x)) >> 8)))

/** %globaltimer in nanoseconds. */
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_query_globaltimer(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ __forceinline__ uint64_t doca_gpu_dev_eth_bswap64(uint64_t x)
{
	uint32_t lo = (uint32_t)x;
	uint32_t hi = (uint32_t)(x >> 32);
	return ((uint64_t)__byte_perm(lo, 0, 0x0123) << 32) | (uint64_t)__byte_perm(hi, 0, 0x0123);
}

__device__ __forceinline__ uint32_t doca_gpu_dev_eth_bswap32(uint32_t x)
{
	return __byte_perm(x, 0, 0x0123);
}

/** Lane of the calling thread in its warp. */
__device__ __forceinline__ unsigned int doca_gpu_dev_eth_get_lane_id(void)
{
	unsigned int lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
}

/** Relaxed system-scope store (memory another agent polls). */
__device__ __forceinline__ void doca_gpu_dev_eth_store_relaxed_mmio(uint64_t *ptr, uint64_t v)
{
	asm volatile("st.relaxed.sys.global.u64 [%0], %1;" : : "l"(ptr), "l"(v) : "memory");
}

__device__ __forceinline__ uint8_t doca_gpu_dev_eth_load_relaxed_sys_global(const uint8_t *ptr)
{
	uint16_t v;
	asm volatile("ld.relaxed.sys.global.u8 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
	return (uint8_t)v;
}

__device__ __forceinline__ uint16_t doca_gpu_dev_eth_load_relaxed_sys_global(const uint16_t *ptr)
{
	uint16_t v;
	asm volatile("ld.relaxed.sys.global.u16 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
	return v;
}

__device__ __forceinline__ uint64_t doca_gpu_dev_eth_load_relaxed_sys_global(const uint64_t *ptr)
{
	uint64_t v;
	asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	return v;
}

/** Acquire load at system scope: later reads see what the writer published before. */
__device__ __forceinline__ uint64_t doca_gpu_dev_eth_load_acquire_sys(const uint64_t *ptr)
{
	uint64_t v;
	asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	return v;
}

/** Release store at system scope: earlier writes are visible before `v`. */
__device__ __forceinline__ void doca_gpu_dev_eth_store_release_sys(uint64_t *ptr, uint64_t v)
{
	asm volatile("st.release.sys.global.u64 [%0], %1;" : : "l"(ptr), "l"(v) : "memory");
}

template <enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_fence_acquire(void)
{
	if constexpr (sync_scope == DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS)
		__threadfence_system();
	else if constexpr (sync_scope == DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU)
		__threadfence();
	else
		__threadfence_block();
}

template <enum doca_gpu_dev_eth_sync_scope sync_scope = DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_fence_release(void)
{
	if constexpr (sync_scope == DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS)
		__threadfence_system();
	else if constexpr (sync_scope == DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU)
		__threadfence();
	else
		__threadfence_block();
}

/** Atomic add returning the old value; the scope follows who shares the queue. */
template <typename T,
	  enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ __forceinline__ T doca_gpu_dev_eth_atomic_add(T *ptr, T v)
{
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		T old = *ptr;
		*ptr = old + v;
		return old;
	} else if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA) {
		return (T)atomicAdd_block((unsigned long long *)ptr, (unsigned long long)v);
	} else {
		return (T)atomicAdd((unsigned long long *)ptr, (unsigned long long)v);
	}
}

/** Atomic max returning the old value. */
template <typename T,
	  enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ __forceinline__ T doca_gpu_dev_eth_atomic_max(T *ptr, T v)
{
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		T old = *ptr;
		if (v > old)
			*ptr = v;
		return old;
	} else if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA) {
		return (T)atomicMax_block((unsigned long long *)ptr, (unsigned long long)v);
	} else {
		return (T)atomicMax((unsigned long long *)ptr, (unsigned long long)v);
	}
}

/** Atomic read. */
template <typename T,
	  enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ __forceinline__ T doca_gpu_dev_eth_atomic_read(T *ptr)
{
	return DOCA_GPUNETIO_ETH_VOLATILE(*ptr);
}

/** Spin lock on an int (0 = free). */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_lock(int *lock)
{
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		(void)lock;
	} else if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA) {
		while (atomicCAS_block(lock, 0, 1) != 0)
			;
		__threadfence();
	} else {
		while (atomicCAS(lock, 0, 1) != 0)
			;
		__threadfence();
	}
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing = DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>
__device__ __forceinline__ void doca_gpu_dev_eth_unlock(int *lock)
{
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		(void)lock;
	} else if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA) {
		__threadfence();
		atomicExch_block(lock, 0);
	} else {
		__threadfence();
		atomicExch(lock, 0);
	}
}

/** Doorbell record value of a producer index (low 16 bits, big-endian). */
__device__ __forceinline__ uint32_t doca_gpu_dev_eth_prepare_dbr(uint32_t prod_index)
{
	return doca_gpu_dev_eth_bswap32(prod_index & 0xffffu);
}

/** Completion doorbell record value of a consumer index (24 bits, big-endian). */
__device__ __forceinline__ uint32_t doca_gpu_dev_eth_prepare_cq_dbr(uint32_t cons_index)
{
	return doca_gpu_dev_eth_bswap32(cons_index & 0xffffffu);
}

#endif /* DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_ */
