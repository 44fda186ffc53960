/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The two entry points every test plugin exports, written once: UROM_TEST_PLUGIN_EXPORTS(iface)
 * defines urom_plugin_get_iface (a copy of `iface`, stamped with the API version the plugin
 * was built against) and urom_plugin_get_version (version 1).
 */
#ifndef UROM_TEST_PLUGIN_EXPORTS_H
#define UROM_TEST_PLUGIN_EXPORTS_H

#include "doca_urom_plugin.h"

doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface);
doca_error_t urom_plugin_get_version(uint64_t *version);

#define UROM_TEST_PLUGIN_EXPORTS(plugin_iface)                                                     \
	doca_error_t urom_plugin_get_iface(struct urom_plugin_iface *iface)                        \
	{                                                                                          \
		if (iface == NULL)                                                                 \
			return DOCA_ERROR_INVALID_VALUE;                                           \
		(plugin_iface).__doca_api_version = DOCA_VERSION_EXACT;                            \
		*iface = (plugin_iface);                                                           \
		return DOCA_SUCCESS;                                                               \
	}                                                                                          \
                                                                                                   \
	doca_error_t urom_plugin_get_version(uint64_t *version)                                    \
	{                                                                                          \
		if (version == NULL)                                                               \
			return DOCA_ERROR_INVALID_VALUE;                                           \
		*version = 0x01;                                                                   \
		return DOCA_SUCCESS;                                                               \
	}

#endif /* UROM_TEST_PLUGIN_EXPORTS_H */
