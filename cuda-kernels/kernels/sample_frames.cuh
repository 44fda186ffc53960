// Device-side view of the test frames shared with pktgen (examples/common/packet.rs):
// Ethernet + IPv4 + UDP, then magic "DRPG", sequence (BE64), burst (BE32), pattern bytes.
#pragma once
#include <stdint.h>

#define DOCA_RS_HEADERS_LEN 42u
#define DOCA_RS_PAYLOAD_PREFIX 16u
#define DOCA_RS_MAGIC 0x44525047u

/** The payload byte `i` of packet `seq` (same formula as pktgen's pattern_byte). */
__device__ __forceinline__ uint8_t doca_rs_pattern_byte(uint64_t seq, uint32_t i)
{
	return (uint8_t)((uint8_t)((uint8_t)seq + (uint8_t)i) * 31u + 7u);
}

__device__ __forceinline__ uint32_t doca_rs_load_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/** Sequence number of a pktgen frame of `len` bytes, or -1 when it is not one. */
__device__ __forceinline__ int64_t doca_rs_frame_seq(const uint8_t *f, uint32_t len)
{
	if (len < DOCA_RS_HEADERS_LEN + DOCA_RS_PAYLOAD_PREFIX)
		return -1;
	if (f[12] != 0x08 || f[13] != 0x00 || f[23] != 17)
		return -1;
	if (doca_rs_load_be32(f + DOCA_RS_HEADERS_LEN) != DOCA_RS_MAGIC)
		return -1;
	uint64_t seq = ((uint64_t)doca_rs_load_be32(f + DOCA_RS_HEADERS_LEN + 4) << 32) |
		       doca_rs_load_be32(f + DOCA_RS_HEADERS_LEN + 8);
	return (int64_t)(seq & 0x7fffffffffffffffull);
}

/** Rewrites sequence, burst and pattern of a frame of `len` bytes (headers untouched). */
__device__ __forceinline__ void doca_rs_write_payload(uint8_t *f, uint32_t len, uint64_t seq, uint32_t burst)
{
	uint8_t *p = f + DOCA_RS_HEADERS_LEN;
	for (int k = 0; k < 8; k++)
		p[4 + k] = (uint8_t)(seq >> (56 - 8 * k));
	for (int k = 0; k < 4; k++)
		p[12 + k] = (uint8_t)(burst >> (24 - 8 * k));
	for (uint32_t i = 0; i + DOCA_RS_HEADERS_LEN + DOCA_RS_PAYLOAD_PREFIX < len; i++)
		p[DOCA_RS_PAYLOAD_PREFIX + i] = doca_rs_pattern_byte(seq, i);
}
