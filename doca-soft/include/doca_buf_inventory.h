/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: a fixed-size pool of doca_buf objects.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf_inventory;
struct doca_buf;
struct doca_mmap;

DOCA_STABLE
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **buf_inventory);

DOCA_STABLE
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

DOCA_STABLE
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

DOCA_STABLE
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory,
						 uint32_t *num_of_elements);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements);

DOCA_STABLE
doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory,
					      union doca_data *user_data);

/*
 * Take a buffer covering [addr, addr + len) of a started mmap, with the data section
 * [data, data + data_len) inside it.
 */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory,
						struct doca_mmap *mmap,
						void *addr,
						size_t len,
						void *data,
						size_t data_len,
						struct doca_buf **buf);

/* Take a buffer whose whole range [data, data + data_len) is its data section. */
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap,
							      void *data,
							      size_t data_len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf);
}

/* Take a buffer covering [addr, addr + len) with an empty data section at addr. */
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap,
							      void *addr,
							      size_t len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
