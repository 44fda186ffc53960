/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA Flow crypto definitions (IPsec and PSP): resource, action and reformat
 * kinds, key configuration, and the PSP key bulk and IPsec sequence-number calls.
 *
 * The software runtime has no crypto engine: every call here fails with
 * DOCA_ERROR_NOT_SUPPORTED (and logs what was asked for), and Flow pipes that ask for
 * crypto actions are refused the same way.
 */
#ifndef DOCA_FLOW_CRYPTO_H_
#define DOCA_FLOW_CRYPTO_H_

#include <stdint.h>
#include <stdbool.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_flow_port;
struct doca_flow_crypto_psp_spi_key_bulk;

/* Which kind of crypto resource an action refers to. */
enum doca_flow_crypto_resource_type {
	DOCA_FLOW_CRYPTO_RESOURCE_NONE = 0,
	DOCA_FLOW_CRYPTO_RESOURCE_IPSEC_SA,
	DOCA_FLOW_CRYPTO_RESOURCE_PSP,
};

/* Encrypt or decrypt. */
enum doca_flow_crypto_action_type {
	DOCA_FLOW_CRYPTO_ACTION_NONE = 0,
	DOCA_FLOW_CRYPTO_ACTION_ENCRYPT,
	DOCA_FLOW_CRYPTO_ACTION_DECRYPT,
};

/* Header reformat that goes with a crypto action. */
enum doca_flow_crypto_encap_action_type {
	DOCA_FLOW_CRYPTO_REFORMAT_NONE = 0,
	DOCA_FLOW_CRYPTO_REFORMAT_ENCAP,
	DOCA_FLOW_CRYPTO_REFORMAT_DECAP,
};

/* Network shape of the crypto reformat header. */
enum doca_flow_crypto_encap_net_type {
	DOCA_FLOW_CRYPTO_HEADER_NONE = 0,
	DOCA_FLOW_CRYPTO_HEADER_ESP_TUNNEL,
	DOCA_FLOW_CRYPTO_HEADER_ESP_OVER_IPV4,
	DOCA_FLOW_CRYPTO_HEADER_ESP_OVER_IPV6,
	DOCA_FLOW_CRYPTO_HEADER_UDP_ESP_OVER_IPV4,
	DOCA_FLOW_CRYPTO_HEADER_UDP_ESP_OVER_IPV6,
	DOCA_FLOW_CRYPTO_HEADER_ESP_OVER_LAN,
	DOCA_FLOW_CRYPTO_HEADER_PSP_TUNNEL,
	DOCA_FLOW_CRYPTO_HEADER_PSP_OVER_IPV4,
	DOCA_FLOW_CRYPTO_HEADER_PSP_OVER_IPV6,
	DOCA_FLOW_CRYPTO_HEADER_NON_ESP_MARKER,
};

/* Key sizes. */
enum doca_flow_crypto_key_type {
	DOCA_FLOW_CRYPTO_KEY_128 = 0,
	DOCA_FLOW_CRYPTO_KEY_256,
};

/* Integrity check value lengths (8, 12 or 16 bytes). */
enum doca_flow_crypto_icv_len {
	DOCA_FLOW_CRYPTO_ICV_LENGTH_8 = 0,
	DOCA_FLOW_CRYPTO_ICV_LENGTH_12,
	DOCA_FLOW_CRYPTO_ICV_LENGTH_16,
};

/* Anti-replay window sizes (32 to 256 packets). */
enum doca_flow_crypto_replay_win_size {
	DOCA_FLOW_CRYPTO_REPLAY_WIN_SIZE_32 = 0,
	DOCA_FLOW_CRYPTO_REPLAY_WIN_SIZE_64,
	DOCA_FLOW_CRYPTO_REPLAY_WIN_SIZE_128,
	DOCA_FLOW_CRYPTO_REPLAY_WIN_SIZE_256,
};

/* What the sequence-number offload does: increment on send or anti-replay on receive. */
enum doca_flow_crypto_sn_offload_type {
	DOCA_FLOW_CRYPTO_SN_OFFLOAD_INC = 0,
	DOCA_FLOW_CRYPTO_SN_OFFLOAD_AR,
};

/* A key: its size and the words holding it. */
struct doca_flow_crypto_key_cfg {
	enum doca_flow_crypto_key_type key_type;
	uint32_t *key;
};

/* Rotate the PSP master key of a port. */
DOCA_EXPERIMENTAL doca_error_t doca_flow_crypto_psp_master_key_rotate(struct doca_flow_port *port);

/* Allocate a bulk of nr_spi_keys PSP SPI/key pairs. */
DOCA_EXPERIMENTAL doca_error_t
doca_flow_crypto_psp_spi_key_bulk_alloc(struct doca_flow_port *port,
					enum doca_flow_crypto_key_type key_type,
					uint32_t nr_spi_keys,
					struct doca_flow_crypto_psp_spi_key_bulk **spi_key_bulk);

/* Fill a bulk with generated SPIs and keys. */
DOCA_EXPERIMENTAL doca_error_t
doca_flow_crypto_psp_spi_key_bulk_generate(struct doca_flow_crypto_psp_spi_key_bulk *spi_key_bulk);

/* Read pair number spi_key_idx of a bulk. */
DOCA_EXPERIMENTAL doca_error_t
doca_flow_crypto_psp_spi_key_bulk_get(struct doca_flow_crypto_psp_spi_key_bulk *spi_key_bulk,
				      uint32_t spi_key_idx,
				      uint32_t *spi,
				      uint32_t *key);

/* Wipe one key of a bulk. */
DOCA_EXPERIMENTAL doca_error_t
doca_flow_crypto_psp_spi_key_wipe(struct doca_flow_crypto_psp_spi_key_bulk *spi_key_bulk,
				  uint32_t spi_key_idx);

/* Wipe every key of a bulk. */
DOCA_EXPERIMENTAL doca_error_t
doca_flow_crypto_psp_spi_key_bulk_clear(struct doca_flow_crypto_psp_spi_key_bulk *spi_key_bulk);

/* Free a bulk. */
DOCA_EXPERIMENTAL doca_error_t
doca_flow_crypto_psp_spi_key_bulk_free(struct doca_flow_crypto_psp_spi_key_bulk *spi_key_bulk);

/* Handle IPsec SA resource events of a port within quota microseconds. */
DOCA_EXPERIMENTAL doca_error_t doca_flow_crypto_ipsec_resource_handle(struct doca_flow_port *port,
								      uint64_t quota,
								      uint32_t max_processed_resources);

/* Set the sequence number of a shared IPsec SA (global id). */
DOCA_EXPERIMENTAL doca_error_t doca_flow_crypto_ipsec_update_sn(uint32_t shared_res_id,
								uint64_t sequence_number);

/* Set the sequence number of a shared IPsec SA of a port. */
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_crypto_ipsec_update_sn(struct doca_flow_port *port,
								     uint32_t shared_res_id,
								     uint64_t sequence_number);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_FLOW_CRYPTO_H_ */
