/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft extension (not part of DOCA): what a DOCA Verbs program reads from rdma-core on
 * real hardware (ibv_query_gid, ibv_query_port), asked of the verbs context instead, since
 * doca-soft has no libibverbs.
 */
#ifndef DOCA_SOFT_VERBS_H_
#define DOCA_SOFT_VERBS_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The GID of the context's port (port 1): the GID of the device's soft NIC, which tells a
 * peer's NIC how to reach it. Every gid_index names the same GID (one port, one address).
 */
DOCA_EXPERIMENTAL doca_error_t doca_soft_verbs_query_gid(struct doca_verbs_context *verbs_ctx,
							 uint32_t gid_index,
							 struct doca_verbs_gid *gid);

/*
 * Port 1's attributes as DOCA Verbs programs use them: the LID (always 0) and the link
 * layer (rdma-core's values: 1 InfiniBand, 2 Ethernet; soft NICs are Ethernet, so programs
 * take the IPv4 address-handle path).
 */
DOCA_EXPERIMENTAL doca_error_t doca_soft_verbs_query_port(struct doca_verbs_context *verbs_ctx,
							  uint16_t *lid,
							  uint8_t *link_layer);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_VERBS_H_ */
