/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft compat: the part of librdmacm's <rdma/rdma_cma.h> that DOCA headers need,
 * for machines without librdmacm's development files.
 *
 * doca_rdma.h includes it only when the compiler cannot find an installed
 * <rdma/rdma_cma.h> (__has_include), so a real librdmacm header always wins; a program that
 * includes <rdma/rdma_cma.h> itself on such a machine adds `-idirafter <include>/compat`.
 * doca_rdma.h needs nothing from it but the name of the CM id type; programs that call the
 * RDMA-CM API link librdmacm and therefore have its real header.
 */
#ifndef DOCA_SOFT_COMPAT_RDMA_CMA_H_
#define DOCA_SOFT_COMPAT_RDMA_CMA_H_

#include <netinet/in.h>
#include <sys/socket.h>

/* rdma-core's verbs declarations, as the real header includes them (installed or compat). */
#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#else
#include "../infiniband/verbs.h"
#endif
#else
#include <infiniband/verbs.h>
#endif

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
