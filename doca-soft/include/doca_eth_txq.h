/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: Ethernet TX queue. Created on a device, configured while its context is IDLE,
 * started through doca_ctx_start (after doca_ctx_set_datapath_on_gpu).
 */
#ifndef DOCA_ETH_TXQ_H_
#define DOCA_ETH_TXQ_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_eth_txq;

/* Queue kinds. */
enum doca_eth_txq_type {
	DOCA_ETH_TXQ_TYPE_REGULAR = 0,
};

/* Who produces into the queue. */
enum doca_eth_txq_data_path_type {
	DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU = 0,
	DOCA_ETH_TXQ_DATA_PATH_TYPE_GPU = 1,
};

/* Accurate send scheduling support. */
enum doca_eth_wait_on_time_type {
	DOCA_ETH_WAIT_ON_TIME_TYPE_NONE = 0,
	DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE = 1,
	DOCA_ETH_WAIT_ON_TIME_TYPE_DPDK = 2,
};

/* Capabilities of a device. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_get_max_burst_size(const struct doca_devinfo *devinfo,
						 uint32_t max_send_buf_list_len,
						 uint16_t max_lso_header_size,
						 uint32_t *max_burst_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_get_max_send_buf_list_len(const struct doca_devinfo *devinfo,
							uint32_t *max_send_buf_list_len);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_get_max_metadata_num(const struct doca_devinfo *devinfo, uint8_t *max_metadata_num);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_is_type_supported(const struct doca_devinfo *devinfo,
						enum doca_eth_txq_type type,
						enum doca_eth_txq_data_path_type data_path_type);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_is_l3_chksum_offload_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_is_l4_chksum_offload_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_cap_get_wait_on_time_offload_supported(const struct doca_devinfo *devinfo,
								 enum doca_eth_wait_on_time_type *wait_on_time_mode);

/* Life cycle. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_create(struct doca_dev *dev, uint32_t max_burst_size, struct doca_eth_txq **eth_txq);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_destroy(struct doca_eth_txq *eth_txq);
DOCA_EXPERIMENTAL
struct doca_ctx *doca_eth_txq_as_doca_ctx(struct doca_eth_txq *eth_txq);

/* Settings (context IDLE only). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_type(struct doca_eth_txq *eth_txq, enum doca_eth_txq_type type);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_max_burst_size(struct doca_eth_txq *eth_txq, uint32_t max_burst_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_max_send_buf_list_len(struct doca_eth_txq *eth_txq, uint32_t max_send_buf_list_len);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_metadata_num(struct doca_eth_txq *eth_txq, uint8_t metadata_num);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_mss(struct doca_eth_txq *eth_txq, uint16_t mss);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_max_lso_header_size(struct doca_eth_txq *eth_txq, uint16_t max_lso_header_size);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_l3_chksum_offload(struct doca_eth_txq *eth_txq, uint8_t enable_l3_chksum);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_l4_chksum_offload(struct doca_eth_txq *eth_txq, uint8_t enable_l4_chksum);
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_set_wait_on_time_offload(struct doca_eth_txq *eth_txq);

/* After start: the wait-on-time value for a CLOCK_REALTIME time in ns
 * (big-endian seconds << 32 | nanoseconds). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_calculate_timestamp(struct doca_eth_txq *eth_txq,
					      uint64_t timestamp_ns,
					      uint64_t *wait_on_time_value);

/* After start: the queue's id (once per queue, unique per device). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_txq_apply_queue_id(struct doca_eth_txq *eth_txq, uint16_t queue_id);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_TXQ_H_ */
