/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: user memory (umem) registrations: a range of host or GPU memory a device may
 * use for queue rings and doorbell records that the program allocates itself (the
 * "external umem" of DOCA Verbs CQs and QPs).
 */
#ifndef DOCA_UMEM_H_
#define DOCA_UMEM_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_gpu;
struct doca_umem;

/*
 * Register size bytes of host memory at address with dev. access_flags are enum
 * doca_access_flag bits.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_umem_create(const struct doca_dev *dev,
			      void *address,
			      size_t size,
			      uint32_t access_flags,
			      struct doca_umem **umem);

/*
 * Register size bytes of GPU memory (from doca_gpu_mem_alloc) at address with dev.
 * access_flags are enum doca_access_flag bits.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_umem_gpu_create(struct doca_gpu *gpu,
				  struct doca_dev *dev,
				  void *address,
				  size_t size,
				  uint32_t access_flags,
				  struct doca_umem **umem);

/* Drop the registration (the memory itself stays the caller's). */
DOCA_EXPERIMENTAL
doca_error_t doca_umem_destroy(struct doca_umem *umem);

/* Identifier of the registration, as device commands name it. */
DOCA_EXPERIMENTAL
doca_error_t doca_umem_get_id(const struct doca_umem *umem, uint32_t *umem_id);

DOCA_EXPERIMENTAL
doca_error_t doca_umem_get_size(const struct doca_umem *umem, uint32_t *umem_size);

DOCA_EXPERIMENTAL
doca_error_t doca_umem_get_address(const struct doca_umem *umem, void **umem_addr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_UMEM_H_ */
