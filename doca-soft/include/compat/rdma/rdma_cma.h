/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft compat: what DOCA 3.3's doca_rdma.h needs from librdmacm's <rdma/rdma_cma.h>
 * on machines without librdmacm: the connection-manager id type, opaque (DOCA's bridge
 * calls only take pointers to it). Written for doca-soft; it is not librdmacm's header.
 * Reached the same way as compat/infiniband/ (see doca-soft/include/README.md): through a
 * `__has_include(<rdma/rdma_cma.h>)` fallback in doca-soft's header, or with
 * `-idirafter <include>/compat`. Programs that call librdmacm need the real one.
 */
#ifndef DOCA_SOFT_COMPAT_RDMA_RDMA_CMA_H_
#define DOCA_SOFT_COMPAT_RDMA_RDMA_CMA_H_

#include "../infiniband/verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rdma_cm_id;
struct rdma_event_channel;

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_COMPAT_RDMA_RDMA_CMA_H_ */
