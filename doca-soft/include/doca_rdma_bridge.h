/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: bridges between DOCA devices/memory and rdma-core's libibverbs: a doca_dev
 * on a program's own ibv_pd, the PD behind a doca_dev, and the memory keys of DOCA buffers
 * and memory maps for use in ibv work requests.
 */
#ifndef DOCA_RDMA_BRIDGE_H_
#define DOCA_RDMA_BRIDGE_H_

#include <stdint.h>

#ifdef __linux__
/*
 * rdma-core's verbs declarations (struct ibv_pd, ibv_wc, ...), as DOCA 3.3 includes them.
 * The installed header when the compiler can find one, else doca-soft's subset in compat/
 * (README.md, "rdma-core headers"); no include flag is needed either way.
 */
#if defined(__has_include)
#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#else
#include "compat/infiniband/verbs.h"
#endif
#else
#include <infiniband/verbs.h>
#endif
#endif

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ibv_pd;
struct doca_dev;
struct doca_buf;
struct doca_mmap;

/*
 * Open a doca_dev that shares the program's protection domain pd (memory the program
 * registered on pd is then usable with DOCA). Fails for a PD DOCA obtained itself.
 */
DOCA_STABLE
doca_error_t doca_rdma_bridge_open_dev_from_pd(struct ibv_pd *pd, struct doca_dev **dev);

/* The protection domain a doca_dev uses. */
DOCA_STABLE
doca_error_t doca_rdma_bridge_get_dev_pd(const struct doca_dev *dev, struct ibv_pd **pd);

/* Memory key (host order) of a buffer's memory as registered on dev. */
DOCA_STABLE
doca_error_t doca_rdma_bridge_get_buf_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey);

/* Memory key (host order) of an mmap as registered on the device that owns pd. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_get_mmap_mkey_from_pd(const struct doca_mmap *mmap, struct ibv_pd *pd, uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_BRIDGE_H_ */
