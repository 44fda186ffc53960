/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: user access regions (UARs), the doorbell pages through which queues are told
 * about new work. DOCA Verbs queues created with an external UAR ring their doorbells in
 * the page allocated here.
 */
#ifndef DOCA_UAR_H_
#define DOCA_UAR_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_uar;

/* How the doorbell page is mapped. */
enum doca_uar_allocation_type {
	/* Write-combining page: whole work requests can be pushed through it (BlueFlame). */
	DOCA_UAR_ALLOCATION_TYPE_BLUEFLAME = 0,
	/* Uncached page, possibly shared with other users. */
	DOCA_UAR_ALLOCATION_TYPE_NONCACHE = 1,
	/* Uncached page of one's own (needs libibverbs 1.14.47 or newer on hardware). */
	DOCA_UAR_ALLOCATION_TYPE_NONCACHE_DEDICATED = 2,
};

/* Allocate a doorbell page of the given kind on dev. */
DOCA_EXPERIMENTAL
doca_error_t doca_uar_create(const struct doca_dev *dev,
			     enum doca_uar_allocation_type allocation_type,
			     struct doca_uar **uar);

DOCA_EXPERIMENTAL
doca_error_t doca_uar_destroy(struct doca_uar *uar);

/* Identifier of the page, as device commands name it. */
DOCA_EXPERIMENTAL
doca_error_t doca_uar_id_get(const struct doca_uar *uar, uint32_t *id);

/* Start of the mapped page. */
DOCA_EXPERIMENTAL
doca_error_t doca_uar_page_get(const struct doca_uar *uar, void **page);

/* Address of the doorbell register inside the page. */
DOCA_EXPERIMENTAL
doca_error_t doca_uar_reg_addr_get(const struct doca_uar *uar, void **reg_addr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_UAR_H_ */
