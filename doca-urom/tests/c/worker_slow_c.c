/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A UROM worker plugin whose open() takes long (UROM_TEST_OPEN_SLEEP_MS milliseconds, default
 * 3000): the tests use it to show that a slow worker start delays nobody else. It answers no
 * command (commands are freed).
 */
#include <stdlib.h>
#include <time.h>

#include "plugin_exports.h"

static doca_error_t slow_open(struct urom_worker_ctx *ctx)
{
	const char *v = getenv("UROM_TEST_OPEN_SLEEP_MS");
	long ms = v != NULL ? atol(v) : 3000;
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
	ctx->plugin_ctx = NULL;
	return DOCA_SUCCESS;
}

static void slow_close(struct urom_worker_ctx *ctx)
{
	(void)ctx;
}

static doca_error_t slow_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	(void)ctx;
	while (!ucs_list_is_empty(cmd_list))
		free(ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry));
	return DOCA_SUCCESS;
}

static doca_error_t slow_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	(void)ctx;
	(void)notif_list;
	return DOCA_ERROR_EMPTY;
}

static doca_error_t slow_notif_pack(struct urom_worker_notify *notif, size_t *len, void *out)
{
	(void)notif;
	(void)len;
	(void)out;
	return DOCA_ERROR_NOT_SUPPORTED;
}

static struct urom_plugin_iface slow_iface = {
	.open = slow_open,
	.close = slow_close,
	.worker_cmd = slow_worker_cmd,
	.progress = slow_progress,
	.notif_pack = slow_notif_pack,
};

UROM_TEST_PLUGIN_EXPORTS(slow_iface)
