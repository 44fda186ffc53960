/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: which CUDA release's features device code may use.
 *
 * The device headers choose some instructions by the toolkit that compiles them (the
 * relaxed MMIO store of CUDA 12.2, the acquire/release fences of CUDA 12.8). A build for
 * older drivers (doca-build's older-driver recipe) compiles with nvcc 13.0 but defines
 * DOCA_BUILD_CUDA_TARGET (1000 * major + 10 * minor of the release whose driver must run
 * the code, 12000 for CUDA 12.0), which then wins over nvcc's own version.
 */
#ifndef DOCA_SOFT_CUDA_TARGET_H_
#define DOCA_SOFT_CUDA_TARGET_H_

#if defined(DOCA_BUILD_CUDA_TARGET)
/** Whether CUDA maj.min's features may be used: the target release is at least that. */
#define DOCA_SOFT_CUDA_AT_LEAST(maj, min) (DOCA_BUILD_CUDA_TARGET >= (maj) * 1000 + (min) * 10)
#elif defined(__CUDACC_VER_MAJOR__)
/** Whether CUDA maj.min's features may be used: nvcc is at least that release. */
#define DOCA_SOFT_CUDA_AT_LEAST(maj, min) \
	(__CUDACC_VER_MAJOR__ > (maj) || (__CUDACC_VER_MAJOR__ == (maj) && __CUDACC_VER_MINOR__ >= (min)))
#else
/** Not compiled by nvcc: no CUDA feature. */
#define DOCA_SOFT_CUDA_AT_LEAST(maj, min) 0
#endif

#if defined(__CUDACC__)
/*
 * Device primitives that both device API families (doca_gpunetio_dev_eth_common.cuh and
 * doca_gpunetio_dev_verbs_common.cuh) wrap under their DOCA names. They live here because
 * this is the one header both include; plain C and C++ compilers do not see them.
 */

/** %globaltimer in nanoseconds. */
__device__ static inline unsigned long long doca_soft_dev_globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/** Lane of the calling thread in its warp. */
__device__ static inline unsigned int doca_soft_dev_lane_id(void)
{
	unsigned int lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	return lane;
}

/** Byte swap of a 64-bit value (two byte permutes on the device). */
__host__ __device__ static inline unsigned long long doca_soft_dev_bswap64(unsigned long long x)
{
#ifdef __CUDA_ARCH__
	unsigned int lo = (unsigned int)x;
	unsigned int hi = (unsigned int)(x >> 32);
	return ((unsigned long long)__byte_perm(lo, 0, 0x0123) << 32) | (unsigned long long)__byte_perm(hi, 0, 0x0123);
#else
	return __builtin_bswap64(x);
#endif
}

/** Byte swap of a 32-bit value. */
__host__ __device__ static inline unsigned int doca_soft_dev_bswap32(unsigned int x)
{
#ifdef __CUDA_ARCH__
	return __byte_perm(x, 0, 0x0123);
#else
	return __builtin_bswap32(x);
#endif
}
#endif /* __CUDACC__ */

#endif /* DOCA_SOFT_CUDA_TARGET_H_ */
