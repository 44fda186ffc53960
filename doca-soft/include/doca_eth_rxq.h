/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: Ethernet RX queue. Created on a device, configured while its context is IDLE,
 * started through doca_ctx_start (after doca_ctx_set_datapath_on_gpu), then bound to a
 * DOCA Flow queue id with doca_eth_rxq_apply_queue_id.
 */
#ifndef DOCA_ETH_RXQ_H_
#define DOCA_ETH_RXQ_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_eth_rxq;
struct doca_mmap;

/* How received packets are placed in memory. */
enum doca_eth_rxq_type {
	DOCA_ETH_RXQ_TYPE_CYCLIC = 0,
	DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL = 1,
	DOCA_ETH_RXQ_TYPE_REGULAR = 2,
};

/* Who consumes the queue. */
enum doca_eth_rxq_data_path_type {
	DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU = 0,
	DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU = 1,
};

/* Capabilities of a device. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_burst_size(const struct doca_devinfo *devinfo, uint32_t *max_burst_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_packet_size(const struct doca_devinfo *devinfo, uint32_t *max_packet_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_metadata_num(const struct doca_devinfo *devinfo, uint8_t *max_metadata_num);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_packet_headroom(const struct doca_devinfo *devinfo, uint16_t *max_headroom);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_packet_tailroom(const struct doca_devinfo *devinfo, uint16_t *max_tailroom);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_get_max_recv_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_recv_buf_list_len);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_cap_is_type_supported(const struct doca_devinfo *devinfo,
						enum doca_eth_rxq_type type,
						enum doca_eth_rxq_data_path_type data_path_type);

/* Life cycle. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_create(struct doca_dev *dev,
				 uint32_t max_burst_size,
				 uint32_t max_packet_size,
				 struct doca_eth_rxq **eth_rxq);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_destroy(struct doca_eth_rxq *eth_rxq);
DOCA_EXPERIMENTAL
struct doca_ctx *doca_eth_rxq_as_doca_ctx(struct doca_eth_rxq *eth_rxq);

/* Settings (context IDLE only). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_type(struct doca_eth_rxq *eth_rxq, enum doca_eth_rxq_type type);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_max_burst_size(struct doca_eth_rxq *eth_rxq, uint32_t max_burst_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_max_packet_size(struct doca_eth_rxq *eth_rxq, uint32_t max_packet_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_metadata_num(struct doca_eth_rxq *eth_rxq, uint8_t metadata_num);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_flow_tag(struct doca_eth_rxq *eth_rxq, uint8_t enable_flow_tag);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_rx_hash(struct doca_eth_rxq *eth_rxq, uint8_t enable_rx_hash);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_packet_headroom(struct doca_eth_rxq *eth_rxq, uint16_t packet_headroom);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_packet_tailroom(struct doca_eth_rxq *eth_rxq, uint16_t packet_tailroom);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_timestamp(struct doca_eth_rxq *eth_rxq, uint8_t enable_timestamp);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_max_recv_buf_list_len(struct doca_eth_rxq *eth_rxq, uint32_t max_recv_buf_list_len);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_notification_moderation(struct doca_eth_rxq *eth_rxq,
						      uint16_t period_usec,
						      uint16_t comp_count);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_set_pkt_buf(struct doca_eth_rxq *eth_rxq,
				      struct doca_mmap *mmap,
				      uint32_t mmap_offset,
				      uint32_t mmap_len);

/* Packet buffer size a cyclic queue needs: max_burst_size x max_packet_size (plus head and
 * tail room per packet), page aligned. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_estimate_packet_buf_size(enum doca_eth_rxq_type type,
						   uint32_t rate,
						   uint16_t pkt_max_time,
						   uint32_t max_packet_size,
						   uint32_t max_burst_size,
						   uint8_t log_max_lro_pkt_sz,
						   uint16_t head_size,
						   uint16_t tail_size,
						   uint32_t *buf_size);

/* After start: bind the queue to the DOCA Flow queue id (once). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_apply_queue_id(struct doca_eth_rxq *eth_rxq, uint16_t queue_id);

/* Pre-3.1 programs: the queue's DOCA Flow id after start (one is chosen if none was applied). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_get_flow_queue_id(struct doca_eth_rxq *eth_rxq, uint16_t *flow_queue_id);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_RXQ_H_ */
