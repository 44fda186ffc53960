/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: the interface between a UROM worker process and the plugins it loads.
 *
 * A plugin is a shared object that defines two functions (declared by the plugin itself):
 *   doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);
 *   doca_error_t urom_plugin_get_version(uint64_t *version);
 * Command and notification descriptors travel on ucs_list_link_t lists. Command descriptors
 * are allocated by the worker with malloc() and released by the plugin with free();
 * notification descriptors are allocated by the plugin with malloc() and released by the
 * worker with free().
 *
 * doca-soft extension (not part of the DOCA plugin interface; other runtimes ignore it): a
 * plugin may also define
 *   doca_error_t doca_soft_urom_plugin_arm(struct urom_worker_ctx *ctx, int *fd);
 * The worker calls it before it sleeps. Return DOCA_SUCCESS with *fd set to a descriptor that
 * becomes readable when the plugin has work (e.g. its own UCP worker's event descriptor, after
 * ucp_worker_arm), or to -1 when the plugin only acts on commands; return DOCA_ERROR_AGAIN
 * when work is pending now. Without it (or on any other result) the worker wakes the plugin
 * by a short timeout. A second extension,
 *   const char *doca_soft_urom_plugin_name(void);
 * returning "foo", lets the soft daemon offer a file named libfoo.so as plugin "foo" (plugin
 * names are file names without .so otherwise).
 */
#ifndef DOCA_UROM_PLUGIN_H_
#define DOCA_UROM_PLUGIN_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <ucs/datastruct/list.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct urom_worker_ctx;
struct urom_worker_notify;

/* Operations a plugin provides to the worker. */
struct urom_plugin_iface {
#ifdef DOCA_COMPAT_HELPERS
	DOCA_STRUCT_START;
#else
	size_t __doca_api_version;
#endif
	/* Allocate the plugin state and store it in ctx->plugin_ctx. */
	doca_error_t (*open)(struct urom_worker_ctx *ctx);
	/* Release the plugin state. */
	void (*close)(struct urom_worker_ctx *ctx);
	/* Copy the plugin's worker address to addr; when *addr_len is too small, store the needed
	 * length there and return DOCA_ERROR_INVALID_VALUE. */
	doca_error_t (*addr)(struct urom_worker_ctx *ctx, void *addr, size_t *addr_len);
	/* Consume the urom_worker_cmd_desc entries of cmd_list (each released with free()). */
	doca_error_t (*worker_cmd)(struct urom_worker_ctx *ctx, ucs_list_link_t *cmd_list);
	/* Append ready urom_worker_notif_desc entries (malloc'd) to notif_list; DOCA_ERROR_EMPTY
	 * when there are none. */
	doca_error_t (*progress)(struct urom_worker_ctx *ctx, ucs_list_link_t *notif_list);
	/* Serialise notif into packed_notif; *packed_notif_len is the capacity on entry and the
	 * packed size on return. */
	doca_error_t (*notif_pack)(struct urom_worker_notify *notif, size_t *packed_notif_len, void *packed_notif);
};

/* Domain information the worker serves to its plugins. */
struct urom_domain_lookups_iface {
	doca_error_t (*addr_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, void **addr);
	doca_error_t (*seg_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, uint64_t va, int *seg);
	doca_error_t (*memh_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg, size_t *len, void **memh);
	doca_error_t (*mkey_lookup)(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg, size_t *len, void **rkey);
};

/* Per-plugin context owned by the worker. */
struct urom_worker_ctx {
	struct urom_plugin_iface iface;
	struct urom_domain_lookups_iface domain_iface;
	void *plugin_ctx;
};

/* A command for a plugin; len bytes of plugin_cmd follow the header. */
struct urom_worker_cmd {
	uint64_t type;
	uint64_t urom_context;
	uint64_t len;
	uint8_t plugin_cmd[];
};

/* A command on a worker list; dest_id names the host connection it came from. */
struct urom_worker_cmd_desc {
	ucs_list_link_t entry;
	uint64_t dest_id;
	struct urom_worker_cmd worker_cmd;
};

/* A notification from a plugin; len bytes of plugin_notif follow the header. */
struct urom_worker_notify {
	uint64_t type;
	uint64_t urom_context;
	uint64_t len;
	doca_error_t status;
	uint32_t reserved;
	uint8_t plugin_notif[];
};

/* A notification on a worker list, for host connection dest_id. */
struct urom_worker_notif_desc {
	ucs_list_link_t entry;
	uint64_t dest_id;
	struct urom_worker_notify worker_notif;
};

static inline doca_error_t doca_urom_worker_domain_addr_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
							       void **addr)
{
	return ctx->domain_iface.addr_lookup(ctx, domain_id, addr);
}

static inline doca_error_t doca_urom_worker_domain_seg_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
							      uint64_t va, int *seg)
{
	return ctx->domain_iface.seg_lookup(ctx, domain_id, va, seg);
}

static inline doca_error_t doca_urom_worker_domain_memh_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
							       int seg, size_t *len, void **memh)
{
	return ctx->domain_iface.memh_lookup(ctx, domain_id, seg, len, memh);
}

static inline doca_error_t doca_urom_worker_domain_mkey_lookup(struct urom_worker_ctx *ctx, uint64_t domain_id,
							       int seg, size_t *len, void **rkey)
{
	return ctx->domain_iface.mkey_lookup(ctx, domain_id, seg, len, rkey);
}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_UROM_PLUGIN_H_ */
