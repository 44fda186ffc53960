/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: GPU data path of an Ethernet RX queue: the device handle and GPU-specific
 * settings.
 */
#ifndef DOCA_ETH_RXQ_GPU_DATA_PATH_H_
#define DOCA_ETH_RXQ_GPU_DATA_PATH_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_eth_rxq.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu_eth_rxq;

/* After start: the handle device code receives with (NOT_SUPPORTED without a GPU data path). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_get_gpu_handle(const struct doca_eth_rxq *eth_rxq, struct doca_gpu_eth_rxq **eth_rxq_ext);

/* Pre-Hopper GPUs: multicast QP for receive (accepted; no effect in doca-soft). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_enable_mcst_qp(struct doca_eth_rxq *eth_rxq);

/* Doorbells rung by the CPU (always so in doca-soft). */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_set_uar_on_cpu(struct doca_eth_rxq *eth_rxq);

/* Memory type of the receive ring. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_set_rq_mem_type(struct doca_eth_rxq *eth_rxq, enum doca_gpu_mem_type mtype);

/* One pass of the CPU proxy. */
DOCA_EXPERIMENTAL
doca_error_t doca_eth_rxq_gpu_cpu_proxy_progress(struct doca_eth_rxq *eth_rxq);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ETH_RXQ_GPU_DATA_PATH_H_ */
