/*
 * doca-soft extension: per-queue counters of the software runtime (not part of DOCA).
 */
#ifndef DOCA_SOFT_QUEUE_H_
#define DOCA_SOFT_QUEUE_H_

#include <stdint.h>

#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_eth_rxq;
struct doca_eth_txq;

/** RX queue counters. */
struct doca_soft_rxq_counters {
	uint64_t received;          /* frames the port handed to the queue */
	uint64_t delivered;         /* frames published to the completion ring */
	uint64_t dropped_too_big;   /* frames larger than the max packet size */
	uint64_t dropped_ring_full; /* frames dropped: completion ring full */
};

/** TX queue counters. */
struct doca_soft_txq_counters {
	uint64_t sent;      /* frames sent on the port */
	uint64_t completed; /* completions written (CQ entries or PE events) */
	uint64_t errors;    /* descriptors that failed */
};

/** Reads an RX queue's counters (INVALID_VALUE for NULL arguments). */
doca_error_t doca_soft_eth_rxq_get_counters(const struct doca_eth_rxq *eth_rxq,
					    struct doca_soft_rxq_counters *counters);

/** Reads a TX queue's counters (INVALID_VALUE for NULL arguments). */
doca_error_t doca_soft_eth_txq_get_counters(const struct doca_eth_txq *eth_txq,
					    struct doca_soft_txq_counters *counters);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_QUEUE_H_ */
