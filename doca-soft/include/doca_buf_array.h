/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: buffer arrays, a memory map cut into equal elements that GPU code
 * addresses by index (host side).
 */
#ifndef DOCA_BUF_ARRAY_H_
#define DOCA_BUF_ARRAY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf_arr;
struct doca_gpu_buf_arr;
struct doca_mmap;
struct doca_gpu;

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(size_t num_elem, struct doca_buf_arr **buf_arr);

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr);

/* Elements of elem_size bytes starting start_offset bytes into the mmap (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr,
				     struct doca_mmap *mmap,
				     size_t elem_size,
				     uint64_t start_offset);

/* Make the array usable from this GPU (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler);

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr);

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr);

/* Device-side handle (after start, with a target GPU). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_ARRAY_H_ */
