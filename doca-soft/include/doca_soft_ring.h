/*
 * doca-soft: the memory layout of the Ethernet queue rings shared by the software
 * runtime's proxies (Rust, CPU side) and the device API (CUDA, GPU side).
 *
 * This is doca-soft's own layout, not an NVIDIA one. The Rust side mirrors every struct
 * (doca-soft/src/eth/ring.rs) and both sides assert the same sizes and offsets, so a change
 * here that is not made there fails to compile.
 *
 * Indices are free-running 64-bit counters; an entry index is `counter % num`. Each
 * counter sits alone in a 64-byte line because its writer (CPU proxy or GPU) differs from
 * its neighbours'.
 *
 * RX: the proxy writes entries, then publishes `cqe_pi` with release ordering; the consumer
 *     reads `cqe_pi` with acquire ordering, reads entries, then advances `cqe_ci`. The proxy
 *     drops (and counts) a frame when `cqe_pi - cqe_ci == cqe_num`.
 * TX: producers reserve descriptor indices from `sq_rsvd`, write descriptors, and publish
 *     them in order through `sq_ready` after a system-scope fence; the proxy consumes up to
 *     `sq_ready` and advances `sq_done`; completions (NOTIFY sends, errors) go to the CQ ring
 *     (`cq_pi`, consumer `cq_ci`) when completions are on the GPU.
 */
#ifndef DOCA_SOFT_RING_H_
#define DOCA_SOFT_RING_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define DOCA_SOFT_RING_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define DOCA_SOFT_RING_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Layout version; bumped on any change of the structs below. */
#define DOCA_SOFT_RING_VERSION 1

/** TX descriptor opcodes. */
#define DOCA_SOFT_TX_OP_NOP 0u
#define DOCA_SOFT_TX_OP_SEND 1u
#define DOCA_SOFT_TX_OP_WAIT 2u

/** TX descriptor flag: write a completion for this descriptor. */
#define DOCA_SOFT_TX_FLAG_NOTIFY (1u << 0)
/** TX descriptor flag: compute the IPv4 header checksum (same bit as the WQE flag). */
#define DOCA_SOFT_TX_FLAG_L3_CSUM (1u << 6)
/** TX descriptor flag: compute the UDP/TCP checksum (same bit as the WQE flag). */
#define DOCA_SOFT_TX_FLAG_L4_CSUM (1u << 7)

/** One free-running counter alone in its cache line. */
struct doca_soft_ring_index {
	uint64_t value;
	uint64_t pad[7];
};

/** RX completion: the frame in packet slot `slot`, `bytes` long, received at `timestamp_ns`. */
struct doca_soft_rx_cqe {
	uint32_t slot;
	uint32_t bytes;
	uint64_t timestamp_ns;
};

/**
 * TX descriptor. A SEND carries one or two gather segments (`addr`/`len`, then
 * `addr2`/`len2` when `len2` is non-zero); a WAIT holds the following descriptors until
 * CLOCK_REALTIME reaches `wait_on_time` (BE64 of seconds << 32 | nanoseconds).
 * `mkey`/`mkey2` are big-endian, as the device API receives them.
 */
struct doca_soft_tx_desc {
	uint64_t addr;
	uint32_t len;
	uint32_t mkey;
	uint32_t opcode;
	uint32_t flags;
	uint64_t wait_on_time;
	uint64_t addr2;
	uint32_t len2;
	uint32_t mkey2;
	uint64_t wqe_index;
	uint64_t rsvd;
};

/** TX completion for descriptor `wqe_index`; `status` is a doca_error_t (0 = sent). */
struct doca_soft_tx_cqe {
	uint64_t wqe_index;
	uint64_t timestamp_ns;
	uint32_t status;
	uint32_t bytes;
	uint64_t rsvd;
};

DOCA_SOFT_RING_ASSERT(sizeof(struct doca_soft_ring_index) == 64, "ring index line");
DOCA_SOFT_RING_ASSERT(sizeof(struct doca_soft_rx_cqe) == 16, "rx cqe size");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_rx_cqe, bytes) == 4, "rx cqe bytes");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_rx_cqe, timestamp_ns) == 8, "rx cqe ts");
DOCA_SOFT_RING_ASSERT(sizeof(struct doca_soft_tx_desc) == 64, "tx desc size");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_desc, mkey) == 12, "tx desc mkey");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_desc, opcode) == 16, "tx desc opcode");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_desc, flags) == 20, "tx desc flags");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_desc, wait_on_time) == 24, "tx desc wot");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_desc, addr2) == 32, "tx desc addr2");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_desc, len2) == 40, "tx desc len2");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_desc, wqe_index) == 48, "tx desc index");
DOCA_SOFT_RING_ASSERT(sizeof(struct doca_soft_tx_cqe) == 32, "tx cqe size");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_cqe, status) == 16, "tx cqe status");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_soft_tx_cqe, bytes) == 20, "tx cqe bytes");

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_RING_H_ */
