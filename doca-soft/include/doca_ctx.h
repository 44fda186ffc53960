/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: the context state machine shared by every DOCA object that does work
 * (queues, UROM service/worker/domain, ...).
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_gpu;

/* Life cycle of a context. Setters work only in IDLE. */
enum doca_ctx_states {
	DOCA_CTX_STATE_IDLE = 0,
	DOCA_CTX_STATE_STARTING = 1,
	DOCA_CTX_STATE_RUNNING = 2,
	DOCA_CTX_STATE_STOPPING = 3,
};

/* Called on every state change, from inside doca_ctx_start/stop or doca_pe_progress. */
typedef void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data,
						  struct doca_ctx *ctx,
						  enum doca_ctx_states prev_state,
						  enum doca_ctx_states next_state);

/* Start; some contexts return DOCA_ERROR_IN_PROGRESS and finish inside doca_pe_progress. */
DOCA_STABLE
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/* Stop; may return DOCA_ERROR_IN_PROGRESS and finish inside doca_pe_progress. */
DOCA_STABLE
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

DOCA_STABLE
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);

DOCA_STABLE
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb);

DOCA_STABLE
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data);

/* Tasks submitted and not yet completed. */
DOCA_STABLE
doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks);

/* Run the context's data path on a GPU (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
