/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft compat: the small part of rdma-core's <infiniband/verbs.h> that the DOCA 3.3
 * headers need when rdma-core is not installed. Written for doca-soft from the published
 * rdma-core ABI (names, values, layouts); it is not rdma-core's header.
 *
 * How it is found (see doca-soft/include/README.md, "rdma-core headers"):
 *   - doca-soft's own headers reach it through doca_soft_mlx5.h, which includes the real
 *     <infiniband/mlx5dv.h> whenever the compiler can see one (__has_include) and this
 *     directory's copy otherwise; nothing has to be added to any include path;
 *   - a program that itself includes <infiniband/verbs.h> on a machine without rdma-core
 *     adds this directory with `-idirafter <include>/compat` (gcc, clang, bindgen) or
 *     `-Xcompiler -idirafter,<include>/compat` (nvcc): searched after the system
 *     directories, so an installed rdma-core always wins.
 *
 * What is here: the headers the real one brings in (programs rely on them transitively),
 * the big-endian integer types, the GID union, memory access flags, and forward
 * declarations of the verbs objects DOCA's host headers take pointers to. Everything
 * defined here has the real header's layout and values; doca-soft/tests/rdma_compat.rs
 * compares both wherever rdma-core is installed. There are no ibv_* functions: programs
 * that call libibverbs need the real rdma-core.
 */
#ifndef DOCA_SOFT_COMPAT_INFINIBAND_VERBS_H_
#define DOCA_SOFT_COMPAT_INFINIBAND_VERBS_H_

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* __be16/__be32/__be64: from the kernel's UAPI types where present, else defined here. */
#if defined(__has_include)
#if __has_include(<linux/types.h>)
#include <linux/types.h>
#define DOCA_SOFT_COMPAT_HAVE_LINUX_TYPES 1
#endif
#endif
#ifndef DOCA_SOFT_COMPAT_HAVE_LINUX_TYPES
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Verbs objects, opaque here (DOCA's bridge functions take pointers to them). */
struct ibv_device;
struct ibv_context;
struct ibv_pd;
struct ibv_mr;
struct ibv_cq;
struct ibv_qp;
struct ibv_srq;
struct ibv_ah;
struct ibv_wc;
struct ibv_send_wr;
struct ibv_recv_wr;
struct ibv_qp_attr;
struct ibv_port_attr;
struct ibv_comp_channel;

/* A port GID: 16 raw bytes, or the subnet prefix and interface id (both big-endian). */
union ibv_gid {
	uint8_t raw[16];
	struct {
		__be64 subnet_prefix;
		__be64 interface_id;
	} global;
};

/* Memory region access rights (ibv_reg_mr); RELAXED_ORDERING is the first optional bit. */
enum ibv_access_flags {
	IBV_ACCESS_LOCAL_WRITE = 1 << 0,
	IBV_ACCESS_REMOTE_WRITE = 1 << 1,
	IBV_ACCESS_REMOTE_READ = 1 << 2,
	IBV_ACCESS_REMOTE_ATOMIC = 1 << 3,
	IBV_ACCESS_MW_BIND = 1 << 4,
	IBV_ACCESS_ZERO_BASED = 1 << 5,
	IBV_ACCESS_ON_DEMAND = 1 << 6,
	IBV_ACCESS_HUGETLB = 1 << 7,
	IBV_ACCESS_RELAXED_ORDERING = 1 << 20,
};

/* Link layer of a port (ibv_port_attr.link_layer). */
enum {
	IBV_LINK_LAYER_UNSPECIFIED = 0,
	IBV_LINK_LAYER_INFINIBAND = 1,
	IBV_LINK_LAYER_ETHERNET = 2,
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_COMPAT_INFINIBAND_VERBS_H_ */
