/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API, GPU verbs: the building blocks the other verbs headers use (timers,
 * byte swaps, fences, scoped atomics and locks, relaxed loads and MMIO stores, copies).
 * Header-only CUDA (C++17), DOCA 3.3's names and template signatures.
 *
 * The functions that only compute bytes (byte swaps, copies, the WQE builders of
 * doca_gpunetio_dev_verbs_qp.cuh, the CQE accessors) are also compiled for the host
 * (__host__ __device__) so that doca-soft's tests can check their output on a CPU; DOCA 3.3
 * declares them __device__ only, and device callers cannot tell the difference.
 */
#ifndef DOCA_GPUNETIO_DEV_VERBS_COMMON_CUH_
#define DOCA_GPUNETIO_DEV_VERBS_COMMON_CUH_

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda/atomic>

#include "doca_gpunetio_verbs_def.h"
#include "doca_soft_cuda_target.h"

/* Feature macros (DOCA 3.3 names). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define DOCA_GPUNETIO_VERBS_HAS_ASYNC_STORE_RELEASE 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define DOCA_GPUNETIO_VERBS_HAS_TMA_COPY 1
#endif
#if DOCA_SOFT_CUDA_AT_LEAST(12, 2)
#define DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && DOCA_SOFT_CUDA_AT_LEAST(12, 8)
#define DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX 1
#else
#define DOCA_GPUNETIO_VERBS_ENABLE_FAST_MEMBAR 1
#endif

/** Store `v` to `x` once, exactly as written. */
#define DOCA_GPUNETIO_VERBS_WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

/* doca-soft: functions that are pure byte computations are host-callable too (see above). */
#define DOCA_SOFT_VERBS_HD __host__ __device__

/* doca-soft: read a field that never changes after export, through the read-only cache. */
template <typename T>
DOCA_SOFT_VERBS_HD static inline T doca_priv_gpu_dev_verbs_ldg(const T *ptr)
{
#ifdef __CUDA_ARCH__
	T v;
	if constexpr (sizeof(T) == 8) {
		unsigned long long raw = __ldg((const unsigned long long *)ptr);
		memcpy(&v, &raw, 8);
	} else if constexpr (sizeof(T) == 4) {
		unsigned int raw = __ldg((const unsigned int *)ptr);
		memcpy(&v, &raw, 4);
	} else if constexpr (sizeof(T) == 2) {
		unsigned short raw = __ldg((const unsigned short *)ptr);
		memcpy(&v, &raw, 2);
	} else {
		v = *ptr;
	}
	return v;
#else
	return *ptr;
#endif
}

/** %globaltimer in nanoseconds. */
__device__ static inline uint64_t doca_gpu_dev_verbs_query_globaltimer()
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/** Lane of the calling thread in its warp. */
__device__ static inline unsigned int doca_gpu_dev_verbs_get_lane_id()
{
	unsigned int lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
}

DOCA_SOFT_VERBS_HD static inline uint64_t doca_gpu_dev_verbs_bswap64(uint64_t x)
{
#ifdef __CUDA_ARCH__
	uint32_t lo = (uint32_t)x;
	uint32_t hi = (uint32_t)(x >> 32);
	return ((uint64_t)__byte_perm(lo, 0, 0x0123) << 32) | (uint64_t)__byte_perm(hi, 0, 0x0123);
#else
	return __builtin_bswap64(x);
#endif
}

DOCA_SOFT_VERBS_HD static inline uint32_t doca_gpu_dev_verbs_bswap32(uint32_t x)
{
#ifdef __CUDA_ARCH__
	return __byte_perm(x, 0, 0x0123);
#else
	return __builtin_bswap32(x);
#endif
}

/* doca-soft: 16-bit swap for the CQE's wqe_counter. */
DOCA_SOFT_VERBS_HD static inline uint16_t doca_priv_gpu_dev_verbs_bswap16(uint16_t x)
{
	return (uint16_t)((x >> 8) | (x << 8));
}

/** Relaxed, uncached system-scope store to a doorbell (or to memory a CPU thread polls). */
__device__ static inline void doca_gpu_dev_verbs_store_relaxed_mmio(uint64_t *ptr, uint64_t val)
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO
	asm volatile("st.mmio.relaxed.sys.global.u64 [%0], %1;" : : "l"(ptr), "l"(val) : "memory");
#else
	asm volatile("st.relaxed.sys.global.u64 [%0], %1;" : : "l"(ptr), "l"(val) : "memory");
#endif
}

/*
 * doca-soft: one PTX instruction at the scope the template parameter `sync_scope` names:
 * `head` then ".sys", ".gpu" or ".cta", then `tail`, with the operands that follow. Local to
 * the fences and release stores below (undefined after them).
 */
#define DOCA_PRIV_GPU_DEV_VERBS_SCOPED_ASM(head, tail, ...)                                   \
	do {                                                                                  \
		if constexpr (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS)                  \
			asm volatile(head ".sys" tail __VA_ARGS__);                               \
		else if constexpr (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU)             \
			asm volatile(head ".gpu" tail __VA_ARGS__);                               \
		else                                                                          \
			asm volatile(head ".cta" tail __VA_ARGS__);                               \
	} while (0)

/* doca-soft: the full fence of a scope, where the PTX acquire/release fences are missing. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope>
__device__ static inline void doca_priv_gpu_dev_verbs_threadfence()
{
	if constexpr (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS)
		__threadfence_system();
	else if constexpr (sync_scope == DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU)
		__threadfence();
	else
		__threadfence_block();
}

/** Acquire fence: later reads see what was published before the writes this thread saw. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_verbs_fence_acquire()
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX
	DOCA_PRIV_GPU_DEV_VERBS_SCOPED_ASM("fence.acquire", ";", ::: "memory");
#else
	doca_priv_gpu_dev_verbs_threadfence<sync_scope>();
#endif
}

/** Release fence: this thread's earlier writes are visible before its later ones. */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>
__device__ static inline void doca_gpu_dev_verbs_fence_release()
{
#ifdef DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX
	DOCA_PRIV_GPU_DEV_VERBS_SCOPED_ASM("fence.release", ";", ::: "memory");
#else
	doca_priv_gpu_dev_verbs_threadfence<sync_scope>();
#endif
}

/**
 * Release store of a doorbell word. DOCA 3.3 uses the asynchronous MMIO store of sm >= 100
 * here; doca-soft issues a plain release store at the same scope on every architecture
 * (same ordering; the doorbell's consumer is a CPU thread).
 */
template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>
__device__ static inline void doca_gpu_dev_verbs_async_store_release(uint32_t *ptr, uint32_t val)
{
	DOCA_PRIV_GPU_DEV_VERBS_SCOPED_ASM("st.release", ".global.u32 [%0], %1;", : : "l"(ptr), "r"(val) : "memory");
}

template <enum doca_gpu_dev_verbs_sync_scope sync_scope = DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS>
__device__ static inline void doca_gpu_dev_verbs_async_store_release(uint64_t *ptr, uint64_t val)
{
	DOCA_PRIV_GPU_DEV_VERBS_SCOPED_ASM("st.release", ".global.u64 [%0], %1;", : : "l"(ptr), "l"(val) : "memory");
}

#undef DOCA_PRIV_GPU_DEV_VERBS_SCOPED_ASM

/** Whether `ptr` is a multiple of `alignment` (a power of two). */
DOCA_SOFT_VERBS_HD static inline bool doca_gpu_dev_isaligned(void *ptr, size_t alignment)
{
	return ((uintptr_t)ptr & (alignment - 1)) == 0;
}

/** Copies `size` bytes in the widest units both pointers and the size allow. */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_memcpy_aligned_data(void *dst, void *src, size_t size)
{
	if (doca_gpu_dev_isaligned(dst, 8) && doca_gpu_dev_isaligned(src, 8) && (size & 7) == 0) {
		for (size_t i = 0; i < size / 8; i++)
			((uint64_t *)dst)[i] = ((const uint64_t *)src)[i];
	} else if (doca_gpu_dev_isaligned(dst, 4) && doca_gpu_dev_isaligned(src, 4) && (size & 3) == 0) {
		for (size_t i = 0; i < size / 4; i++)
			((uint32_t *)dst)[i] = ((const uint32_t *)src)[i];
	} else if (doca_gpu_dev_isaligned(dst, 2) && doca_gpu_dev_isaligned(src, 2) && (size & 1) == 0) {
		for (size_t i = 0; i < size / 2; i++)
			((uint16_t *)dst)[i] = ((const uint16_t *)src)[i];
	} else {
		for (size_t i = 0; i < size; i++)
			((uint8_t *)dst)[i] = ((const uint8_t *)src)[i];
	}
}

/** Copies `size` bytes one at a time (any alignment). */
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_memcpy_data(void *dst, void *src, size_t size)
{
	for (size_t i = 0; i < size; i++)
		((uint8_t *)dst)[i] = ((const uint8_t *)src)[i];
}

/**
 * DOCA 3.3 quirk kept as is: this template walks both pointers over `size` bytes in units
 * of T but copies nothing. Use doca_gpu_dev_verbs_memcpy_aligned_data to copy.
 */
template <typename T>
DOCA_SOFT_VERBS_HD static inline void doca_gpu_dev_verbs_memcpy_inl_aligned_data(T *dst, T *src, size_t size)
{
	for (size_t i = 0; i < size / sizeof(T); i++) {
		dst++;
		src++;
	}
	(void)dst;
	(void)src;
}

/* doca-soft: the libcu++ scope matching a sharing mode. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode>
struct doca_priv_gpu_dev_verbs_scope {
	static constexpr cuda::thread_scope value =
		resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA ? cuda::thread_scope_block
										       : cuda::thread_scope_device;
};

/** Atomic max returning the old value; EXCLUSIVE is a plain read-modify-write. */
template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU,
	  bool need_fence_acquire = false>
__device__ static inline T doca_gpu_dev_verbs_atomic_max(T *ptr, T value)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		T old = *ptr;
		if (value > old)
			*ptr = value;
		return old;
	} else {
		cuda::atomic_ref<T, doca_priv_gpu_dev_verbs_scope<resource_sharing_mode>::value> ref(*ptr);
		return ref.fetch_max(value, need_fence_acquire ? cuda::memory_order_acquire : cuda::memory_order_relaxed);
	}
}

/** Atomic add returning the old value; EXCLUSIVE is a plain read-modify-write. */
template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static inline T doca_gpu_dev_verbs_atomic_add(T *ptr, T value)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		T old = *ptr;
		*ptr = old + value;
		return old;
	} else {
		cuda::atomic_ref<T, doca_priv_gpu_dev_verbs_scope<resource_sharing_mode>::value> ref(*ptr);
		return ref.fetch_add(value, cuda::memory_order_relaxed);
	}
}

/** Reads a shared counter: plain for EXCLUSIVE, volatile otherwise. */
template <typename T,
	  enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static inline T doca_gpu_dev_verbs_atomic_read(T *ptr)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
		return *ptr;
	else
		return DOCA_GPUNETIO_VERBS_VOLATILE(*ptr);
}

/** Takes a spin lock (0 = free); CTA/GPU spin on a compare-and-swap, then acquire. */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static inline void doca_gpu_dev_verbs_lock(int *lock)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		*lock = 1;
	} else {
		cuda::atomic_ref<int, doca_priv_gpu_dev_verbs_scope<resource_sharing_mode>::value> ref(*lock);
		int expected = 0;
		while (!ref.compare_exchange_weak(expected, 1, cuda::memory_order_relaxed))
			expected = 0;
		if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA>();
		else
			doca_gpu_dev_verbs_fence_acquire<DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU>();
	}
}

/** Releases a spin lock (release store of 0). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static inline void doca_gpu_dev_verbs_unlock(int *lock)
{
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		*lock = 0;
	} else {
		cuda::atomic_ref<int, doca_priv_gpu_dev_verbs_scope<resource_sharing_mode>::value> ref(*lock);
		ref.store(0, cuda::memory_order_release);
	}
}

/** Relaxed system-scope loads that do not allocate in L1 (memory another agent writes). */
__device__ static inline uint8_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint8_t *ptr)
{
	uint16_t v;
	asm volatile("ld.relaxed.sys.global.L1::no_allocate.u8 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
	return (uint8_t)v;
}

__device__ static inline uint32_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint32_t *ptr)
{
	uint32_t v;
	asm volatile("ld.relaxed.sys.global.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(ptr) : "memory");
	return v;
}

__device__ static inline uint64_t doca_gpu_dev_verbs_load_relaxed_sys_global(uint64_t *ptr)
{
	uint64_t v;
	asm volatile("ld.relaxed.sys.global.L1::no_allocate.u64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	return v;
}

/** Relaxed load at the scope of the sharing mode (plain for EXCLUSIVE). */
template <enum doca_gpu_dev_verbs_resource_sharing_mode resource_sharing_mode = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ static inline uint64_t doca_gpu_dev_verbs_load_relaxed(uint64_t *ptr)
{
	uint64_t v;
	if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE)
		v = *ptr;
	else if constexpr (resource_sharing_mode == DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA)
		asm volatile("ld.relaxed.cta.u64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	else
		asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	return v;
}

/** ceil(x / 2^shift). */
DOCA_SOFT_VERBS_HD static inline uint64_t doca_gpu_dev_verbs_div_ceil_aligned_pow2(uint64_t x, unsigned shift)
{
	return (x >> shift) + ((x & ((1ULL << shift) - 1)) != 0 ? 1 : 0);
}

DOCA_SOFT_VERBS_HD static inline uint32_t doca_gpu_dev_verbs_div_ceil_aligned_pow2_32bits(uint64_t x, int shift)
{
	return (uint32_t)doca_gpu_dev_verbs_div_ceil_aligned_pow2(x, (unsigned)shift);
}

#endif /* DOCA_GPUNETIO_DEV_VERBS_COMMON_CUH_ */
