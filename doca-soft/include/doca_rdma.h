/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA RDMA, a context (doca_rdma_as_ctx) holding RDMA connections to peers.
 *
 * Configure it while idle (permissions, queue sizes, GRH/GID, transport, connection count,
 * data path), start it, then connect either out of band (doca_rdma_export on both sides,
 * exchange the blobs, doca_rdma_connect) or through RDMA-CM (listen / connect_to_addr,
 * with results reported through the connection callbacks inside doca_pe_progress). On the
 * GPU data path the kernels use the handle from doca_rdma_get_gpu_handle.
 *
 * Setters after doca_ctx_start fail with DOCA_ERROR_BAD_STATE.
 */
#ifndef DOCA_RDMA_H_
#define DOCA_RDMA_H_

#include <stddef.h>
#include <stdint.h>

/*
 * librdmacm's declarations (struct rdma_cm_id), as DOCA 3.3 includes them. The installed
 * header when the compiler can find one, else doca-soft's subset in compat/ (README.md,
 * "rdma-core headers"); no include flag is needed either way.
 */
#if defined(__has_include)
#if __has_include(<rdma/rdma_cma.h>)
#include <rdma/rdma_cma.h>
#else
#include "compat/rdma/rdma_cma.h"
#endif
#else
#include <rdma/rdma_cma.h>
#endif

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_ctx;
struct rdma_cm_id;

/* Opaque objects. */
struct doca_rdma;
struct doca_rdma_addr;
struct doca_rdma_connection;
/* Device-side handle of a doca_rdma on the GPU data path. */
struct doca_gpu_dev_rdma;

/* Handle of a doca_rdma on the DPA data path. */
typedef uint64_t doca_dpa_dev_rdma_t;

/* One entry of a port's GID table. */
struct doca_rdma_gid {
	uint8_t raw[DOCA_GID_BYTE_LENGTH];
};

/* Transport of the connections (DC: export/connect flow and CPU data path only). */
enum doca_rdma_transport_type {
	DOCA_RDMA_TRANSPORT_TYPE_RC = 0,
	DOCA_RDMA_TRANSPORT_TYPE_DC = 1,
};

/* Kind of address doca_rdma_addr_create parses. */
enum doca_rdma_addr_type {
	DOCA_RDMA_ADDR_TYPE_IPv4 = 0,
	DOCA_RDMA_ADDR_TYPE_IPv6 = 1,
	DOCA_RDMA_ADDR_TYPE_GID = 2,
};

/* What a completed receive carried. */
enum doca_rdma_opcode {
	DOCA_RDMA_OPCODE_RECV_SEND = 0,
	DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM = 1,
	DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM = 2,
};

/* A peer asks to connect (RDMA-CM server side); accept or reject it from here. */
typedef void (*doca_rdma_connection_request_cb_t)(struct doca_rdma_connection *rdma_connection,
						 union doca_data ctx_user_data);

/* A connection is up. */
typedef void (*doca_rdma_connection_established_cb_t)(struct doca_rdma_connection *rdma_connection,
						     union doca_data connection_user_data,
						     union doca_data ctx_user_data);

/* A connection attempt failed. */
typedef void (*doca_rdma_connection_failure_cb_t)(struct doca_rdma_connection *rdma_connection,
						 union doca_data connection_user_data,
						 union doca_data ctx_user_data);

/* The peer disconnected. */
typedef void (*doca_rdma_connection_disconnection_cb_t)(struct doca_rdma_connection *rdma_connection,
						       union doca_data connection_user_data,
						       union doca_data ctx_user_data);

/* ---- capabilities -------------------------------------------------------------------- */

/* DOCA_SUCCESS when the device can run RDMA write tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_write_is_supported(const struct doca_devinfo *devinfo);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_buf_list_len(const struct doca_devinfo *devinfo,
						     uint32_t *max_send_buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid_table_size(const struct doca_devinfo *devinfo, uint32_t *gid_table_size);

/* Copy num_entries GID table entries starting at start_index into gid_array. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid(const struct doca_devinfo *devinfo,
				   uint32_t start_index,
				   uint32_t num_entries,
				   struct doca_rdma_gid *gid_array);

/* DOCA_SUCCESS when the device supports the transport. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_transport_type_is_supported(const struct doca_devinfo *devinfo,
						       enum doca_rdma_transport_type transport_type);

/* ---- life cycle ------------------------------------------------------------------------ */

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_create(struct doca_dev *dev, struct doca_rdma **rdma);

/* BAD_STATE unless the context is stopped. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_destroy(struct doca_rdma *rdma);

DOCA_EXPERIMENTAL
struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma);

/* ---- configuration (before start) and its getters ------------------------------------- */

/* enum doca_access_flag bits; only local and RDMA access flags are accepted. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_permissions(struct doca_rdma *rdma, uint32_t *permissions);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_index(const struct doca_rdma *rdma, uint32_t *gid_index);

/* Global routing header on or off (mandatory on Ethernet). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_grh_enabled(struct doca_rdma *rdma, uint8_t grh_enabled);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_grh_enabled(const struct doca_rdma *rdma, uint8_t *grh_enabled);

/* Rounded up to a power of two. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_send_queue_size(const struct doca_rdma *rdma, uint32_t *send_queue_size);

/* Rounded up to a power of two; GPU (and DPA with SRQ) data path only. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_queue_size(const struct doca_rdma *rdma, uint32_t *recv_queue_size);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_num_connections(struct doca_rdma *rdma, uint16_t max_num_connections);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_num_connections(struct doca_rdma *rdma, uint16_t *max_num_connections);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type(const struct doca_rdma *rdma, enum doca_rdma_transport_type *transport_type);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_mtu(struct doca_rdma *rdma, enum doca_mtu_size mtu);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_mtu(const struct doca_rdma *rdma, enum doca_mtu_size *mtu);

/* Service level. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_sl(struct doca_rdma *rdma, uint32_t sl);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_sl(const struct doca_rdma *rdma, uint32_t *sl);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_connection_request_timeout(struct doca_rdma *rdma, uint16_t timeout);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_connection_request_timeout(const struct doca_rdma *rdma, uint16_t *timeout);

/* Retries after the peer reported receiver-not-ready. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_rnr_retry_count(struct doca_rdma *rdma, uint8_t rnr_retry_count);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_rnr_retry_count(const struct doca_rdma *rdma, uint8_t *rnr_retry_count);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_send_buf_list_len(struct doca_rdma *rdma, uint32_t max_send_buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_send_buf_list_len(const struct doca_rdma *rdma, uint32_t *max_send_buf_list_len);

/* ---- out-of-band connection (after start) ----------------------------------------------- */

/*
 * Start a connection: *local_rdma_conn_details points to *size bytes (owned by the context)
 * to send to the peer; *rdma_connection is the new connection. FULL when every connection
 * is in use.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_export(struct doca_rdma *rdma,
			      const void **local_rdma_conn_details,
			      size_t *local_rdma_conn_details_size,
			      struct doca_rdma_connection **rdma_connection);

/* Finish the connection with the peer's exported details; CONNECTION_ABORTED on a bad blob. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect(struct doca_rdma *rdma,
			       const void *remote_rdma_conn_details,
			       size_t remote_rdma_conn_details_size,
			       struct doca_rdma_connection *rdma_connection);

/* ---- GPU data path ------------------------------------------------------------------------ */

/* Handle for device code (after start, GPU data path only; BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gpu_handle(struct doca_rdma *rdma, struct doca_gpu_dev_rdma **gpu_rdma);

/* ---- RDMA-CM connection (after start; results through the callbacks) -------------------- */

/* Parse an address of the given type (text form) and port. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_create(enum doca_rdma_addr_type addr_type,
				   const char *address,
				   uint16_t port,
				   struct doca_rdma_addr **addr);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_destroy(struct doca_rdma_addr *addr);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_get_params(struct doca_rdma_addr *addr,
				       enum doca_rdma_addr_type *addr_type,
				       const char **address,
				       uint16_t *port);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_start_listen_to_port(struct doca_rdma *rdma, uint16_t port);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_stop_listen_to_port(struct doca_rdma *rdma, uint16_t port);

/* Connect to a listening peer; connection_user_data comes back in the callbacks. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect_to_addr(struct doca_rdma *rdma,
				       struct doca_rdma_addr *addr,
				       union doca_data connection_user_data);

/* Accept a requested connection, sending private_data_len bytes of private_data. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_accept(struct doca_rdma_connection *rdma_connection,
					 void *private_data,
					 uint8_t private_data_len);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_reject(struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_disconnect(struct doca_rdma_connection *rdma_connection);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_set_user_data(struct doca_rdma_connection *rdma_connection,
						union doca_data connection_user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_user_data(const struct doca_rdma_connection *rdma_connection,
						union doca_data *connection_user_data);

/* Index of the connection within its context (the device functions' connection_index). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_id(const struct doca_rdma_connection *rdma_connection,
					 uint32_t *connection_id);

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_addr(const struct doca_rdma_connection *rdma_connection,
					   struct doca_rdma_addr **addr);

/* Callbacks of RDMA-CM connections (request may be NULL for a pure client; before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_connection_state_callbacks(
	struct doca_rdma *rdma,
	doca_rdma_connection_request_cb_t doca_rdma_connect_request_cb,
	doca_rdma_connection_established_cb_t doca_rdma_connect_established_cb,
	doca_rdma_connection_failure_cb_t doca_rdma_connect_failure_cb,
	doca_rdma_connection_disconnection_cb_t doca_rdma_disconnect_cb);

/* ---- bridge to a program's own librdmacm connection management ---------------------------- */

/* Make a connection of this context for a CM id the program manages. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_prepare_connection(struct doca_rdma *rdma,
						 struct rdma_cm_id *cm_id,
						 struct doca_rdma_connection **rdma_connection);

/* Accept on that connection, with private data. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_accept(struct doca_rdma *rdma,
				     void *private_data,
				     uint8_t private_data_len,
				     struct doca_rdma_connection *rdma_connection);

/* Tell the context the program's CM reported the connection established. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_established(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_H_ */
