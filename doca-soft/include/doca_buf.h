/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: doca_buf, a reference-counted window on registered memory.
 *
 * A buffer covers [head, head + len) of a memory map; its data section is a sub-range
 * [data, data + data_len) of that. Buffers can be chained into lists.
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;

/* Take one more reference; *refcount (may be NULL) receives the new count. */
DOCA_STABLE
doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount);

/* Drop one reference (*refcount, may be NULL, receives the new count); at zero the
 * buffer, with the rest of its list, returns to its inventory. */
DOCA_STABLE
doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);

DOCA_STABLE
doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount);

/* Start of the whole buffer. */
DOCA_STABLE
doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head);

/* Size of the whole buffer. */
DOCA_STABLE
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);

/* Start of the data section. */
DOCA_STABLE
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);

/* Size of the data section. */
DOCA_STABLE
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);

/* Move the data section; it must stay inside [head, head + len). */
DOCA_STABLE
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);

/* Resize the data section in place. */
DOCA_STABLE
doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len);

/* Empty the data section (data_len = 0). */
DOCA_STABLE
doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);

/* Append list2 at the end of list1 (both are list heads). */
DOCA_STABLE
doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);

/* Next element; NULL at the end of the list. */
DOCA_STABLE
doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf);

DOCA_STABLE
doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf);

/* Number of elements of the list headed by buf. */
DOCA_STABLE
doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H_ */
