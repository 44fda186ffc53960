/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: GPU data path of an Ethernet TX queue: the device handle, GPU-specific settings,
 * the CPU proxy and the send events raised on the progress engine in CPU-completion mode.
 */
#ifndef DOCA_ETH_TXQ_GPU_DATA_PATH_H_
#define DOCA_ETH_TXQ_GPU_DATA_PATH_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_eth_txq.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu_eth_txq;
struct doca_eth_txq_gpu_event_error_send_packet;
struct doca_eth_txq_gpu_event_notify_send_packet;

/* Event callbacks (called from doca_pe_progress). */
typedef void (*doca_eth_txq_gpu_event_error_send_packet_cb_t)(
	struct doca_eth_txq_gpu_event_error_send_packet *event_error,
	union doca_data event_user_data);
typedef void (*doca_eth_txq_gpu_event_notify_send_packet_cb_t)(
	struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	union doca_data event_user_data);

/* After start: the handle device code sends with (NOT_SUPPORTED without a GPU data path). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_get_gpu_handle(const struct doca_eth_txq *eth_txq, struct doca_gpu_eth_txq **eth_txq_ext);

/* Completions go to a ring that device code polls (default: CPU events). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_set_completion_on_gpu(struct doca_eth_txq *eth_txq);

/* The application drives the CPU proxy with doca_eth_txq_gpu_cpu_proxy_progress. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_set_uar_on_cpu(struct doca_eth_txq *eth_txq);

/* Memory type of the send ring. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_set_sq_mem_type(struct doca_eth_txq *eth_txq, enum doca_gpu_mem_type mtype);

/* One pass of the CPU proxy. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_cpu_proxy_progress(struct doca_eth_txq *eth_txq);

/* Event registration (context IDLE only) and event getters. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_error_send_packet_register(
	struct doca_eth_txq *eth_txq,
	doca_eth_txq_gpu_event_error_send_packet_cb_t user_event_cb,
	union doca_data user_data);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_notify_send_packet_register(
	struct doca_eth_txq *eth_txq,
	doca_eth_txq_gpu_event_notify_send_packet_cb_t user_event_cb,
	union doca_data user_data);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_error_send_packet_get_position(
	const struct doca_eth_txq_gpu_event_error_send_packet *event_error,
	uint16_t *packet_index);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_notify_send_packet_get_position(
	const struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	uint16_t *packet_index);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_gpu_event_notify_send_packet_get_timestamp(
	const struct doca_eth_txq_gpu_event_notify_send_packet *event_notify,
	uint64_t *packet_timestamp);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_TXQ_GPU_DATA_PATH_H_ */
