/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A broken UROM plugin: it exports the plugin entry points, but loading it crashes (its
 * constructor aborts), or, built with the file name worker_exit_c, ends the process (its
 * constructor exits). The daemon must survive finding it in UROM_PLUGIN_PATH.
 */
#include <stdlib.h>

#include "doca_urom_plugin.h"

__attribute__((constructor)) static void misbehave(void)
{
	/* The file compiled: worker_crash_c.c itself, or worker_exit_c.c including it. */
	const char *f = __BASE_FILE__;
	const char *p = f;

	for (; *p != '\0'; p++)
		if (p[0] == 'e' && p[1] == 'x' && p[2] == 'i' && p[3] == 't')
			exit(0);
	abort();
}

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);
doca_error_t urom_plugin_get_version(uint64_t *version);

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)
{
	(void)iface;
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t urom_plugin_get_version(uint64_t *version)
{
	*version = 0x01;
	return DOCA_SUCCESS;
}
