/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA DMA, a context (doca_dma_as_ctx) that copies memory between buffers.
 *
 * CPU data path: memcpy tasks (doca_dma_task_memcpy_*) submitted through a progress
 * engine, completed through the callbacks given to doca_dma_task_memcpy_set_conf.
 * GPU data path (doca_ctx_set_datapath_on_gpu before start): kernels enqueue copies through
 * the handle from doca_dma_get_gpu_handle; no tasks and no progress engine are needed.
 */
#ifndef DOCA_DMA_H_
#define DOCA_DMA_H_

#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_buf;
struct doca_ctx;
struct doca_task;

/* Opaque objects. */
struct doca_dma;
struct doca_dma_task_memcpy;
/* Device-side handle of a doca_dma on the GPU data path. */
struct doca_gpu_dma;

/* Completion (or error) callback of a memcpy task. */
typedef void (*doca_dma_task_memcpy_completion_cb_t)(struct doca_dma_task_memcpy *task,
						     union doca_data task_user_data,
						     union doca_data ctx_user_data);

/* ---- capabilities ------------------------------------------------------------------------ */

/* DOCA_SUCCESS when the device can run memcpy tasks. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo);

DOCA_STABLE
doca_error_t doca_dma_cap_get_max_num_tasks(struct doca_dma *dma, uint32_t *max_num_tasks);

/* Longest buffer list a memcpy task accepts. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							   uint32_t *max_buf_list_len);

/* Largest buffer a memcpy task accepts, in bytes. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size);

/* ---- life cycle ---------------------------------------------------------------------------- */

DOCA_STABLE
doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma);

DOCA_STABLE
doca_error_t doca_dma_destroy(struct doca_dma *dma);

DOCA_STABLE
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);

/* Complete tasks in submission order (1) or as they finish (0); before start. */
DOCA_EXPERIMENTAL
doca_error_t doca_dma_set_ordered_completions(struct doca_dma *dma, uint8_t ordered_completions);

DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_ordered_completions(struct doca_dma *dma, uint8_t *ordered_completions);

/* ---- memcpy tasks (CPU data path) ---------------------------------------------------------- */

/* Callbacks and number of memcpy tasks the context can hold (before start). */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma,
					   doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb,
					   uint32_t num_memcpy_tasks);

/* Take a task copying the data of src into dst (after start). */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma,
					     const struct doca_buf *src,
					     struct doca_buf *dst,
					     union doca_data user_data,
					     struct doca_dma_task_memcpy **task);

/* The generic task, for doca_task_submit / doca_task_free. */
DOCA_STABLE
struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task);

DOCA_STABLE
void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src);

DOCA_STABLE
const struct doca_buf *doca_dma_task_memcpy_get_src(const struct doca_dma_task_memcpy *task);

DOCA_STABLE
void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst);

DOCA_STABLE
struct doca_buf *doca_dma_task_memcpy_get_dst(const struct doca_dma_task_memcpy *task);

/* ---- GPU data path --------------------------------------------------------------------------- */

/* Handle for device code (after start, GPU data path only; BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_gpu_handle(struct doca_dma *dma, struct doca_gpu_dma **gpu_dma);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DMA_H_ */
