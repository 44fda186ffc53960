/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft device API: helpers shared by the Ethernet RX/TX device calls (timers, byte
 * swaps, fences and atomics with a scope chosen at compile time, doorbell record values,
 * the WQE control segment). Header-only CUDA.
 *
 * The rings are DOCA 3.3's: mlx5 WQEs and mlx5_cqe64 completions (doca_gpunetio_eth_def.h).
 * A CPU proxy plays the NIC on them. Functions that only compute bytes are
 * __host__ __device__ (DOCA_SOFT_ETH_HD), so host code can build the same WQEs.
 */
#ifndef DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_
#define DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_

#include <stdint.h>
#include <string.h>

#include "doca_error.h"
#include "doca_gpunetio_eth_def.h"
#include "doca_soft_cuda_target.h"

/** Ticket of a send: the index of its WQE in the send queue. */
typedef uint64_t doca_gpu_dev_eth_ticket_t;

/** Re-read `x` from memory every time. */
#define DOCA_GPUNETIO_ETH_VOLATILE(x) (*(volatile __typeof__(x) *)&(x))
/** Store `v` to `x` once, as written. */
#define DOCA_GPUNETIO_ETH_WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
/** Byte swap of a 16-bit value. */
#define DOCA_GPUNETIO_ETH_BSWAP16(x) ((uint16_t)((((uint16_t)(x)&0xffu) << 8) | (((uint16_t)(x)) >> 8)))
/** Nanoseconds per second. */
#define DOCA_GPUNETIO_NS_PER_S 1000000000ULL

/** 1 when the toolkit has the relaxed MMIO store (st.mmio.relaxed.sys, CUDA 12.2 on). */
#if DOCA_SOFT_CUDA_AT_LEAST(12, 2)
#define DOCA_GPUNETIO_ETH_HAS_STORE_RELAXED_MMIO 1
#else
#define DOCA_GPUNETIO_ETH_HAS_STORE_RELAXED_MMIO 0
#endif

/* doca-soft: functions that only compute bytes are host-callable too. */
#define DOCA_SOFT_ETH_HD __host__ __device__

/* doca-soft: mlx5 WQE opcodes rdma-core's header does not name (values as on the NIC). */
#define DOCA_SOFT_ETH_OPCODE_WAIT 0x0fu
#define DOCA_SOFT_ETH_OPCODE_DUMP 0x23u
#define DOCA_SOFT_ETH_OPCODE_ENHANCED_MPSW 0x29u
/* doca-soft: opmod of a WAIT WQE that waits for a time. */
#define DOCA_SOFT_ETH_OPMOD_WAIT_ON_TIME 0x01u

/** WQE control segment (16 bytes): BE32(opmod << 24 | index << 8 | opcode),
 * BE32(qpn << 8 | ds), signature and fm_ce_se (CQ_UPDATE = 0x08 asks for a CQE), immediate. */
struct doca_gpu_dev_eth_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
	union {
		struct {
			uint8_t signature;
			uint8_t rsvd[2];
			uint8_t fm_ce_se;
		};
		__be32 signature_fm_ce_se;
	};
	__be32 imm;
} __attribute__((__aligned__(8)));

static_assert(sizeof(struct doca_gpu_dev_eth_wqe_ctrl_seg) == 16, "ctrl seg size");

/** %globaltimer in nanoseconds. */
__device__ static inline uint64_t doca_gpu_dev_eth_query_globaltimer(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

DOCA_SOFT_ETH_HD static inline uint64_t doca_gpu_dev_eth_bswap64(uint64_t x)
{
#ifdef __CUDA_ARCH__
	uint32_t lo = (uint32_t)x;
	uint32_t hi = (uint32_t)(x >> 32);
	return ((uint64_t)__byte_perm(lo, 0, 0x0123) << 32) | (uint64_t)__byte_perm(hi, 0, 0x0123);
#else
	return __builtin_bswap64(x);
#endif
}

DOCA_SOFT_ETH_HD static inline uint32_t doca_gpu_dev_eth_bswap32(uint32_t x)
{
#ifdef __CUDA_ARCH__
	return __byte_perm(x, 0, 0x0123);
#else
	return __builtin_bswap32(x);
#endif
}

/** Lane of the calling thread in its warp. */
__device__ static inline unsigned int doca_gpu_dev_eth_get_lane_id(void)
{
	unsigned int lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
}

/** Relaxed system-scope store to memory another agent polls (a doorbell). */
__device__ static inline void doca_gpu_dev_eth_store_relaxed_mmio(uint64_t *ptr, uint64_t v)
{
	asm volatile("st.relaxed.sys.global.u64 [%0], %1;" : : "l"(ptr), "l"(v) : "memory");
}

/** One 16-byte store of a WQE segment (`val[0]`, `val[1]`). */
DOCA_SOFT_ETH_HD static inline void doca_gpu_dev_eth_store_wqe_seg(uint64_t *ptr, uint64_t *val)
{
#ifdef __CUDA_ARCH__
	asm volatile("st.v2.u64 [%0], {%1, %2};" : : "l"(ptr), "l"(val[0]), "l"(val[1]) : "memory");
#else
	memcpy(ptr, val, 16);
#endif
}

__device__ static inline uint8_t doca_gpu_dev_eth_load_relaxed_sys_global(uint8_t *ptr)
{
	uint16_t v;
	asm volatile("ld.relaxed.sys.global.u8 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
	return (uint8_t)v;
}

__device__ static inline uint16_t doca_gpu_dev_eth_load_relaxed_sys_global(uint16_t *ptr)
{
	uint16_t v;
	asm volatile("ld.relaxed.sys.global.u16 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
	return v;
}

__device__ static inline uint64_t doca_gpu_dev_eth_load_relaxed_sys_global(uint64_t *ptr)
{
	uint64_t v;
	asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	return v;
}

/* doca-soft internals: acquire loads and release stores at system scope (the CPU proxy
 * is the other side of every ring word). */
__device__ static inline uint64_t doca_priv_gpu_dev_eth_load_acquire_sys(const uint64_t *ptr)
{
	uint64_t v;
	asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(ptr) : "memory");
	return v;
}

__device__ static inline uint8_t doca_priv_gpu_dev_eth_load_acquire_sys_u8(const uint8_t *ptr)
{
	uint16_t v;
	asm volatile("ld.acquire.sys.global.u8 %0, [%1];" : "=h"(v) : "l"(ptr) : "memory");
	return (uint8_t)v;
}

__device__ static inline void doca_priv_gpu_dev_eth_store_release_sys(uint64_t *ptr, uint64_t v)
{
	asm volatile("st.release.sys.global.u64 [%0], %1;" : : "l"(ptr), "l"(v) : "memory");
}

__device__ static inline void doca_priv_gpu_dev_eth_store_relaxed_sys_u32(uint32_t *ptr, uint32_t v)
{
	asm volatile("st.relaxed.sys.global.u32 [%0], %1;" : : "l"(ptr), "r"(v) : "memory");
}

/* doca-soft: the full fence of a scope; acquire and release fences are both this one. */
template <enum doca_gpu_dev_eth_sync_scope sync_scope>
__device__ static inline void doca_priv_gpu_dev_eth_threadfence(void)
{
	if constexpr (sync_scope == DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS)
		__threadfence_system();
	else if constexpr (sync_scope == DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU)
		__threadfence();
	else
		__threadfence_block();
}

/** Acquire fence at the given scope. */
template <enum doca_gpu_dev_eth_sync_scope sync_scope>
__device__ static inline void doca_gpu_dev_eth_fence_acquire(void)
{
	doca_priv_gpu_dev_eth_threadfence<sync_scope>();
}

/** Release fence at the given scope. */
template <enum doca_gpu_dev_eth_sync_scope sync_scope>
__device__ static inline void doca_gpu_dev_eth_fence_release(void)
{
	doca_priv_gpu_dev_eth_threadfence<sync_scope>();
}

/** Atomic add returning the old value (32- or 64-bit `T`); the scope follows who shares
 * the queue (EXCLUSIVE: a plain read-modify-write). */
template <typename T, enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline T doca_gpu_dev_eth_atomic_add(T *ptr, T v)
{
	static_assert(sizeof(T) == 4 || sizeof(T) == 8, "32- or 64-bit atomics");
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		T old = *ptr;
		*ptr = old + v;
		return old;
	} else if constexpr (sizeof(T) == 8) {
		if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA)
			return (T)atomicAdd_block((unsigned long long *)ptr, (unsigned long long)v);
		else
			return (T)atomicAdd((unsigned long long *)ptr, (unsigned long long)v);
	} else {
		if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA)
			return (T)atomicAdd_block((unsigned int *)ptr, (unsigned int)v);
		else
			return (T)atomicAdd((unsigned int *)ptr, (unsigned int)v);
	}
}

/** Atomic max returning the old value; `need_fence_acquire` adds an acquire fence after. */
template <typename T, enum doca_gpu_dev_eth_resource_sharing_mode sharing, bool need_fence_acquire = false>
__device__ static inline T doca_gpu_dev_eth_atomic_max(T *ptr, T v)
{
	static_assert(sizeof(T) == 4 || sizeof(T) == 8, "32- or 64-bit atomics");
	T old;
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		old = *ptr;
		if (v > old)
			*ptr = v;
	} else if constexpr (sizeof(T) == 8) {
		if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA)
			old = (T)atomicMax_block((unsigned long long *)ptr, (unsigned long long)v);
		else
			old = (T)atomicMax((unsigned long long *)ptr, (unsigned long long)v);
	} else {
		if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA)
			old = (T)atomicMax_block((unsigned int *)ptr, (unsigned int)v);
		else
			old = (T)atomicMax((unsigned int *)ptr, (unsigned int)v);
	}
	if constexpr (need_fence_acquire)
		__threadfence();
	return old;
}

/** Atomic read (EXCLUSIVE: a plain read; otherwise a volatile one). */
template <typename T, enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline T doca_gpu_dev_eth_atomic_read(T *ptr)
{
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE)
		return *ptr;
	else
		return DOCA_GPUNETIO_ETH_VOLATILE(*ptr);
}

/** Spin lock on an int (0 = free); EXCLUSIVE marks it taken without atomics. */
template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline void doca_gpu_dev_eth_lock(int *lock)
{
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		*lock = 1;
	} else if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA) {
		while (atomicCAS_block(lock, 0, 1) != 0)
			;
		__threadfence_block();
	} else {
		while (atomicCAS(lock, 0, 1) != 0)
			;
		__threadfence();
	}
}

template <enum doca_gpu_dev_eth_resource_sharing_mode sharing>
__device__ static inline void doca_gpu_dev_eth_unlock(int *lock)
{
	if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE) {
		*lock = 0;
	} else if constexpr (sharing == DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA) {
		__threadfence_block();
		atomicExch_block(lock, 0);
	} else {
		__threadfence();
		atomicExch(lock, 0);
	}
}

/** Prints an error completion (opcode, syndromes, WQE counter) from device code. */
__device__ static inline void doca_gpu_dev_eth_print_cqe_err(struct mlx5_cqe64 *cqe64)
{
	const struct mlx5_err_cqe *e = (const struct mlx5_err_cqe *)cqe64;
	printf("doca-soft: error CQE: opcode 0x%x syndrome 0x%x vendor syndrome 0x%x wqe_counter %u\n",
	       (unsigned int)(e->op_own >> 4),
	       (unsigned int)e->syndrome,
	       (unsigned int)e->vendor_err_synd,
	       (unsigned int)DOCA_GPUNETIO_ETH_BSWAP16(e->wqe_counter));
}

/** Doorbell record value of a producer index: BE32 of its low 16 bits. */
DOCA_SOFT_ETH_HD static inline __be32 doca_gpu_dev_eth_prepare_dbr(uint32_t prod_index)
{
	return (__be32)doca_gpu_dev_eth_bswap32(prod_index & 0xffffu);
}

/** Completion doorbell record value of a consumer index: BE32 of its low 24 bits. */
DOCA_SOFT_ETH_HD static inline __be32 doca_gpu_dev_eth_prepare_cq_dbr(uint32_t cons_index)
{
	return (__be32)doca_gpu_dev_eth_bswap32(cons_index & 0xffffffu);
}

/* doca-soft internal: whether completion number `idx` is present in a ring of `cqe_num`
 * (a power of two) whose slot holds `op_own`: a valid opcode and the pass's owner bit. */
DOCA_SOFT_ETH_HD static inline bool doca_priv_gpu_dev_eth_cqe_present(uint8_t op_own, uint64_t idx, uint32_t cqe_num)
{
	return (op_own >> 4) != MLX5_CQE_INVALID && (op_own & MLX5_CQE_OWNER_MASK) == ((idx & cqe_num) ? 1 : 0);
}

/* doca-soft internal: whether completion `idx` of a ring (cqe_num a power of two) is
 * present; its op_own byte is read with acquire ordering at system scope (the proxy
 * writes op_own last, so the rest of the entry is visible after it). */
__device__ static inline bool doca_priv_gpu_dev_eth_cq_present(uint8_t *cqe_addr, uint32_t cqe_num, uint64_t idx)
{
	struct mlx5_cqe64 *c = (struct mlx5_cqe64 *)cqe_addr + (idx & (cqe_num - 1));
	return doca_priv_gpu_dev_eth_cqe_present(doca_priv_gpu_dev_eth_load_acquire_sys_u8(&c->op_own), idx, cqe_num);
}

/* doca-soft internal: how many completions from `ci` on are present, at most `limit`
 * (<= cqe_num); `have` are known present already. Completions arrive in order, so one read
 * answers when all `limit` are there, and a binary search (log2 reads) otherwise. */
__device__ static inline uint32_t doca_priv_gpu_dev_eth_cq_count(uint8_t *cqe_addr,
								  uint32_t cqe_num,
								  uint64_t ci,
								  uint32_t have,
								  uint32_t limit)
{
	if (have >= limit)
		return have;
	if (doca_priv_gpu_dev_eth_cq_present(cqe_addr, cqe_num, ci + limit - 1))
		return limit;
	uint32_t lo = have, hi = limit - 1; /* hi: known absent */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (doca_priv_gpu_dev_eth_cq_present(cqe_addr, cqe_num, ci + mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif /* DOCA_GPUNETIO_DEV_ETH_COMMON_CUH_ */
