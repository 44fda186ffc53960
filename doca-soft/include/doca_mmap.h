/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: memory maps, a memory range registered with one or more devices.
 *
 * Set everything (range, permissions, devices) while stopped; start freezes it.
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_mmap;
struct doca_dev;

DOCA_STABLE
doca_error_t doca_mmap_create(struct doca_mmap **mmap);

DOCA_STABLE
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

DOCA_STABLE
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

DOCA_STABLE
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

DOCA_STABLE
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);

DOCA_STABLE
doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* Host or GPU (nvidia-peermem style) virtual range. */
DOCA_STABLE
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/* Range backed by a dmabuf: len bytes at dmabuf_offset of the dmabuf, seen at addr. */
DOCA_STABLE
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap,
					   int dmabuf_fd,
					   void *addr,
					   size_t dmabuf_offset,
					   size_t len);

/* enum doca_access_flag bits. */
DOCA_STABLE
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

DOCA_STABLE
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

DOCA_STABLE
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

DOCA_STABLE
doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data);

/*
 * Describe a started mmap (with an RDMA access permission) for a remote peer: on success
 * *export_desc points to export_desc_len bytes, owned by the mmap, that the program sends
 * to the peer out of band. NOT_FOUND when dev was not added; NOT_PERMITTED without RDMA
 * permission.
 */
DOCA_STABLE
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap,
				   const struct doca_dev *dev,
				   const void **export_desc,
				   size_t *export_desc_len);

/*
 * Create an mmap that stands for a peer's memory, from the bytes its doca_mmap_export_rdma
 * produced. The result is usable at once (no start); user_data may be NULL.
 */
DOCA_STABLE
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data,
					  const void *export_desc,
					  size_t export_desc_len,
					  struct doca_dev *dev,
					  struct doca_mmap **mmap);

/* Memory key of the registration on dev, in host byte order (after start). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_mkey(const struct doca_mmap *mmap, const struct doca_dev *dev, uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
