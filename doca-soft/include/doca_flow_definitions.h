/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA Flow definitions: named fields of an application's own structure
 * (an opcode string, a byte offset and a length) that Flow can then match and modify,
 * built through a definitions configuration and attached to the global Flow configuration
 * with doca_flow_cfg_set_definitions (doca_flow.h). This header is separate from
 * doca_flow.h, as in DOCA 3.3.
 *
 * The software runtime has no custom fields: every call here fails with
 * DOCA_ERROR_NOT_SUPPORTED and logs one line saying so (doca_flow_definitions_destroy,
 * which returns nothing, only logs).
 */
#ifndef DOCA_FLOW_DEFINITIONS_H_
#define DOCA_FLOW_DEFINITIONS_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: the configuration a definitions object is created from, and the object. */
struct doca_flow_definitions_cfg;
struct doca_flow_definitions;

DOCA_EXPERIMENTAL doca_error_t doca_flow_definitions_cfg_create(struct doca_flow_definitions_cfg **defs_cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_definitions_cfg_destroy(struct doca_flow_definitions_cfg *defs_cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_definitions_create(struct doca_flow_definitions_cfg *defs_cfg,
							     struct doca_flow_definitions **defs);
DOCA_EXPERIMENTAL doca_error_t doca_flow_definitions_add_field(struct doca_flow_definitions *defs,
								const char *field_opcode_str,
								uint32_t field_offset,
								uint32_t field_length);
DOCA_EXPERIMENTAL void doca_flow_definitions_destroy(struct doca_flow_definitions *defs);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_FLOW_DEFINITIONS_H_ */
