/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: byte-order conversions and helpers for packing header bit fields (the
 * big-endian field types doca_be16_t/32/64 live in doca_types.h).
 */
#ifndef DOCA_BITFIELD_H_
#define DOCA_BITFIELD_H_

#ifdef __linux__
/* htons/htonl and friends, as DOCA 3.3's doca_bitfield.h provides them. */
#include <arpa/inet.h>
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Host <-> big-endian conversions, usable in constant expressions. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DOCA_HTOBE16(v) ((uint16_t)(v))
#define DOCA_HTOBE32(v) ((uint32_t)(v))
#define DOCA_HTOBE64(v) ((uint64_t)(v))
#else
#define DOCA_HTOBE16(v) ((uint16_t)__builtin_bswap16((uint16_t)(v)))
#define DOCA_HTOBE32(v) ((uint32_t)__builtin_bswap32((uint32_t)(v)))
#define DOCA_HTOBE64(v) ((uint64_t)__builtin_bswap64((uint64_t)(v)))
#endif
#define DOCA_BETOH16(v) DOCA_HTOBE16(v)
#define DOCA_BETOH32(v) DOCA_HTOBE32(v)
#define DOCA_BETOH64(v) DOCA_HTOBE64(v)

/* Mask of `width` low bits (1..63). */
#define DOCA_BITFIELD_MASK(width) ((((uint64_t)1) << (width)) - 1)

/* The `width`-bit field starting at bit `shift` of the integer v. */
#define DOCA_BITFIELD_GET(v, shift, width) (((uint64_t)(v) >> (shift)) & DOCA_BITFIELD_MASK(width))

/* v with the `width`-bit field at bit `shift` replaced by field (extra bits dropped). */
#define DOCA_BITFIELD_SET(v, shift, width, field)                                                  \
	(((uint64_t)(v) & ~(DOCA_BITFIELD_MASK(width) << (shift))) |                               \
	 (((uint64_t)(field) & DOCA_BITFIELD_MASK(width)) << (shift)))

/* Byte-array variants, for fields laid out in packed header bytes (bit 0 = LSB of byte 0). */
#define DOCA_BITFIELD_BYTE_GET(bytes, bit) ((((const uint8_t *)(bytes))[(bit) / 8] >> ((bit) % 8)) & 1u)
#define DOCA_BITFIELD_BYTE_SET(bytes, bit, on)                                                     \
	do {                                                                                       \
		uint8_t *doca_bf_p_ = &((uint8_t *)(bytes))[(bit) / 8];                            \
		if (on)                                                                            \
			*doca_bf_p_ = (uint8_t)(*doca_bf_p_ | (1u << ((bit) % 8)));                \
		else                                                                               \
			*doca_bf_p_ = (uint8_t)(*doca_bf_p_ & ~(1u << ((bit) % 8)));               \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BITFIELD_H_ */
