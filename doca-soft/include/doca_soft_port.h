/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft extension (not part of DOCA): counters of the software port behind a device.
 */
#ifndef DOCA_SOFT_PORT_H_
#define DOCA_SOFT_PORT_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frames seen by a port since it was opened. Drops are split by reason. */
struct doca_soft_port_counters {
	uint64_t received;          /* read from the port (outgoing copies excluded) */
	uint64_t delivered;         /* accepted by an RX queue */
	uint64_t dropped_no_match;  /* no Flow pipe entry or default queue took it */
	uint64_t dropped_by_flow;   /* a Flow DROP forward */
	uint64_t dropped_no_queue;  /* target queue id has no RX queue */
	uint64_t dropped_too_big;   /* larger than the port's max frame or the queue's packet size */
	uint64_t dropped_ring_full; /* the queue's completion ring was full */
	uint64_t dropped_stopped;   /* the queue was stopped */
	uint64_t dropped_malformed; /* truncated or inconsistent headers */
	uint64_t sent;              /* frames sent */
	uint64_t send_errors;       /* frames that failed to send */
	uint64_t dropped_truncated; /* only partly captured (a capture record cut by its snap length) */
};

/* Reads the counters of the port of dev (all zero if the port was never opened). */
DOCA_STABLE doca_error_t doca_soft_port_get_counters(const struct doca_dev *dev,
						     struct doca_soft_port_counters *counters);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_PORT_H_ */
