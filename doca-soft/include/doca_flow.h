/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA Flow, the steering library: a global configuration and library
 * lifecycle, ports on devices, pipes (match templates, actions, monitors, forwards) and
 * their entries, completion callbacks, shared resources and queries.
 *
 * Versioned names. As in DOCA 3.3, the structs that may grow and the calls that take them
 * exist twice: the plain declarations below, then (doca_ctsd_flow.h, included at the end)
 * `_v1` copies plus macros that turn every later use of a plain name into the `_v1` name.
 * Code writes `struct doca_flow_match` and `doca_flow_pipe_create(...)`; the compiler sees
 * `struct doca_flow_match_v1` and `doca_flow_pipe_create_v1(...)`, the symbol the library
 * exports. LIB_FLOW_VERSION (always 1) selects the suffix.
 *
 * What the software runtime implements, and what it refuses with DOCA_ERROR_NOT_SUPPORTED
 * (each refusal logs one line naming the feature), is listed in doca-soft's crate
 * documentation (module capi::doca_flow).
 */
#ifndef DOCA_FLOW_H_
#define DOCA_FLOW_H_

#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_flow_net.h"
#include "doca_flow_crypto.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "doca_ctsd_compat_versions.h"

#ifndef LIB_FLOW_VERSION
#define LIB_FLOW_VERSION LIB_FLOW_VERSION_LATEST
#endif
#define LIB_FLOW_VERSION_1 1
#define LIB_FLOW_VERSION_LATEST LIB_FLOW_VERSION_1

/* Devices a port is built on (doca_dev.h; not included here). */
struct doca_dev;
struct doca_dev_rep;

/* Opaque objects: configurations are built with *_create and setters. */
struct doca_flow_cfg;
struct doca_flow_port_cfg;
struct doca_flow_pipe_cfg;
struct doca_flow_tune_cfg;
struct doca_flow_port;
struct doca_flow_pipe;
struct doca_flow_pipe_entry;
struct doca_flow_target;
struct doca_flow_parser;
struct doca_flow_definitions;

/* ---- constants ------------------------------------------------------------------------ */

/* Scratch metadata words, and all metadata bytes including pkt_meta. */
#define DOCA_FLOW_META_SCRATCH_PAD_MAX 10
#define DOCA_FLOW_META_MAX ((DOCA_FLOW_META_SCRATCH_PAD_MAX + 1) * 4)
/* Largest action memory one entry uses, in bytes. */
#define DOCA_FLOW_MAX_ENTRY_ACTIONS_MEM_SIZE 128
/* VLAN tags a header description carries. */
#define DOCA_FLOW_VLAN_MAX 2
/* crypto_id reserved for PSP decryption. */
#define DOCA_FLOW_PSP_DECRYPTION_ID UINT32_MAX

/* Entry-flag helpers on an lvalue. */
#define DOCA_FLOW_FLAGS_SET(flags, flag) ((flags) |= (flag))
#define DOCA_FLOW_FLAGS_UNSET(flags, flag) ((flags) &= ~(flag))
#define DOCA_FLOW_FLAGS_IS_SET(flags, flag) (((flags) & (flag)) ? 1 : 0)

/* ---- enums ---------------------------------------------------------------------------- */

/* How resources are accounted: one global pool, or pools per port. */
enum doca_flow_resource_mode {
	DOCA_FLOW_RESOURCE_MODE_SYSTEM = 0,
	DOCA_FLOW_RESOURCE_MODE_PORT,
};

/* Per-port resource pools (PORT mode). */
enum doca_flow_resource {
	DOCA_FLOW_RESOURCE_METER = 0,
	DOCA_FLOW_RESOURCE_COUNTER,
	DOCA_FLOW_RESOURCE_RSS,
	DOCA_FLOW_RESOURCE_PSP,
	DOCA_FLOW_RESOURCE_ENCAP,
	DOCA_FLOW_RESOURCE_DECAP,
	DOCA_FLOW_RESOURCE_IPSEC_SA,
};

/* Kinds of shared resources. */
enum doca_flow_shared_resource_type {
	DOCA_FLOW_SHARED_RESOURCE_METER = 0,
	DOCA_FLOW_SHARED_RESOURCE_COUNTER,
	DOCA_FLOW_SHARED_RESOURCE_RSS,
	DOCA_FLOW_SHARED_RESOURCE_PSP,
	DOCA_FLOW_SHARED_RESOURCE_ENCAP,
	DOCA_FLOW_SHARED_RESOURCE_DECAP,
	DOCA_FLOW_SHARED_RESOURCE_IPSEC_SA,
};

/* How an entry operation is pushed: at once, or held for a batch. */
enum doca_flow_entry_flags {
	DOCA_FLOW_ENTRY_FLAGS_NO_WAIT = 1u << 0,
	DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH = 1u << 1,
};

/* Pipe events of the pipe-process callback. */
enum doca_flow_pipe_op {
	DOCA_FLOW_PIPE_OP_CONGESTION_REACHED = 0,
	DOCA_FLOW_PIPE_OP_RESIZED,
	DOCA_FLOW_PIPE_OP_DESTROYED,
};

/* Outcome of a pipe event. */
enum doca_flow_pipe_status {
	DOCA_FLOW_PIPE_STATUS_SUCCESS = 1,
	DOCA_FLOW_PIPE_STATUS_ERROR,
};

/* Entry operations reported to the entry-process callback. */
enum doca_flow_entry_op {
	DOCA_FLOW_ENTRY_OP_ADD = 0,
	DOCA_FLOW_ENTRY_OP_DEL,
	DOCA_FLOW_ENTRY_OP_UPD,
	DOCA_FLOW_ENTRY_OP_AGED,
};

/* State of an entry operation. */
enum doca_flow_entry_status {
	DOCA_FLOW_ENTRY_STATUS_IN_PROCESS = 0,
	DOCA_FLOW_ENTRY_STATUS_SUCCESS,
	DOCA_FLOW_ENTRY_STATUS_ERROR,
};

/* RSS hash functions. */
enum doca_flow_rss_hash_function {
	DOCA_FLOW_RSS_HASH_FUNCTION_TOEPLITZ = 0,
	DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ,
};

/* Pipe kinds. */
enum doca_flow_pipe_type {
	DOCA_FLOW_PIPE_BASIC = 0,
	DOCA_FLOW_PIPE_CONTROL,
	DOCA_FLOW_PIPE_LPM,
	DOCA_FLOW_PIPE_CT,
	DOCA_FLOW_PIPE_ACL,
	DOCA_FLOW_PIPE_ORDERED_LIST,
	DOCA_FLOW_PIPE_HASH,
};

/* Steering domains. */
enum doca_flow_pipe_domain {
	DOCA_FLOW_PIPE_DOMAIN_DEFAULT = 0,
	DOCA_FLOW_PIPE_DOMAIN_SECURE_INGRESS,
	DOCA_FLOW_PIPE_DOMAIN_EGRESS,
	DOCA_FLOW_PIPE_DOMAIN_SECURE_EGRESS,
};

/* Meter colours (one byte). */
enum __attribute__((packed)) doca_flow_meter_color {
	DOCA_FLOW_METER_COLOR_RED = 0,
	DOCA_FLOW_METER_COLOR_YELLOW,
	DOCA_FLOW_METER_COLOR_GREEN,
};

/* VLAN shape the parser found. */
enum doca_flow_l2_meta {
	DOCA_FLOW_L2_META_NO_VLAN = 0,
	DOCA_FLOW_L2_META_MULTI_VLAN,
	DOCA_FLOW_L2_META_SINGLE_VLAN,
	DOCA_FLOW_L2_META_CUSTOM_VLAN,
};

/* L3 protocol the parser found. */
enum doca_flow_l3_meta {
	DOCA_FLOW_L3_META_NONE = 0,
	DOCA_FLOW_L3_META_IPV4,
	DOCA_FLOW_L3_META_IPV6,
};

/* L4 protocol the parser found. */
enum doca_flow_l4_meta {
	DOCA_FLOW_L4_META_NONE = 0,
	DOCA_FLOW_L4_META_TCP,
	DOCA_FLOW_L4_META_UDP,
	DOCA_FLOW_L4_META_ICMP,
	DOCA_FLOW_L4_META_ESP,
};

/* Crypto check results the parser reports. */
enum doca_flow_crypto_syndrome {
	DOCA_FLOW_CRYPTO_SYNDROME_OK = 0,
	DOCA_FLOW_CRYPTO_SYNDROME_ICV_FAIL,
	DOCA_FLOW_CRYPTO_SYNDROME_BAD_TRAILER,
};

/* How a HASH pipe maps packets to entry indexes (bits). */
enum doca_flow_pipe_hash_map_algorithm {
	DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_HASH = 1u << 0,
	DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_RANDOM = 1u << 1,
	DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_IDENTITY = 1u << 2,
	DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_ROUND_ROBIN = 1u << 3,
	DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_FLOODING = 1u << 4,
	DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_SELECT_ENABLED = 1u << 5,
};

/* TCP flag bits (struct doca_flow_header_tcp.flags). */
enum doca_flow_match_tcp_flags {
	DOCA_FLOW_MATCH_TCP_FLAG_FIN = 1u << 0,
	DOCA_FLOW_MATCH_TCP_FLAG_SYN = 1u << 1,
	DOCA_FLOW_MATCH_TCP_FLAG_RST = 1u << 2,
	DOCA_FLOW_MATCH_TCP_FLAG_PSH = 1u << 3,
	DOCA_FLOW_MATCH_TCP_FLAG_ACK = 1u << 4,
	DOCA_FLOW_MATCH_TCP_FLAG_URG = 1u << 5,
	DOCA_FLOW_MATCH_TCP_FLAG_ECE = 1u << 6,
	DOCA_FLOW_MATCH_TCP_FLAG_CWR = 1u << 7,
};

/* Which eth_vlan[] entries of a header description are valid (bits). */
enum doca_flow_l2_valid_header {
	DOCA_FLOW_L2_VALID_HEADER_VLAN_0 = 1u << 0,
	DOCA_FLOW_L2_VALID_HEADER_VLAN_1 = 1u << 1,
};

/* Comparisons of match conditions. */
enum doca_flow_compare_op {
	DOCA_FLOW_COMPARE_EQ = 0,
	DOCA_FLOW_COMPARE_NE,
	DOCA_FLOW_COMPARE_LT,
	DOCA_FLOW_COMPARE_LE,
	DOCA_FLOW_COMPARE_GT,
	DOCA_FLOW_COMPARE_GE,
};

/* Headers a push action can add. */
enum doca_flow_push_action_type {
	DOCA_FLOW_PUSH_ACTION_VLAN = 0,
};

/* Whether a resource is absent, shared (by id) or the entry's own. */
enum doca_flow_resource_type {
	DOCA_FLOW_RESOURCE_TYPE_NONE = 0,
	DOCA_FLOW_RESOURCE_TYPE_SHARED,
	DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
};

/* Forward targets of doca_flow_get_target. */
enum doca_flow_target_type {
	DOCA_FLOW_TARGET_KERNEL = 0,
};

/* Where a forward sends packets. */
enum doca_flow_fwd_type {
	DOCA_FLOW_FWD_NONE = 0,
	DOCA_FLOW_FWD_RSS,
	DOCA_FLOW_FWD_PORT,
	DOCA_FLOW_FWD_PIPE,
	DOCA_FLOW_FWD_DROP,
	DOCA_FLOW_FWD_TARGET,
	DOCA_FLOW_FWD_ORDERED_LIST_PIPE,
	DOCA_FLOW_FWD_HASH_PIPE,
	DOCA_FLOW_FWD_CHANGEABLE = 100,
};

/* RSS hash fields (outer_flags / inner_flags bits). */
enum doca_rss_type {
	DOCA_FLOW_RSS_IPV4 = 1u << 0,
	DOCA_FLOW_RSS_IPV6 = 1u << 1,
	DOCA_FLOW_RSS_UDP = 1u << 2,
	DOCA_FLOW_RSS_TCP = 1u << 3,
	DOCA_FLOW_RSS_ESP = 1u << 4,
	DOCA_FLOW_RSS_IPV4_SRC = 1u << 5,
	DOCA_FLOW_RSS_IPV4_DST = 1u << 6,
	DOCA_FLOW_RSS_IPV6_SRC = 1u << 7,
	DOCA_FLOW_RSS_IPV6_DST = 1u << 8,
	DOCA_FLOW_RSS_UDP_SRC = 1u << 9,
	DOCA_FLOW_RSS_UDP_DST = 1u << 10,
	DOCA_FLOW_RSS_TCP_SRC = 1u << 11,
	DOCA_FLOW_RSS_TCP_DST = 1u << 12,
	DOCA_FLOW_RSS_AUTO = 1u << 30,
};

/* Meter algorithms. */
enum doca_flow_meter_algorithm_type {
	DOCA_FLOW_METER_ALGORITHM_TYPE_RFC2697 = 0,
	DOCA_FLOW_METER_ALGORITHM_TYPE_RFC2698,
	DOCA_FLOW_METER_ALGORITHM_TYPE_RFC4115,
};

/* What a meter counts. */
enum doca_flow_meter_limit_type {
	DOCA_FLOW_METER_LIMIT_TYPE_BYTES = 0,
	DOCA_FLOW_METER_LIMIT_TYPE_PACKETS,
};

/* Whether a meter takes the incoming colour into account. */
enum doca_flow_meter_color_mode {
	DOCA_FLOW_METER_COLOR_MODE_BLIND = 0,
	DOCA_FLOW_METER_COLOR_MODE_AWARE,
};

/* Kinds of action descriptors. */
enum doca_flow_action_type {
	DOCA_FLOW_ACTION_AUTO = 0,
	DOCA_FLOW_ACTION_ADD,
	DOCA_FLOW_ACTION_COPY,
};

/* Kinds of ordered-list elements. */
enum doca_flow_ordered_list_element_type {
	DOCA_FLOW_ORDERED_LIST_ELEMENT_ACTIONS = 0,
	DOCA_FLOW_ORDERED_LIST_ELEMENT_MONITOR,
	DOCA_FLOW_ORDERED_LIST_ELEMENT_NAT64,
	DOCA_FLOW_ORDERED_LIST_ELEMENT_CRYPTO,
};

/* How a GENEVE option class is parsed. */
enum doca_flow_parser_geneve_opt_mode {
	DOCA_FLOW_PARSER_GENEVE_OPT_MODE_IGNORE = 0,
	DOCA_FLOW_PARSER_GENEVE_OPT_MODE_FIXED,
	DOCA_FLOW_PARSER_GENEVE_OPT_MODE_MATCHABLE,
};

/* Where a port's default miss sends packets. */
enum doca_flow_port_default_miss_type {
	DOCA_FLOW_PORT_DEFAULT_MISS_KERNEL = 0,
	DOCA_FLOW_PORT_DEFAULT_MISS_RSS,
	DOCA_FLOW_PORT_DEFAULT_MISS_DROP,
};

/* Operation states of a port. */
enum doca_flow_port_operation_state {
	DOCA_FLOW_PORT_OPERATION_STATE_ACTIVE = 0,
	DOCA_FLOW_PORT_OPERATION_STATE_ACTIVE_READY_TO_SWAP,
	DOCA_FLOW_PORT_OPERATION_STATE_STANDBY,
	DOCA_FLOW_PORT_OPERATION_STATE_UNCONNECTED,
};

/* Tuning profiles. */
enum doca_flow_tune_profile {
	DOCA_FLOW_TUNE_PROFILE_NONE = 0,
	DOCA_FLOW_TUNE_PROFILE_PIPELINE = 30,
	DOCA_FLOW_TUNE_PROFILE_FULL = 60,
};

/* ---- callbacks ------------------------------------------------------------------------ */

/* A completed entry operation (from doca_flow_entries_process, or op AGED from
 * doca_flow_aging_handle); user_ctx is the entry's usr_ctx. */
typedef void (*doca_flow_entry_process_cb)(struct doca_flow_pipe_entry *entry,
					   uint16_t pipe_queue,
					   enum doca_flow_entry_status status,
					   enum doca_flow_entry_op op,
					   void *user_ctx);

/* A pipe event; user_ctx is the pipe configuration's user context. */
typedef void (*doca_flow_pipe_process_cb)(struct doca_flow_pipe *pipe,
					  enum doca_flow_pipe_status status,
					  enum doca_flow_pipe_op op,
					  void *user_ctx);

/* A shared resource was unbound from a port or pipe. */
typedef void (*doca_flow_shared_resource_unbind_cb)(enum doca_flow_shared_resource_type,
						    uint32_t shared_resource_id,
						    void *bindable_obj);

/* Resize: the pipe's new entry capacity. */
typedef doca_error_t (*doca_flow_pipe_resize_nr_entries_changed_cb)(void *pipe_user_ctx,
								     uint32_t nr_entries);

/* Resize: one entry reached its new place; it may swap its user context. */
typedef doca_error_t (*doca_flow_pipe_resize_entry_relocate_cb)(void *pipe_user_ctx,
								 uint16_t pipe_queue,
								 void *entry_user_ctx,
								 void **new_entry_user_ctx);

/* ---- data descriptors ----------------------------------------------------------------- */

/* RSS: hash fields, target queue ids (as given to doca_eth_rxq_apply_queue_id), hash. */
struct doca_flow_resource_rss_cfg {
	uint32_t outer_flags;
	uint32_t inner_flags;
	uint16_t *queues_array;
	int nr_queues;
	enum doca_flow_rss_hash_function rss_hash_func;
};

/* Programmable packet metadata: set by one pipe's actions, matched by a later pipe. */
struct doca_flow_meta {
	doca_be32_t pkt_meta;
	doca_be32_t u32[DOCA_FLOW_META_SCRATCH_PAD_MAX];
};

/* What the parser found in a packet (match only). */
struct doca_flow_parser_meta {
	uint16_t port_id;
	doca_be16_t random;
	uint8_t ipsec_syndrome;
	uint8_t ipsec_ar_syndrome;
	uint8_t psp_syndrome;
	enum doca_flow_meter_color meter_color;
	enum doca_flow_l2_meta outer_l2_type;
	enum doca_flow_l3_meta outer_l3_type;
	enum doca_flow_l4_meta outer_l4_type;
	enum doca_flow_l2_meta inner_l2_type;
	enum doca_flow_l3_meta inner_l3_type;
	enum doca_flow_l4_meta inner_l4_type;
	uint8_t outer_ip_fragmented;
	uint8_t inner_ip_fragmented;
	uint8_t outer_l3_ok;
	uint8_t outer_ip4_checksum_ok;
	uint8_t outer_l4_ok;
	uint8_t outer_l4_checksum_ok;
	uint8_t inner_l3_ok;
	uint8_t inner_ip4_checksum_ok;
	uint8_t inner_l4_ok;
	uint8_t inner_l4_checksum_ok;
};

/* One layer of headers; l3_type and l4_type_ext say which union members are meant. */
struct doca_flow_header_format {
	struct doca_flow_header_eth eth;
	uint16_t l2_valid_headers;
	struct doca_flow_header_eth_vlan eth_vlan[DOCA_FLOW_VLAN_MAX];
	enum doca_flow_l3_type l3_type;
	union {
		struct doca_flow_header_ip4 ip4;
		struct doca_flow_header_ip6 ip6;
	};
	enum doca_flow_l4_type_ext l4_type_ext;
	union {
		struct doca_flow_header_icmp icmp;
		struct doca_flow_header_udp udp;
		struct doca_flow_header_tcp tcp;
		struct doca_flow_header_l4_port transport;
		struct doca_flow_header_roce_v2 roce_v2;
	};
};

/* Header fields doca_flow_port_calc_entropy hashes. */
struct doca_flow_entropy_format {
	enum doca_flow_l3_type l3_type;
	union {
		struct doca_flow_header_ip4 ip4;
		struct doca_flow_header_ip6 ip6;
	};
	bool is_transport;
	struct doca_flow_header_l4_port transport;
};

/* A match: template, mask or per-entry value. */
struct doca_flow_match {
	struct doca_flow_meta meta;
	struct doca_flow_parser_meta parser_meta;
	struct doca_flow_header_format outer;
	struct doca_flow_tun tun;
	struct doca_flow_header_format inner;
};

/* A field named by a dotted path ("outer.ipv4.ttl") and a bit offset inside it. */
struct doca_flow_desc_field {
	const char *field_string;
	uint32_t bit_offset;
};

/* Compare field a with field b over width bits. */
struct doca_flow_match_condition {
	enum doca_flow_compare_op operation;
	union {
		struct {
			struct doca_flow_desc_field a;
			struct doca_flow_desc_field b;
			uint32_t width;
		} field_op;
	};
};

/* Headers an encap action adds. */
struct doca_flow_encap_action {
	struct doca_flow_header_format outer;
	struct doca_flow_tun tun;
};

/* A VLAN tag to push. */
struct doca_flow_push_vlan_action {
	doca_be16_t eth_type;
	struct doca_flow_header_eth_vlan vlan_hdr;
};

/* A header to push (VLAN only). */
struct doca_flow_push_action {
	enum doca_flow_push_action_type type;
	union {
		struct doca_flow_push_vlan_action vlan;
	};
};

/* NAT64: the L3 type of the packet before translation. */
struct doca_flow_nat64_action {
	enum doca_flow_l3_type original_l3_type;
};

/* Encrypt or decrypt with a crypto resource. */
struct doca_flow_crypto_action {
	enum doca_flow_crypto_action_type action_type;
	enum doca_flow_crypto_resource_type resource_type;
	union {
		struct {
			bool sn_en;
		} ipsec_sa;
	};
	uint32_t crypto_id;
};

/* Reformat header of a crypto action. */
struct doca_flow_crypto_encap_action {
	enum doca_flow_crypto_encap_action_type action_type;
	enum doca_flow_crypto_encap_net_type net_type;
	uint16_t icv_size;
	uint16_t data_size;
	uint8_t encap_data[DOCA_FLOW_CRYPTO_HEADER_LEN_MAX];
};

/* Encap configuration (L2 or L3 tunnel). */
struct doca_flow_resource_encap_cfg {
	bool is_l2;
	struct doca_flow_encap_action encap;
};

/* Decap configuration: for an L3 decap, the L2 header to rebuild. */
struct doca_flow_resource_decap_cfg {
	bool is_l2;
	struct doca_flow_header_eth eth;
	uint16_t l2_valid_headers;
	struct doca_flow_header_eth_vlan eth_vlan[DOCA_FLOW_VLAN_MAX];
};

/* What a pipe or entry does to packets; decap_type/encap_type say which union member is
 * meant. */
struct doca_flow_actions {
	enum doca_flow_resource_type decap_type;
	union {
		struct doca_flow_resource_decap_cfg decap_cfg;
		uint32_t shared_decap_id;
	};
	bool pop_vlan;
	struct doca_flow_meta meta;
	struct doca_flow_parser_meta parser_meta;
	struct doca_flow_header_format outer;
	struct doca_flow_tun tun;
	enum doca_flow_resource_type encap_type;
	union {
		struct doca_flow_resource_encap_cfg encap_cfg;
		uint32_t shared_encap_id;
	};
	bool has_push;
	struct doca_flow_push_action push;
	struct doca_flow_nat64_action nat64;
	bool has_crypto_encap;
	struct doca_flow_crypto_encap_action crypto_encap;
	struct doca_flow_crypto_action crypto;
};

/* A crypto step of an ordered list. */
struct doca_flow_crypto {
	bool has_crypto_encap;
	struct doca_flow_crypto_encap_action crypto_encap;
	struct doca_flow_crypto_action crypto;
};

/* Where packets go; `type` says which union member is meant. */
struct doca_flow_fwd {
	enum doca_flow_fwd_type type;
	union {
		struct {
			enum doca_flow_resource_type rss_type;
			union {
				struct doca_flow_resource_rss_cfg rss;
				uint32_t shared_rss_id;
			};
		};
		struct {
			uint16_t port_id;
		};
		struct {
			struct doca_flow_pipe *next_pipe;
		};
		struct {
			struct doca_flow_pipe *pipe;
			uint32_t idx;
		} ordered_list_pipe;
		struct {
			struct doca_flow_target *target;
		};
		struct {
			struct doca_flow_pipe *pipe;
			enum doca_flow_pipe_hash_map_algorithm algorithm;
		} hash_pipe;
	};
};

/* Meter configuration; the union member follows alg. */
struct doca_flow_resource_meter_cfg {
	enum doca_flow_meter_limit_type limit_type;
	enum doca_flow_meter_color_mode color_mode;
	enum doca_flow_meter_algorithm_type alg;
	uint64_t cir;
	uint64_t cbs;
	union {
		struct {
			uint64_t ebs;
		} rfc2697;
		struct {
			uint64_t pir;
			uint64_t pbs;
		} rfc2698;
		struct {
			uint64_t eir;
			uint64_t ebs;
		} rfc4115;
	};
};

/* PSP session configuration. */
struct doca_flow_resource_psp_cfg {
	struct doca_flow_crypto_key_cfg key_cfg;
};

/* IPsec SA configuration. */
struct doca_flow_resource_ipsec_sa_cfg {
	struct doca_flow_crypto_key_cfg key_cfg;
	uint32_t salt;
	uint64_t implicit_iv;
	enum doca_flow_crypto_icv_len icv_len;
	enum doca_flow_crypto_sn_offload_type sn_offload_type;
	enum doca_flow_crypto_replay_win_size win_size;
	bool esn_en;
	uint64_t sn_initial;
	uint32_t lifetime_threshold;
};

/* Configuration of one shared resource; the member follows the resource type. */
struct doca_flow_shared_resource_cfg {
	union {
		struct doca_flow_resource_meter_cfg meter_cfg;
		struct doca_flow_resource_rss_cfg rss_cfg;
		struct doca_flow_resource_psp_cfg psp_cfg;
		struct doca_flow_resource_encap_cfg encap_cfg;
		struct doca_flow_resource_decap_cfg decap_cfg;
		struct doca_flow_resource_ipsec_sa_cfg ipsec_sa_cfg;
	};
};

/* Counting, metering and aging of a pipe or entry. */
struct doca_flow_monitor {
	enum doca_flow_resource_type meter_type;
	union {
		struct {
			enum doca_flow_meter_limit_type limit_type;
			uint64_t cir;
			uint64_t cbs;
		} non_shared_meter;
		struct {
			uint32_t shared_meter_id;
			enum doca_flow_meter_color meter_init_color;
		} shared_meter;
	};
	enum doca_flow_resource_type counter_type;
	union {
		struct {
			uint32_t shared_counter_id;
		} shared_counter;
	};
	uint32_t aging_sec;
};

/* An action descriptor: add to a field, or copy one field to another. */
struct doca_flow_action_desc {
	enum doca_flow_action_type type;
	union {
		struct {
			struct doca_flow_desc_field src;
			struct doca_flow_desc_field dst;
			uint32_t width;
		} field_op;
	};
};

/* An array of action descriptors. */
struct doca_flow_action_descs {
	uint8_t nb_action_desc;
	struct doca_flow_action_desc *desc_array;
};

/* One element of an ordered list; `type` says which pointer(s) are meant. */
struct doca_flow_ordered_list_element {
	enum doca_flow_ordered_list_element_type type;
	union {
		struct {
			struct doca_flow_actions *actions;
			struct doca_flow_actions *actions_mask;
			struct doca_flow_action_descs *action_descs;
		};
		struct doca_flow_monitor *monitor;
		struct doca_flow_nat64_action *nat64;
		struct doca_flow_crypto *crypto;
	};
};

/* An ordered list of elements. */
struct doca_flow_ordered_list {
	uint32_t idx;
	uint32_t size;
	struct doca_flow_ordered_list_element *elements;
};

/* Result of a query: counter (bytes, packets) or IPsec SA state. */
struct doca_flow_resource_query {
	union {
		struct {
			uint64_t total_bytes;
			uint64_t total_pkts;
		} counter;
		struct {
			uint64_t current_sn;
		} ipsec_sa;
	};
};

/* One GENEVE TLV option the parser should know. */
struct doca_flow_parser_geneve_opt_cfg {
	enum doca_flow_parser_geneve_opt_mode match_on_class_mode;
	doca_be16_t option_class;
	uint8_t option_type;
	uint8_t option_len;
	doca_be32_t data_mask[DOCA_FLOW_GENEVE_DATA_OPTION_LEN_MAX];
};

/* ---- global configuration and library lifecycle --------------------------------------- */

DOCA_STABLE doca_error_t doca_flow_cfg_create(struct doca_flow_cfg **cfg);
DOCA_STABLE doca_error_t doca_flow_cfg_destroy(struct doca_flow_cfg *cfg);
DOCA_STABLE doca_error_t doca_flow_cfg_set_pipe_queues(struct doca_flow_cfg *cfg, uint16_t pipe_queues);
DOCA_STABLE doca_error_t doca_flow_cfg_set_mode_args(struct doca_flow_cfg *cfg, const char *mode_args);
DOCA_STABLE doca_error_t doca_flow_cfg_set_queue_depth(struct doca_flow_cfg *cfg, uint32_t queue_depth);
DOCA_STABLE doca_error_t doca_flow_cfg_set_nr_counters(struct doca_flow_cfg *cfg, uint32_t nr_counters);
DOCA_STABLE doca_error_t doca_flow_cfg_set_nr_meters(struct doca_flow_cfg *cfg, uint32_t nr_meters);
DOCA_STABLE doca_error_t doca_flow_cfg_set_nr_shared_resource(struct doca_flow_cfg *cfg,
							      uint32_t nr_shared_resource,
							      enum doca_flow_shared_resource_type type);
DOCA_STABLE doca_error_t doca_flow_cfg_set_nr_acl_collisions(struct doca_flow_cfg *cfg, uint8_t nr_acl_collisions);
DOCA_EXPERIMENTAL doca_error_t doca_flow_cfg_set_resource_mode(struct doca_flow_cfg *cfg,
							       const enum doca_flow_resource_mode mode);
DOCA_STABLE doca_error_t doca_flow_cfg_set_cb_entry_process(struct doca_flow_cfg *cfg, doca_flow_entry_process_cb cb);
DOCA_STABLE doca_error_t doca_flow_cfg_set_cb_pipe_process(struct doca_flow_cfg *cfg, doca_flow_pipe_process_cb cb);
DOCA_STABLE doca_error_t doca_flow_cfg_set_cb_shared_resource_unbind(struct doca_flow_cfg *cfg,
								     doca_flow_shared_resource_unbind_cb cb);
DOCA_STABLE doca_error_t doca_flow_cfg_set_rss_key(struct doca_flow_cfg *cfg,
						   const uint8_t *rss_key,
						   uint32_t rss_key_len);
DOCA_EXPERIMENTAL doca_error_t doca_flow_cfg_set_definitions(struct doca_flow_cfg *cfg,
							     const struct doca_flow_definitions *defs);
DOCA_EXPERIMENTAL doca_error_t doca_flow_cfg_set_tune_cfg(struct doca_flow_cfg *cfg,
							  struct doca_flow_tune_cfg *tune_cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_tune_cfg_create(struct doca_flow_tune_cfg **tune_cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_tune_cfg_destroy(struct doca_flow_tune_cfg *tune_cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_tune_cfg_set_profile(struct doca_flow_tune_cfg *tune_cfg,
							      enum doca_flow_tune_profile profile);
DOCA_STABLE doca_error_t doca_flow_init(struct doca_flow_cfg *cfg);
DOCA_STABLE void doca_flow_destroy(void);

/* ---- port configuration --------------------------------------------------------------- */

DOCA_STABLE doca_error_t doca_flow_port_cfg_create(struct doca_flow_port_cfg **cfg);
DOCA_STABLE doca_error_t doca_flow_port_cfg_destroy(struct doca_flow_port_cfg *cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_cfg_set_port_id(struct doca_flow_port_cfg *cfg, uint16_t port_id);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_cfg_set_dev(struct doca_flow_port_cfg *cfg, struct doca_dev *dev);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_cfg_set_dev_rep(struct doca_flow_port_cfg *cfg,
							      struct doca_dev_rep *dev);
DOCA_STABLE doca_error_t doca_flow_port_cfg_set_devargs(struct doca_flow_port_cfg *cfg, const char *devargs);
DOCA_STABLE doca_error_t doca_flow_port_cfg_set_priv_data_size(struct doca_flow_port_cfg *cfg,
							       uint16_t priv_data_size);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_cfg_set_actions_mem_size(struct doca_flow_port_cfg *cfg,
								       uint32_t size);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_cfg_set_nr_resources(struct doca_flow_port_cfg *cfg,
								   enum doca_flow_resource resource,
								   uint32_t nr_resources);
DOCA_EXPERIMENTAL doca_error_t
doca_flow_port_cfg_set_operation_state(struct doca_flow_port_cfg *cfg,
				       enum doca_flow_port_operation_state state);
DOCA_STABLE doca_error_t doca_flow_port_cfg_set_ipsec_sn_offload_disable(struct doca_flow_port_cfg *cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_cfg_set_service_threads_core(struct doca_flow_port_cfg *cfg,
									   uint32_t core);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_cfg_set_service_threads_cycle(struct doca_flow_port_cfg *cfg,
									    uint32_t cycle_ms);

/* ---- ports ---------------------------------------------------------------------------- */

DOCA_EXPERIMENTAL doca_error_t doca_flow_port_start(const struct doca_flow_port_cfg *cfg,
						    struct doca_flow_port **port);
DOCA_STABLE doca_error_t doca_flow_port_stop(struct doca_flow_port *port);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_pair(struct doca_flow_port *port, struct doca_flow_port *pair_port);
DOCA_STABLE uint8_t *doca_flow_port_priv_data(struct doca_flow_port *port);
DOCA_EXPERIMENTAL doca_error_t
doca_flow_port_operation_state_modify(struct doca_flow_port *port, enum doca_flow_port_operation_state state);
DOCA_STABLE struct doca_flow_port *doca_flow_port_switch_get(const struct doca_flow_port *port);
DOCA_STABLE void doca_flow_port_pipes_flush(struct doca_flow_port *port);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_update_default_miss(struct doca_flow_port *port,
								  enum doca_flow_port_default_miss_type default_miss,
								  bool counter_en);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_query_default_miss(struct doca_flow_port *port,
								 struct doca_flow_resource_query *data);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_calc_entropy(struct doca_flow_port *port,
							   struct doca_flow_entropy_format *header,
							   uint16_t *entropy);
DOCA_EXPERIMENTAL doca_error_t doca_flow_get_target(enum doca_flow_target_type type,
						    struct doca_flow_target **target);

/* ---- pipe configuration --------------------------------------------------------------- */

DOCA_STABLE doca_error_t doca_flow_pipe_cfg_create(struct doca_flow_pipe_cfg **cfg, struct doca_flow_port *port);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_destroy(struct doca_flow_pipe_cfg *cfg);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_name(struct doca_flow_pipe_cfg *cfg, const char *name);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_cfg_set_label(struct doca_flow_pipe_cfg *cfg, const char *label);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_type(struct doca_flow_pipe_cfg *cfg, enum doca_flow_pipe_type type);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_domain(struct doca_flow_pipe_cfg *cfg,
						       enum doca_flow_pipe_domain domain);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_is_root(struct doca_flow_pipe_cfg *cfg, bool is_root);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_match(struct doca_flow_pipe_cfg *cfg,
						      const struct doca_flow_match *match,
						      const struct doca_flow_match *match_mask);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_actions(struct doca_flow_pipe_cfg *cfg,
							struct doca_flow_actions *const *actions,
							struct doca_flow_actions *const *actions_masks,
							struct doca_flow_action_descs *const *action_descs,
							size_t nr_actions);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_monitor(struct doca_flow_pipe_cfg *cfg,
							const struct doca_flow_monitor *monitor);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_ordered_lists(struct doca_flow_pipe_cfg *cfg,
							      struct doca_flow_ordered_list *const *ordered_lists,
							      size_t nr_ordered_lists);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_nr_entries(struct doca_flow_pipe_cfg *cfg, uint32_t nr_entries);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_is_resizable(struct doca_flow_pipe_cfg *cfg, bool is_resizable);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_cfg_set_excluded_queue(struct doca_flow_pipe_cfg *cfg,
								     uint16_t pipe_queue);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_cfg_set_miss_counter(struct doca_flow_pipe_cfg *cfg,
								   bool miss_counter);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_congestion_level_threshold(struct doca_flow_pipe_cfg *cfg,
									   uint8_t congestion_level_threshold);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_user_ctx(struct doca_flow_pipe_cfg *cfg, void *user_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_cfg_set_hash_map_algorithm(struct doca_flow_pipe_cfg *cfg,
									 uint32_t algorithm_flags);

/* ---- pipes ---------------------------------------------------------------------------- */

DOCA_STABLE doca_error_t doca_flow_pipe_create(const struct doca_flow_pipe_cfg *cfg,
					       const struct doca_flow_fwd *fwd,
					       const struct doca_flow_fwd *fwd_miss,
					       struct doca_flow_pipe **pipe);
DOCA_STABLE void doca_flow_pipe_destroy(struct doca_flow_pipe *pipe);
DOCA_STABLE doca_error_t doca_flow_pipe_update_miss(struct doca_flow_pipe *pipe,
						    const struct doca_flow_fwd *fwd_miss);
DOCA_STABLE doca_error_t doca_flow_pipe_resize(struct doca_flow_pipe *pipe,
					       uint8_t new_congestion_level,
					       doca_flow_pipe_resize_nr_entries_changed_cb nr_entries_changed_cb,
					       doca_flow_pipe_resize_entry_relocate_cb entry_relocation_cb);
DOCA_STABLE doca_error_t doca_flow_pipe_calc_hash(struct doca_flow_pipe *pipe,
						  const struct doca_flow_match *match,
						  uint32_t *hash);
DOCA_EXPERIMENTAL void doca_flow_pipe_dump(struct doca_flow_pipe *pipe, FILE *f);

/* ---- entries -------------------------------------------------------------------------- */

DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_basic_add_entry(uint16_t pipe_queue,
							      struct doca_flow_pipe *pipe,
							      const struct doca_flow_match *match,
							      uint8_t action_idx,
							      const struct doca_flow_actions *actions,
							      const struct doca_flow_monitor *monitor,
							      const struct doca_flow_fwd *fwd,
							      uint32_t flags,
							      void *usr_ctx,
							      struct doca_flow_pipe_entry **entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_basic_update_entry(uint16_t pipe_queue,
								 struct doca_flow_pipe *pipe,
								 uint8_t action_idx,
								 const struct doca_flow_actions *actions,
								 const struct doca_flow_monitor *monitor,
								 const struct doca_flow_fwd *fwd,
								 uint32_t flags,
								 struct doca_flow_pipe_entry *entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_control_add_entry(uint16_t pipe_queue,
								struct doca_flow_pipe *pipe,
								const struct doca_flow_match *match,
								const struct doca_flow_match *match_mask,
								const struct doca_flow_match_condition *condition,
								const struct doca_flow_actions *actions,
								const struct doca_flow_actions *actions_mask,
								const struct doca_flow_action_descs *action_descs,
								const struct doca_flow_monitor *monitor,
								uint32_t priority,
								const struct doca_flow_fwd *fwd,
								void *usr_ctx,
								struct doca_flow_pipe_entry **entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_lpm_add_entry(uint16_t pipe_queue,
							    struct doca_flow_pipe *pipe,
							    const struct doca_flow_match *match,
							    const struct doca_flow_match *match_mask,
							    uint8_t action_idx,
							    const struct doca_flow_actions *actions,
							    const struct doca_flow_monitor *monitor,
							    const struct doca_flow_fwd *fwd,
							    uint32_t flags,
							    void *usr_ctx,
							    struct doca_flow_pipe_entry **entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_lpm_update_entry(uint16_t pipe_queue,
							       struct doca_flow_pipe *pipe,
							       uint8_t action_idx,
							       const struct doca_flow_actions *actions,
							       const struct doca_flow_monitor *monitor,
							       const struct doca_flow_fwd *fwd,
							       uint32_t flags,
							       struct doca_flow_pipe_entry *entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_acl_add_entry(uint16_t pipe_queue,
							    struct doca_flow_pipe *pipe,
							    const struct doca_flow_match *match,
							    const struct doca_flow_match *match_mask,
							    uint8_t action_idx,
							    const struct doca_flow_actions *actions,
							    const uint32_t priority,
							    const struct doca_flow_fwd *fwd,
							    uint32_t flags,
							    void *usr_ctx,
							    struct doca_flow_pipe_entry **entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_acl_update_entry(uint16_t pipe_queue,
							       struct doca_flow_pipe *pipe,
							       uint8_t action_idx,
							       const struct doca_flow_actions *actions,
							       const struct doca_flow_fwd *fwd,
							       uint32_t flags,
							       struct doca_flow_pipe_entry *entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_hash_add_entry(uint16_t pipe_queue,
							     struct doca_flow_pipe *pipe,
							     uint32_t entry_index,
							     uint8_t action_idx,
							     const struct doca_flow_actions *actions,
							     const struct doca_flow_monitor *monitor,
							     const struct doca_flow_fwd *fwd,
							     uint32_t flags,
							     void *usr_ctx,
							     struct doca_flow_pipe_entry **entry);
DOCA_EXPERIMENTAL doca_error_t doca_flow_pipe_ordered_list_add_entry(uint16_t pipe_queue,
								     struct doca_flow_pipe *pipe,
								     uint32_t idx,
								     const struct doca_flow_ordered_list *ordered_list,
								     const struct doca_flow_fwd *fwd,
								     uint32_t flags,
								     void *user_ctx,
								     struct doca_flow_pipe_entry **entry);
DOCA_STABLE doca_error_t doca_flow_pipe_remove_entry(uint16_t pipe_queue,
						     uint32_t flags,
						     struct doca_flow_pipe_entry *entry);
DOCA_STABLE doca_error_t doca_flow_entries_process(struct doca_flow_port *port,
						   uint16_t pipe_queue,
						   uint64_t timeout,
						   uint32_t max_processed_entries);
DOCA_STABLE enum doca_flow_entry_status doca_flow_pipe_entry_get_status(struct doca_flow_pipe_entry *entry);
DOCA_STABLE int doca_flow_aging_handle(struct doca_flow_port *port,
				       uint16_t queue,
				       uint64_t quota,
				       uint64_t max_entries);

/* ---- shared resources ----------------------------------------------------------------- */

DOCA_EXPERIMENTAL doca_error_t doca_flow_shared_resource_set_cfg(enum doca_flow_shared_resource_type type,
								 uint32_t id,
								 struct doca_flow_shared_resource_cfg *cfg);
DOCA_STABLE doca_error_t doca_flow_shared_resources_bind(enum doca_flow_shared_resource_type type,
							 uint32_t *res_array,
							 uint32_t res_array_len,
							 void *bindable_obj);
DOCA_EXPERIMENTAL doca_error_t doca_flow_shared_resources_query(enum doca_flow_shared_resource_type type,
								uint32_t *res_array,
								struct doca_flow_resource_query *data_array,
								uint32_t array_len);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_shared_resource_get(struct doca_flow_port *port,
								  enum doca_flow_shared_resource_type type,
								  uint32_t *shared_resource_id);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_shared_resource_put(struct doca_flow_port *port,
								  enum doca_flow_shared_resource_type type,
								  uint32_t shared_resource_id);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_shared_resource_set_cfg(struct doca_flow_port *port,
								      enum doca_flow_shared_resource_type type,
								      uint32_t shared_resource_id,
								      struct doca_flow_shared_resource_cfg *cfg);
DOCA_EXPERIMENTAL doca_error_t doca_flow_port_shared_resources_query(struct doca_flow_port *port,
								     enum doca_flow_shared_resource_type type,
								     uint32_t *res_array,
								     struct doca_flow_resource_query *data_array,
								     uint32_t array_len);

/* ---- queries -------------------------------------------------------------------------- */

DOCA_STABLE doca_error_t doca_flow_resource_query_entry(struct doca_flow_pipe_entry *entry,
							struct doca_flow_resource_query *data);
DOCA_STABLE doca_error_t doca_flow_resource_query_pipe_miss(struct doca_flow_pipe *pipe,
							    struct doca_flow_resource_query *data);

/* ---- parser and helpers --------------------------------------------------------------- */

DOCA_EXPERIMENTAL doca_error_t
doca_flow_parser_geneve_opt_create(const struct doca_flow_port *port,
				   const struct doca_flow_parser_geneve_opt_cfg tlv_list[],
				   uint8_t nb_options,
				   struct doca_flow_parser **parser);
DOCA_EXPERIMENTAL doca_error_t doca_flow_parser_geneve_opt_destroy(struct doca_flow_parser *parser);
DOCA_EXPERIMENTAL doca_error_t doca_flow_mpls_label_encode(uint32_t label,
							   uint8_t traffic_class,
							   uint8_t ttl,
							   bool bottom_of_stack,
							   struct doca_flow_header_mpls *mpls);
DOCA_EXPERIMENTAL doca_error_t doca_flow_mpls_label_decode(const struct doca_flow_header_mpls *mpls,
							   uint32_t *label,
							   uint8_t *traffic_class,
							   uint8_t *ttl,
							   bool *bottom_of_stack);

/* The versioned names: _v1 structs and prototypes, and the macros selecting them. */
#include "doca_ctsd_flow.h"

#ifdef __cplusplus
}
#endif

#endif /* DOCA_FLOW_H_ */
