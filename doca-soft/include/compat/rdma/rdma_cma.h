/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft compat: the part of librdmacm's <rdma/rdma_cma.h> that DOCA headers need,
 * for machines without librdmacm's development files.
 *
 * Found only through `-idirafter <doca-soft>/include/compat`, so an installed librdmacm
 * header always wins. doca_rdma.h needs nothing from it but the name of the CM id type;
 * programs that call the RDMA-CM API link librdmacm and therefore have its real header.
 */
#ifndef DOCA_SOFT_COMPAT_RDMA_CMA_H_
#define DOCA_SOFT_COMPAT_RDMA_CMA_H_

#include <netinet/in.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A connection-manager identifier (opaque here; librdmacm defines it). */
struct rdma_cm_id;
/* A channel CM events arrive on (opaque here). */
struct rdma_event_channel;

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_COMPAT_RDMA_CMA_H_ */
