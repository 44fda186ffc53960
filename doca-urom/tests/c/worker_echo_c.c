/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A UROM worker plugin written in C against doca_urom_plugin.h, built by the tests to
 * prove the C plugin ABI. Commands (16 bytes: uint64_t type, uint64_t data):
 *   0 ECHO: answered with the same 16 bytes and status SUCCESS;
 *   1 HOLD: never answered (lets tests kill a worker with a command in flight);
 *   2 LOOKUP: data = a domain id; answered with that member's address (first 8 bytes)
 *     through the runtime's domain lookups, status = the lookup result;
 *   3 DELAY: answered like ECHO, but only `data` milliseconds later (at most 10 s): a
 *     command that takes time, for tests of how hosts wait;
 *   other: answered with an empty notification and status NOT_SUPPORTED.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin_exports.h"

struct echo_cmd {
	uint64_t type;
	uint64_t data;
};

struct echo_state {
	ucs_list_link_t ready;
	ucs_list_link_t later; /* struct echo_delayed, in arrival order */
};

/* A DELAY answer and when it is due. */
struct echo_delayed {
	ucs_list_link_t entry;
	uint64_t due_ns;
	struct urom_worker_notif_desc *nd;
};

static uint64_t echo_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static doca_error_t echo_open(struct urom_worker_ctx *ctx)
{
	struct echo_state *st = malloc(sizeof(*st));

	if (st == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ucs_list_head_init(&st->ready);
	ucs_list_head_init(&st->later);
	ctx->plugin_ctx = st;
	return DOCA_SUCCESS;
}

static void echo_close(struct urom_worker_ctx *ctx)
{
	struct echo_state *st = ctx->plugin_ctx;

	while (!ucs_list_is_empty(&st->ready))
		free(ucs_list_extract_head(&st->ready, struct urom_worker_notif_desc, entry));
	while (!ucs_list_is_empty(&st->later)) {
		struct echo_delayed *d = ucs_list_extract_head(&st->later, struct echo_delayed, entry);

		free(d->nd);
		free(d);
	}
	free(st);
}

static doca_error_t echo_addr(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len)
{
	static const char name[] = "echo-c";

	(void)ctx;
	if (*addr_len < sizeof(name)) {
		*addr_len = sizeof(name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(addr, name, sizeof(name));
	*addr_len = sizeof(name);
	return DOCA_SUCCESS;
}

static doca_error_t echo_worker_cmd(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list)
{
	struct echo_state *st = ctx->plugin_ctx;

	while (!ucs_list_is_empty(cmd_list)) {
		struct urom_worker_cmd_desc *cd = ucs_list_extract_head(cmd_list, struct urom_worker_cmd_desc, entry);
		struct echo_cmd cmd = {0};
		struct urom_worker_notif_desc *nd;
		int valid = cd->worker_cmd.len == sizeof(cmd);

		if (valid)
			memcpy(&cmd, cd->worker_cmd.plugin_cmd, sizeof(cmd));
		if (valid && cmd.type == 1) {
			free(cd);
			continue;
		}
		nd = malloc(sizeof(*nd) + sizeof(cmd));
		if (nd == NULL) {
			free(cd);
			return DOCA_ERROR_NO_MEMORY;
		}
		nd->dest_id = cd->dest_id;
		nd->worker_notif.type = cd->worker_cmd.type;
		nd->worker_notif.urom_context = cd->worker_cmd.urom_context;
		nd->worker_notif.reserved = 0;
		if (valid && cmd.type == 2) {
			void *addr = NULL;
			uint64_t first = 0;

			nd->worker_notif.status = doca_urom_worker_domain_addr_lookup(ctx, cmd.data, &addr);
			if (nd->worker_notif.status == DOCA_SUCCESS)
				memcpy(&first, addr, 7);
			cmd.data = first;
			nd->worker_notif.len = sizeof(cmd);
			memcpy(nd->worker_notif.plugin_notif, &cmd, sizeof(cmd));
		} else if (valid && (cmd.type == 0 || cmd.type == 3)) {
			nd->worker_notif.len = sizeof(cmd);
			nd->worker_notif.status = DOCA_SUCCESS;
			memcpy(nd->worker_notif.plugin_notif, &cmd, sizeof(cmd));
			if (cmd.type == 3) {
				struct echo_delayed *d = malloc(sizeof(*d));
				uint64_t ms = cmd.data < 10000 ? cmd.data : 10000;

				if (d == NULL) {
					free(nd);
					free(cd);
					return DOCA_ERROR_NO_MEMORY;
				}
				d->due_ns = echo_now_ns() + ms * 1000000ull;
				d->nd = nd;
				ucs_list_add_tail(&st->later, &d->entry);
				free(cd);
				continue;
			}
		} else {
			nd->worker_notif.len = 0;
			nd->worker_notif.status = valid ? DOCA_ERROR_NOT_SUPPORTED : DOCA_ERROR_INVALID_VALUE;
		}
		ucs_list_add_tail(&st->ready, &nd->entry);
		free(cd);
	}
	return DOCA_SUCCESS;
}

static doca_error_t echo_progress(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list)
{
	struct echo_state *st = ctx->plugin_ctx;
	uint64_t now = echo_now_ns();

	/* DELAY answers leave in arrival order: one due earlier than a DELAY before it waits
	 * for that one (the tests have one in flight at a time). */
	while (!ucs_list_is_empty(&st->later)) {
		struct echo_delayed *d = ucs_list_head(&st->later, struct echo_delayed, entry);

		if (d->due_ns > now)
			break;
		ucs_list_del(&d->entry);
		ucs_list_add_tail(&st->ready, &d->nd->entry);
		free(d);
	}
	if (ucs_list_is_empty(&st->ready))
		return DOCA_ERROR_EMPTY;
	while (!ucs_list_is_empty(&st->ready)) {
		struct urom_worker_notif_desc *nd = ucs_list_extract_head(&st->ready, struct urom_worker_notif_desc, entry);

		ucs_list_add_tail(notif_list, &nd->entry);
	}
	return DOCA_SUCCESS;
}

static doca_error_t echo_notif_pack(struct urom_worker_notify *notif, size_t *packed_notif_len, void *packed_notif)
{
	size_t need = sizeof(*notif) + notif->len;

	if (*packed_notif_len < need)
		return DOCA_ERROR_INITIALIZATION;
	memcpy(packed_notif, notif, need);
	*packed_notif_len = need;
	return DOCA_SUCCESS;
}

static struct urom_plugin_iface echo_iface = {
	.open = echo_open,
	.close = echo_close,
	.addr = echo_addr,
	.worker_cmd = echo_worker_cmd,
	.progress = echo_progress,
	.notif_pack = echo_notif_pack,
};

UROM_TEST_PLUGIN_EXPORTS(echo_iface)
