/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: progress engine and the generic task calls.
 *
 * A progress engine drives the contexts connected to it: completions, state changes and
 * events all happen inside doca_pe_progress, on the caller's thread.
 */
#ifndef DOCA_PE_H_
#define DOCA_PE_H_

#include <stdint.h>
#include <stdlib.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_pe;
struct doca_task;
struct doca_ctx;

/* Completion (or error) callback of a task. */
typedef void (*doca_task_completion_cb_t)(struct doca_task *task,
					  union doca_data task_user_data,
					  union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_pe_create(struct doca_pe **pe);

/* Fails with DOCA_ERROR_IN_USE while contexts are still connected. */
DOCA_STABLE
doca_error_t doca_pe_destroy(struct doca_pe *pe);

/* Run completions and pending transitions; non-zero when something progressed. */
DOCA_STABLE
uint8_t doca_pe_progress(struct doca_pe *pe);

/* Attach a context (before it starts). */
DOCA_STABLE
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

/*
 * Notification: a descriptor (doca_notification_handle_t) that becomes readable when the
 * engine has work, for applications that wait with poll/epoll instead of looping over
 * doca_pe_progress. Get the handle once; before each wait request a notification; after
 * waking clear it, then progress. DOCA_ERROR_NOT_SUPPORTED from the request means a
 * connected context cannot notify: keep polling.
 */
DOCA_STABLE
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe,
					     doca_notification_handle_t *handle);

DOCA_STABLE
doca_error_t doca_pe_request_notification(struct doca_pe *pe);

DOCA_STABLE
doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);

/* Queue a task on its context; completion arrives through doca_pe_progress. */
DOCA_STABLE
doca_error_t doca_task_submit(struct doca_task *task);

/* As doca_task_submit, but fails instead of waiting when the context is busy. */
DOCA_STABLE
doca_error_t doca_task_try_submit(struct doca_task *task);

/* Result of a completed task. */
DOCA_STABLE
doca_error_t doca_task_get_status(const struct doca_task *task);

DOCA_STABLE
void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);

DOCA_STABLE
union doca_data doca_task_get_user_data(const struct doca_task *task);

/* Context the task belongs to. */
DOCA_STABLE
struct doca_ctx *doca_task_get_ctx(const struct doca_task *task);

/* Give a completed (or never submitted) task back to its context. */
DOCA_STABLE
void doca_task_free(struct doca_task *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H_ */
