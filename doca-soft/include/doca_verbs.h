/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA Verbs, RDMA queue pairs and completion queues built by the program from
 * attribute objects, for CPU use or for export to GPU code (doca_gpu_verbs_export_qp).
 *
 * Objects: a verbs context (one per device) owns protection domains (PD), completion queues
 * (CQ), queue pairs (QP), address handles (AH attributes) and shared receive queues. Each
 * CQ/QP is described by an attribute object first (doca_verbs_cq_attr /
 * doca_verbs_qp_init_attr), created, then a QP is moved RST -> INIT -> RTR -> RTS with
 * doca_verbs_qp_modify and a doca_verbs_qp_attr carrying the fields named in the mask.
 *
 * Attribute setters return DOCA_ERROR_INVALID_VALUE for bad input; create and modify may
 * also return DOCA_ERROR_NO_MEMORY.
 */
#ifndef DOCA_VERBS_H_
#define DOCA_VERBS_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"
#include "doca_uar.h"
#include "doca_umem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_dev;
struct doca_uar;
struct doca_umem;
struct doca_dpa;
struct doca_dpa_completion;

/* Opaque DOCA Verbs objects. */
struct doca_verbs_context;
struct doca_verbs_device_attr;
struct doca_verbs_pd;
struct doca_verbs_cq_attr;
struct doca_verbs_cq;
struct doca_verbs_qp_init_attr;
struct doca_verbs_qp_attr;
struct doca_verbs_qp;
struct doca_verbs_ah_attr;
struct doca_verbs_srq_init_attr;
struct doca_verbs_srq;
struct doca_verbs_comp_channel;
struct doca_verbs_eth_sq;
struct doca_verbs_eth_rq;
struct doca_verbs_cc_group;

/* Global identifier of a port (GID), passed by value. */
struct doca_verbs_gid {
	uint8_t raw[DOCA_GID_BYTE_LENGTH];
};

/* doca_verbs_context_create flags. */
#define DOCA_VERBS_CONTEXT_CREATE_FLAGS_NONE 0

/* doca_verbs_qp_init_attr_set_qp_type values. */
#define DOCA_VERBS_QP_TYPE_RC 0x0
#define DOCA_VERBS_QP_TYPE_UC 0x1

/* Asynchronous events a context reports. */
#define DOCA_VERBS_EVENT_QP_FATAL 0
#define DOCA_VERBS_EVENT_QP_REQ_ERR 1
#define DOCA_VERBS_EVENT_QP_ACCESS_ERR 2
#define DOCA_VERBS_EVENT_CQ_ERR 3

/* Clock that completion timestamps come from. */
#define DOCA_VERBS_TS_SOURCE_DEFAULT 0
#define DOCA_VERBS_TS_SOURCE_FREE_RUNNING 1
#define DOCA_VERBS_TS_SOURCE_REAL_TIME 2

/* Bits of the attr_mask of doca_verbs_qp_modify / doca_verbs_qp_query. */
#define DOCA_VERBS_QP_ATTR_ALLOW_REMOTE_WRITE (1 << 0)
#define DOCA_VERBS_QP_ATTR_ALLOW_REMOTE_READ (1 << 1)
#define DOCA_VERBS_QP_ATTR_PKEY_INDEX (1 << 2)
#define DOCA_VERBS_QP_ATTR_MIN_RNR_TIMER (1 << 3)
#define DOCA_VERBS_QP_ATTR_PORT_NUM (1 << 4)
#define DOCA_VERBS_QP_ATTR_NEXT_STATE (1 << 5)
#define DOCA_VERBS_QP_ATTR_CURRENT_STATE (1 << 6)
#define DOCA_VERBS_QP_ATTR_PATH_MTU (1 << 7)
#define DOCA_VERBS_QP_ATTR_RQ_PSN (1 << 8)
#define DOCA_VERBS_QP_ATTR_SQ_PSN (1 << 9)
#define DOCA_VERBS_QP_ATTR_DEST_QP_NUM (1 << 10)
#define DOCA_VERBS_QP_ATTR_ACK_TIMEOUT (1 << 11)
#define DOCA_VERBS_QP_ATTR_RETRY_CNT (1 << 12)
#define DOCA_VERBS_QP_ATTR_RNR_RETRY (1 << 13)
#define DOCA_VERBS_QP_ATTR_AH_ATTR (1 << 14)
#define DOCA_VERBS_QP_ATTR_ATOMIC_MODE (1 << 15)
#define DOCA_VERBS_QP_ATTR_MAX_QP_RD_ATOMIC (1 << 16)
#define DOCA_VERBS_QP_ATTR_MAX_DEST_RD_ATOMIC (1 << 17)
#define DOCA_VERBS_QP_ATTR_CC_GROUP (1 << 18)

/* States of a queue pair. */
enum doca_verbs_qp_state {
	DOCA_VERBS_QP_STATE_RST = 0,
	DOCA_VERBS_QP_STATE_INIT = 1,
	DOCA_VERBS_QP_STATE_RTR = 2,
	DOCA_VERBS_QP_STATE_RTS = 3,
	DOCA_VERBS_QP_STATE_ERR = 4,
};

/* How an address handle reaches the peer. */
enum doca_verbs_addr_type {
	DOCA_VERBS_ADDR_TYPE_IPv4 = 0,
	DOCA_VERBS_ADDR_TYPE_IPv6 = 1,
	DOCA_VERBS_ADDR_TYPE_IB_GRH = 2,
	DOCA_VERBS_ADDR_TYPE_IB_NO_GRH = 3,
};

/* Remote atomic operations a QP accepts. */
enum doca_verbs_qp_atomic_mode {
	DOCA_VERBS_QP_ATOMIC_MODE_NONE = 0,
	DOCA_VERBS_QP_ATOMIC_MODE_IB_SPEC = 1,
	DOCA_VERBS_QP_ATOMIC_MODE_ONLY_8BYTES = 2,
	DOCA_VERBS_QP_ATOMIC_MODE_UP_TO_8BYTES = 3,
	DOCA_VERBS_QP_ATOMIC_MODE_UP_TO_16BYTES = 4,
	DOCA_VERBS_QP_ATOMIC_MODE_UP_TO_32BYTES = 5,
	DOCA_VERBS_QP_ATOMIC_MODE_UP_TO_64BYTES = 6,
	DOCA_VERBS_QP_ATOMIC_MODE_UP_TO_128BYTES = 7,
	DOCA_VERBS_QP_ATOMIC_MODE_UP_TO_256BYTES = 8,
};

/* Whether small received messages are delivered inside the CQE instead of the buffer. */
enum doca_verbs_qp_scatter_to_cqe {
	DOCA_VERBS_QP_SCATTER_TO_CQE_NONE = 0,
	DOCA_VERBS_QP_SCATTER_TO_CQE_32B = 1,
};

/* How the send doorbell record is kept (GPU and DPA data paths). */
enum doca_verbs_qp_send_dbr_mode {
	/* The doorbell record is written before each doorbell. */
	DOCA_VERBS_QP_SEND_DBR_MODE_DBR_VALID = 0,
	/* No doorbell record; software rings the doorbell register only. */
	DOCA_VERBS_QP_SEND_DBR_MODE_NO_DBR_EXT = 1,
	/* No doorbell record, internal variant (DPA). */
	DOCA_VERBS_QP_SEND_DBR_MODE_NO_DBR_INT = 2,
};

/* Size of one completion queue entry. */
enum doca_verbs_cq_entry_size {
	DOCA_VERBS_CQ_ENTRY_SIZE_64 = 0,
	DOCA_VERBS_CQ_ENTRY_SIZE_128 = 1,
};

/* Atomicity guarantee of remote atomics on a device. */
enum doca_verbs_atomic_cap {
	DOCA_VERBS_ATOMIC_CAP_NONE = 0,
	DOCA_VERBS_ATOMIC_CAP_HCA = 1,
	DOCA_VERBS_ATOMIC_CAP_GLOB = 2,
};

/* Layout of a shared receive queue. */
enum doca_verbs_srq_type {
	DOCA_VERBS_SRQ_TYPE_LINKED_LIST = 0,
	DOCA_VERBS_SRQ_TYPE_CONTIGUOUS = 1,
};

/* ---- context and protection domain ------------------------------------------------- */

/* Open a verbs context on a device (flags: DOCA_VERBS_CONTEXT_CREATE_FLAGS_*). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_context_create(struct doca_devinfo *net_dev,
				       uint32_t flags,
				       struct doca_verbs_context **verbs_ctx);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_context_destroy(struct doca_verbs_context *verbs_ctx);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_pd_create(struct doca_verbs_context *verbs_ctx, struct doca_verbs_pd **verbs_pd);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_pd_destroy(struct doca_verbs_pd *verbs_pd);

/* A doca_dev sharing this PD, for the other DOCA libraries (mmap, buffers). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_pd_as_doca_dev(struct doca_verbs_pd *verbs_pd, struct doca_dev **dev);

/* ---- device attributes --------------------------------------------------------------- */

/* Capabilities of the context's device; free them with doca_verbs_device_attr_free. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_query_device(struct doca_verbs_context *verbs_ctx,
				     struct doca_verbs_device_attr **verbs_device_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_device_attr_free(struct doca_verbs_device_attr *verbs_device_attr);

/* Outstanding RDMA reads/atomics a QP may issue. */
DOCA_EXPERIMENTAL
uint8_t doca_verbs_device_attr_get_max_qp_rd_atom(const struct doca_verbs_device_attr *verbs_device_attr);

/* Outstanding RDMA reads/atomics a QP may receive. */
DOCA_EXPERIMENTAL
uint8_t doca_verbs_device_attr_get_max_qp_init_rd_atom(const struct doca_verbs_device_attr *verbs_device_attr);

/* DOCA_SUCCESS when received data can be scattered to the CQE, DOCA_ERROR_NOT_SUPPORTED if not. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_device_attr_get_is_cqe_inline_supported(const struct doca_verbs_device_attr *verbs_device_attr);

/* DOCA_SUCCESS when the send DBR mode is supported, DOCA_ERROR_NOT_SUPPORTED if not. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_device_attr_get_is_send_dbr_mode_supported(
	const struct doca_verbs_device_attr *verbs_device_attr,
	enum doca_verbs_qp_send_dbr_mode send_dbr_mode);

DOCA_EXPERIMENTAL
enum doca_verbs_atomic_cap doca_verbs_device_attr_get_atomic_cap(const struct doca_verbs_device_attr *verbs_device_attr);

/* ---- completion queue attributes ------------------------------------------------------ */

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_create(struct doca_verbs_cq_attr **verbs_cq_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_destroy(struct doca_verbs_cq_attr *verbs_cq_attr);

/* Number of entries. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_cq_size(struct doca_verbs_cq_attr *verbs_cq_attr, uint32_t cq_size);

/* 1: the device never checks the consumer index (producers never wait). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_cq_overrun(struct doca_verbs_cq_attr *verbs_cq_attr, uint8_t overrun);

/* Entries live in this registered memory, starting umem_offset bytes in. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_external_umem(struct doca_verbs_cq_attr *verbs_cq_attr,
						  struct doca_umem *external_umem,
						  uint64_t external_umem_offset);

/* Doorbells go through this UAR. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_external_uar(struct doca_verbs_cq_attr *verbs_cq_attr,
						 struct doca_uar *external_uar);

/* 1: the program (or GPU code) polls the ring itself; the bridge data-path calls are refused. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_external_datapath_en(struct doca_verbs_cq_attr *verbs_cq_attr,
							 uint8_t external_datapath_en);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_entry_size(struct doca_verbs_cq_attr *verbs_cq_attr,
					       enum doca_verbs_cq_entry_size entry_size);

/* Completion events are signalled on this channel. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_comp_channel(struct doca_verbs_cq_attr *verbs_cq_attr,
						 struct doca_verbs_comp_channel *comp_channel);

/* Caller pointer kept with the CQ. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_cq_context(struct doca_verbs_cq_attr *verbs_cq_attr, void *cq_context);

/* DPA thread that receives this CQ's completions. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_attr_set_dpa_thread_id(struct doca_verbs_cq_attr *verbs_cq_attr, uint32_t dpa_thread_id);

/* ---- completion queue ---------------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_create(struct doca_verbs_context *verbs_ctx,
				  struct doca_verbs_cq_attr *verbs_cq_attr,
				  struct doca_verbs_cq **verbs_cq);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_cq_destroy(struct doca_verbs_cq *verbs_cq);

/* CQ number. */
DOCA_EXPERIMENTAL
uint32_t doca_verbs_cq_get_cqn(const struct doca_verbs_cq *verbs_cq);

/* Ring address, number of entries and entry size in bytes. */
DOCA_EXPERIMENTAL
void doca_verbs_cq_get_wq(struct doca_verbs_cq *verbs_cq,
			  void **cq_buf,
			  uint32_t *cq_num_entries,
			  uint8_t *cq_entry_size);

/* Doorbell register, consumer-index record and arm record. */
DOCA_EXPERIMENTAL
void doca_verbs_cq_get_dbr_addr(struct doca_verbs_cq *verbs_cq,
				uint64_t **uar_db_reg,
				uint32_t **ci_dbr,
				uint32_t **arm_dbr);

/* ---- queue pair init attributes -------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_create(struct doca_verbs_qp_init_attr **verbs_qp_init_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_destroy(struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_pd(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
					    struct doca_verbs_pd *verbs_pd);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_send_cq(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						 struct doca_verbs_cq *send_cq);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_receive_cq(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						    struct doca_verbs_cq *receive_cq);

/* Send queue size in work requests. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_sq_wr(struct doca_verbs_qp_init_attr *verbs_qp_init_attr, uint32_t sq_wr);

/* Receive queue size in work requests. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_rq_wr(struct doca_verbs_qp_init_attr *verbs_qp_init_attr, uint32_t rq_wr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_send_max_sges(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						       uint32_t send_max_sges);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_receive_max_sges(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
							  uint32_t receive_max_sges);

/* DOCA_VERBS_QP_TYPE_RC or DOCA_VERBS_QP_TYPE_UC. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_qp_type(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						 uint32_t qp_type);

/* Work queue rings (receive ring first, then send ring) live in this registered memory. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_external_umem(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						       struct doca_umem *external_umem,
						       uint64_t external_umem_offset);

/* Doorbell records live in this registered memory. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_external_dbr_umem(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
							   struct doca_umem *external_dbr_umem,
							   uint64_t external_dbr_umem_offset);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_external_uar(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						      struct doca_uar *external_uar);

/* 1: the program (or GPU code) drives the rings itself; must match the QP's CQs. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_external_datapath_en(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
							      uint8_t external_datapath_en);

/* 1: the QP may post WAIT requests on other CQs (needs the external data path). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_core_direct_master(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
							    uint8_t core_direct_master);

/* Small receives delivered in the CQE (GPU data path only). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_cqe_inline(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						    enum doca_verbs_qp_scatter_to_cqe cqe_inline);

/* How the send doorbell record is kept (GPU data path only). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_send_dbr_mode(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						       enum doca_verbs_qp_send_dbr_mode send_dbr_mode);

/* Non-zero: every send request generates a completion. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_sq_sig_all(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						    int sq_sig_all);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_max_inline_data(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
							 uint32_t max_inline_data);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_user_index(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						    uint32_t user_index);

/* Caller pointer kept with the QP. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_qp_context(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						    void *qp_context);

/* Receive from a shared receive queue instead of an own one. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_srq(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
					     struct doca_verbs_srq *srq);

/* Create the QP for a DPA data path. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_dpa(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
					     struct doca_dpa *dpa);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_send_dpa_completion(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
							     struct doca_dpa_completion *send_dpa_completion);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_receive_dpa_completion(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
								struct doca_dpa_completion *receive_dpa_completion);

/* Doorbell record memory given by umem id and offset. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_dbr_umem(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						  uint32_t dbr_umem_id,
						  uint64_t dbr_umem_offset);

/* Work queue memory given by umem id and offset. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_wq_umem(struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						 uint32_t wq_umem_id,
						 uint64_t wq_umem_offset);

/* UAR given by its id. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_uar_id(struct doca_verbs_qp_init_attr *verbs_qp_init_attr, uint32_t uar_id);

/* Protection domain given by its number. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_set_pdn(struct doca_verbs_qp_init_attr *verbs_qp_init_attr, uint32_t pdn);

/* Getters: the values the setters above stored (a single value is returned directly). */
DOCA_EXPERIMENTAL
struct doca_verbs_pd *doca_verbs_qp_init_attr_get_pd(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
struct doca_verbs_cq *doca_verbs_qp_init_attr_get_send_cq(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
struct doca_verbs_cq *doca_verbs_qp_init_attr_get_receive_cq(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_sq_wr(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_rq_wr(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_send_max_sges(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_receive_max_sges(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_qp_type(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

/* Getters of the two-part settings fill both parts. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_get_external_umem(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						       struct doca_umem **external_umem,
						       uint64_t *external_umem_offset);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_get_external_dbr_umem(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
							   struct doca_umem **external_dbr_umem,
							   uint64_t *external_dbr_umem_offset);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_get_external_uar(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						      struct doca_uar **external_uar);

DOCA_EXPERIMENTAL
uint8_t doca_verbs_qp_init_attr_get_external_datapath_en(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint8_t doca_verbs_qp_init_attr_get_core_direct_master(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint8_t doca_verbs_qp_init_attr_get_cqe_inline(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
enum doca_verbs_qp_send_dbr_mode doca_verbs_qp_init_attr_get_send_dbr_mode(
	const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
int doca_verbs_qp_init_attr_get_sq_sig_all(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_max_inline_data(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_user_index(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
void *doca_verbs_qp_init_attr_get_qp_context(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
struct doca_verbs_srq *doca_verbs_qp_init_attr_get_srq(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
struct doca_dpa *doca_verbs_qp_init_attr_get_dpa(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
struct doca_dpa_completion *doca_verbs_qp_init_attr_get_send_dpa_completion(
	const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
struct doca_dpa_completion *doca_verbs_qp_init_attr_get_receive_dpa_completion(
	const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_get_dbr_umem(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						  uint32_t *dbr_umem_id,
						  uint64_t *dbr_umem_offset);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_init_attr_get_wq_umem(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
						 uint32_t *wq_umem_id,
						 uint64_t *wq_umem_offset);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_uar_id(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_init_attr_get_pdn(const struct doca_verbs_qp_init_attr *verbs_qp_init_attr);

/* ---- queue pair attributes (doca_verbs_qp_modify) -------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_create(struct doca_verbs_qp_attr **verbs_qp_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_destroy(struct doca_verbs_qp_attr *verbs_qp_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_next_state(struct doca_verbs_qp_attr *verbs_qp_attr,
					       enum doca_verbs_qp_state next_state);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_current_state(struct doca_verbs_qp_attr *verbs_qp_attr,
						  enum doca_verbs_qp_state current_state);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_path_mtu(struct doca_verbs_qp_attr *verbs_qp_attr, enum doca_mtu_size path_mtu);

/* Packet sequence number the receive side expects first. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_rq_psn(struct doca_verbs_qp_attr *verbs_qp_attr, uint32_t rq_psn);

/* Packet sequence number the send side starts with. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_sq_psn(struct doca_verbs_qp_attr *verbs_qp_attr, uint32_t sq_psn);

/* QP number of the peer. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_dest_qp_num(struct doca_verbs_qp_attr *verbs_qp_attr, uint32_t dest_qp_num);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_allow_remote_write(struct doca_verbs_qp_attr *verbs_qp_attr,
						       int allow_remote_write);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_allow_remote_read(struct doca_verbs_qp_attr *verbs_qp_attr,
						      int allow_remote_read);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_atomic_mode(struct doca_verbs_qp_attr *verbs_qp_attr,
						enum doca_verbs_qp_atomic_mode atomic_mode);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_max_rd_atomic(struct doca_verbs_qp_attr *verbs_qp_attr, uint8_t max_rd_atomic);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_max_dest_rd_atomic(struct doca_verbs_qp_attr *verbs_qp_attr,
						       uint8_t max_dest_rd_atomic);

/* Address of the peer. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_ah_attr(struct doca_verbs_qp_attr *verbs_qp_attr,
					    struct doca_verbs_ah_attr *ah_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_pkey_index(struct doca_verbs_qp_attr *verbs_qp_attr, uint16_t pkey_index);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_port_num(struct doca_verbs_qp_attr *verbs_qp_attr, uint16_t port_num);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_ack_timeout(struct doca_verbs_qp_attr *verbs_qp_attr, uint16_t ack_timeout);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_retry_cnt(struct doca_verbs_qp_attr *verbs_qp_attr, uint16_t retry_cnt);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_rnr_retry(struct doca_verbs_qp_attr *verbs_qp_attr, uint16_t rnr_retry);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_attr_set_min_rnr_timer(struct doca_verbs_qp_attr *verbs_qp_attr, uint16_t min_rnr_timer);

/* ---- queue pair -------------------------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_create(struct doca_verbs_context *verbs_ctx,
				  struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
				  struct doca_verbs_qp **verbs_qp);

/* Apply the fields of verbs_qp_attr named by attr_mask (DOCA_VERBS_QP_ATTR_* bits). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_modify(struct doca_verbs_qp *verbs_qp, struct doca_verbs_qp_attr *verbs_qp_attr, int attr_mask);

/* Read the QP's current attributes back; *attr_mask tells which are filled in. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_query(struct doca_verbs_qp *verbs_qp,
				 struct doca_verbs_qp_attr *verbs_qp_attr,
				 struct doca_verbs_qp_init_attr *verbs_qp_init_attr,
				 int *attr_mask);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_destroy(struct doca_verbs_qp *verbs_qp);

/* QP number. */
DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_get_qpn(const struct doca_verbs_qp *verbs_qp);

/* Send and receive rings: addresses, entry counts, and the receive entry size in bytes. */
DOCA_EXPERIMENTAL
void doca_verbs_qp_get_wq(const struct doca_verbs_qp *verbs_qp,
			  void **sq_buf,
			  uint32_t *sq_num_entries,
			  void **rq_buf,
			  uint32_t *rq_num_entries,
			  uint32_t *rwqe_size_bytes);

/* Doorbell register of the QP's UAR. */
DOCA_EXPERIMENTAL
void *doca_verbs_qp_get_uar_addr(const struct doca_verbs_qp *verbs_qp);

/* Doorbell records of the QP. */
DOCA_EXPERIMENTAL
void *doca_verbs_qp_get_dbr_addr(const struct doca_verbs_qp *verbs_qp);

/* Enhanced connection establishment (ECE) options of the QP. */
DOCA_EXPERIMENTAL
uint32_t doca_verbs_qp_query_ece(struct doca_verbs_qp *verbs_qp);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_qp_set_ece(struct doca_verbs_qp *verbs_qp, uint32_t ece);

/* ---- address handle attributes ------------------------------------------------------------ */

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_create(struct doca_verbs_context *verbs_ctx, struct doca_verbs_ah_attr **verbs_ah_attr);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_destroy(struct doca_verbs_ah_attr *verbs_ah_attr);

/* GID of the peer. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_gid(struct doca_verbs_ah_attr *verbs_ah_attr, struct doca_verbs_gid gid);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_addr_type(struct doca_verbs_ah_attr *verbs_ah_attr,
					      enum doca_verbs_addr_type addr_type);

/* LID of the peer (InfiniBand). */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_dlid(struct doca_verbs_ah_attr *verbs_ah_attr, uint32_t dlid);

/* Service level. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_sl(struct doca_verbs_ah_attr *verbs_ah_attr, uint8_t sl);

/* Index of the local GID to send from. */
DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_sgid_index(struct doca_verbs_ah_attr *verbs_ah_attr, uint8_t sgid_index);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_static_rate(struct doca_verbs_ah_attr *verbs_ah_attr, uint8_t static_rate);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_hop_limit(struct doca_verbs_ah_attr *verbs_ah_attr, uint8_t hop_limit);

DOCA_EXPERIMENTAL
doca_error_t doca_verbs_ah_attr_set_traffic_class(struct doca_verbs_ah_attr *verbs_ah_attr, uint8_t traffic_class);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERBS_H_ */
