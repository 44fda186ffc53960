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

#endif /* DOCA_SOFT_CUDA_TARGET_H_ */
