/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: GPUNetIO host API: the GPU handle, GPU memory, semaphores shared between
 * CPU and GPU code, and the export of DOCA Verbs queue pairs to GPU code.
 */
#ifndef DOCA_GPUNETIO_H_
#define DOCA_GPUNETIO_H_

#include <inttypes.h>
#include <stddef.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_gpunetio_verbs_def.h"
#include "doca_log.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu;
struct doca_gpu_semaphore;
struct doca_gpu_semaphore_gpu;
struct doca_dev;
/* DOCA Verbs objects (doca_verbs.h) and their GPU-exported forms. */
struct doca_verbs_qp;
struct doca_verbs_cq;
/* Host-side handle of an exported QP. */
struct doca_gpu_verbs_qp;
struct doca_gpu_verbs_cq;
/* Device-side QP and CQ descriptors (defined in doca_gpunetio_verbs_def.h). */
struct doca_gpu_dev_verbs_qp;
struct doca_gpu_dev_verbs_cq;

/* Force a fresh read (or write) of x through memory another agent may change. */
#define DOCA_GPUNETIO_VOLATILE(x) (*(volatile __typeof__(x) *)&(x))

/* State of one semaphore item, as CPU and GPU code agree on it. */
enum doca_gpu_semaphore_status {
	DOCA_GPU_SEMAPHORE_STATUS_FREE = 0,
	DOCA_GPU_SEMAPHORE_STATUS_READY = 1,
	DOCA_GPU_SEMAPHORE_STATUS_DONE = 2,
	DOCA_GPU_SEMAPHORE_STATUS_HOLD = 3,
	DOCA_GPU_SEMAPHORE_STATUS_ERROR = 4,
	DOCA_GPU_SEMAPHORE_STATUS_EXIT = 5,
};

/* Open the GPU at a PCIe address such as "17:00.0" (a CUDA context must exist). */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_create(const char *gpu_bus_id, struct doca_gpu **gpu_dev);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_destroy(struct doca_gpu *gpu_dev);

/*
 * Allocate size bytes of the given kind. alignment 0 means default, else a power of two.
 * memptr_cpu may be NULL for DOCA_GPU_MEM_TYPE_GPU; the other kinds fill both pointers.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_mem_alloc(struct doca_gpu *gpu_dev,
				size_t size,
				size_t alignment,
				enum doca_gpu_mem_type mtype,
				void **memptr_gpu,
				void **memptr_cpu);

/* Free memory from doca_gpu_mem_alloc, by its GPU pointer. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_mem_free(struct doca_gpu *gpu_dev, void *memptr_gpu);

/* dmabuf file descriptor of GPU memory; DOCA_ERROR_NOT_SUPPORTED when unavailable. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_dmabuf_fd(struct doca_gpu *gpu_dev, void *memptr_gpu, size_t size, int *dmabuf_fd);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_create(struct doca_gpu *gpu_dev, struct doca_gpu_semaphore **semaphore);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_destroy(struct doca_gpu_semaphore *semaphore);

/* Freeze the attributes and allocate the items. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_start(struct doca_gpu_semaphore *semaphore);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_stop(struct doca_gpu_semaphore *semaphore);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_memory_type(struct doca_gpu_semaphore *semaphore,
						enum doca_gpu_mem_type mtype);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_items_num(struct doca_gpu_semaphore *semaphore, uint32_t num_items);

/* Give every item a blob of nbytes of caller data, in memory of type mtype. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_custom_info(struct doca_gpu_semaphore *semaphore,
						uint32_t nbytes,
						enum doca_gpu_mem_type mtype);

/* Handle to pass to GPU code (after start). */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_gpu_handle(struct doca_gpu_semaphore *semaphore_cpu,
					       struct doca_gpu_semaphore_gpu **semaphore_gpu);

/* CPU access to an item: only for semaphores in CPU-reachable memory. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_set_status(struct doca_gpu_semaphore *semaphore_cpu,
					   uint32_t idx,
					   enum doca_gpu_semaphore_status status);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_status(struct doca_gpu_semaphore *semaphore_cpu,
					   uint32_t idx,
					   enum doca_gpu_semaphore_status *status);

DOCA_EXPERIMENTAL
doca_error_t doca_gpu_semaphore_get_custom_info_addr(struct doca_gpu_semaphore *semaphore_cpu,
						     uint32_t idx,
						     void **custom_info);

/*
 * Export a DOCA Verbs QP (created with external GPU WQ umem and its CQs) to GPU code: builds
 * the device descriptor (struct doca_gpu_dev_verbs_qp) for gpu_dev. gpu_qp_umem_dev_ptr is
 * the GPU address of the QP's WQ umem; nic_handler says who rings the doorbell (AUTO picks).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_verbs_export_qp(struct doca_gpu *gpu_dev,
				      struct doca_dev *dev,
				      struct doca_verbs_qp *qp,
				      enum doca_gpu_dev_verbs_nic_handler nic_handler,
				      void *gpu_qp_umem_dev_ptr,
				      struct doca_verbs_cq *cq_sq,
				      struct doca_verbs_cq *cq_rq,
				      struct doca_gpu_verbs_qp **qp_out);

/* Device pointer of an exported QP's descriptor, to pass to kernels. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_verbs_get_qp_dev(struct doca_gpu_verbs_qp *qp, struct doca_gpu_dev_verbs_qp **qp_gpu);

/* Release an export (before doca_verbs_qp_destroy). */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_verbs_unexport_qp(struct doca_gpu *gpu_dev, struct doca_gpu_verbs_qp *qp);

/*
 * Export a QP created outside DOCA Verbs from its raw rings and doorbells: send queue
 * (number, WQE ring and size, doorbell record, doorbell register of uar_size bytes, its CQ
 * number, CQE ring and size, CQ doorbell record), receive queue (likewise, with the size of
 * one receive WQE), the doorbell handler and whether the send DBR is skipped (NO_DBR_EXT).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_verbs_bridge_export_qp(struct doca_gpu *gpu_dev,
					     uint32_t sq_qpn,
					     void *sq_wqe_addr,
					     uint16_t sq_wqe_num,
					     uint32_t *sq_dbrec,
					     uint64_t *sq_db,
					     size_t uar_size,
					     uint32_t sq_cqn,
					     void *sq_cqe_addr,
					     uint32_t sq_cqe_num,
					     uint32_t *sq_cq_dbrec,
					     uint32_t rq_qpn,
					     void *rq_wqe_addr,
					     uint16_t rq_wqe_num,
					     uint32_t *rq_dbrec,
					     uint32_t rcv_wqe_size,
					     uint32_t rq_cqn,
					     void *rq_cqe_addr,
					     uint32_t rq_cqe_num,
					     uint32_t *rq_cq_dbrec,
					     enum doca_gpu_dev_verbs_nic_handler nic_handler,
					     uint8_t send_dbr_mode_ext,
					     struct doca_gpu_verbs_qp **qp_out);

/* *enabled = 1 when a CPU proxy rings this QP's doorbell, 0 when GPU code does. */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_verbs_cpu_proxy_enabled(struct doca_gpu_verbs_qp *qp_cpu, uint8_t *enabled);

/*
 * One CPU-proxy step: forward the producer index GPU code published to the doorbell.
 * DOCA_ERROR_NOT_SUPPORTED when GPU code rings the doorbell itself. Cheap enough for a
 * tight loop.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_gpu_verbs_cpu_proxy_progress(struct doca_gpu_verbs_qp *qp_cpu);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_H_ */
