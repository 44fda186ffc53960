/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA Flow (ports, pipes, entries) as the software runtime implements it.
 *
 * Versioned names: as in DOCA 3.3, the public names of the structs that may grow and of
 * the calls that take them are macros for "_v1" names. Code writes `struct doca_flow_match`
 * and `doca_flow_pipe_create(...)`; objects reference `doca_flow_pipe_create_v1`.
 */
#ifndef DOCA_FLOW_H_
#define DOCA_FLOW_H_

#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_flow_net.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Devices a port is built on (declared in doca_dev.h, which this header does not include). */
struct doca_dev;
struct doca_dev_rep;

/* ---- versioned struct tags ---------------------------------------------------------- */
#define doca_flow_meta doca_flow_meta_v1
#define doca_flow_parser_meta doca_flow_parser_meta_v1
#define doca_flow_header_format doca_flow_header_format_v1
#define doca_flow_tun doca_flow_tun_v1
#define doca_flow_match doca_flow_match_v1
#define doca_flow_match_condition doca_flow_match_condition_v1
#define doca_flow_desc_field doca_flow_desc_field_v1
#define doca_flow_actions doca_flow_actions_v1
#define doca_flow_action_desc doca_flow_action_desc_v1
#define doca_flow_action_descs doca_flow_action_descs_v1
#define doca_flow_resource_rss_cfg doca_flow_resource_rss_cfg_v1
#define doca_flow_fwd doca_flow_fwd_v1
#define doca_flow_monitor doca_flow_monitor_v1
#define doca_flow_resource_query doca_flow_resource_query_v1

/* ---- versioned calls ---------------------------------------------------------------- */
#define doca_flow_init doca_flow_init_v1
#define doca_flow_pipe_cfg_set_match doca_flow_pipe_cfg_set_match_v1
#define doca_flow_pipe_cfg_set_actions doca_flow_pipe_cfg_set_actions_v1
#define doca_flow_pipe_cfg_set_monitor doca_flow_pipe_cfg_set_monitor_v1
#define doca_flow_pipe_create doca_flow_pipe_create_v1
#define doca_flow_pipe_basic_add_entry doca_flow_pipe_basic_add_entry_v1
#define doca_flow_pipe_control_add_entry doca_flow_pipe_control_add_entry_v1
#define doca_flow_resource_query_entry doca_flow_resource_query_entry_v1
#define doca_flow_resource_query_pipe_miss doca_flow_resource_query_pipe_miss_v1

/* ---- opaque objects ----------------------------------------------------------------- */
struct doca_flow_cfg;
struct doca_flow_port_cfg;
struct doca_flow_pipe_cfg;
struct doca_flow_port;
struct doca_flow_pipe;
struct doca_flow_pipe_entry;
struct doca_flow_target;

/* ---- enums -------------------------------------------------------------------------- */
enum doca_flow_pipe_type {
	DOCA_FLOW_PIPE_BASIC = 0,
	DOCA_FLOW_PIPE_CONTROL = 1,
	DOCA_FLOW_PIPE_LPM = 2,
	DOCA_FLOW_PIPE_CT = 3,
	DOCA_FLOW_PIPE_ACL = 4,
	DOCA_FLOW_PIPE_ORDERED_LIST = 5,
	DOCA_FLOW_PIPE_HASH = 6,
};

enum doca_flow_pipe_domain {
	DOCA_FLOW_PIPE_DOMAIN_DEFAULT = 0,
	DOCA_FLOW_PIPE_DOMAIN_SECURE_INGRESS = 1,
	DOCA_FLOW_PIPE_DOMAIN_EGRESS = 2,
	DOCA_FLOW_PIPE_DOMAIN_SECURE_EGRESS = 3,
};

enum doca_flow_fwd_type {
	DOCA_FLOW_FWD_NONE = 0,
	DOCA_FLOW_FWD_RSS = 1,
	DOCA_FLOW_FWD_PORT = 2,
	DOCA_FLOW_FWD_PIPE = 3,
	DOCA_FLOW_FWD_DROP = 4,
	DOCA_FLOW_FWD_TARGET = 5,
	DOCA_FLOW_FWD_ORDERED_LIST_PIPE = 6,
	DOCA_FLOW_FWD_HASH_PIPE = 7,
	DOCA_FLOW_FWD_CHANGEABLE = 100,
};

enum doca_flow_resource_type {
	DOCA_FLOW_RESOURCE_TYPE_NONE = 0,
	DOCA_FLOW_RESOURCE_TYPE_SHARED = 1,
	DOCA_FLOW_RESOURCE_TYPE_NON_SHARED = 2,
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

enum doca_flow_rss_hash_function {
	DOCA_FLOW_RSS_HASH_FUNCTION_TOEPLITZ = 0,
	DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ = 1,
};

enum doca_flow_l2_meta {
	DOCA_FLOW_L2_META_NO_VLAN = 0,
	DOCA_FLOW_L2_META_SINGLE_VLAN = 1,
	DOCA_FLOW_L2_META_MULTI_VLAN = 2,
};

enum doca_flow_l3_meta {
	DOCA_FLOW_L3_META_NONE = 0,
	DOCA_FLOW_L3_META_IPV4 = 1,
	DOCA_FLOW_L3_META_IPV6 = 2,
};

enum doca_flow_l4_meta {
	DOCA_FLOW_L4_META_NONE = 0,
	DOCA_FLOW_L4_META_TCP = 1,
	DOCA_FLOW_L4_META_UDP = 2,
	DOCA_FLOW_L4_META_ICMP = 3,
	DOCA_FLOW_L4_META_ESP = 4,
};

enum doca_flow_tun_type {
	DOCA_FLOW_TUN_NONE = 0,
	DOCA_FLOW_TUN_VXLAN = 1,
	DOCA_FLOW_TUN_GRE = 2,
	DOCA_FLOW_TUN_GTPU = 3,
	DOCA_FLOW_TUN_ESP = 4,
	DOCA_FLOW_TUN_MPLS_O_UDP = 5,
	DOCA_FLOW_TUN_GENEVE = 6,
};

enum doca_flow_entry_flags {
	DOCA_FLOW_ENTRY_FLAGS_NO_WAIT = 1u << 0,
	DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH = 1u << 1,
};

enum doca_flow_compare_op {
	DOCA_FLOW_COMPARE_EQ = 0,
	DOCA_FLOW_COMPARE_NE = 1,
	DOCA_FLOW_COMPARE_LT = 2,
	DOCA_FLOW_COMPARE_LE = 3,
	DOCA_FLOW_COMPARE_GT = 4,
	DOCA_FLOW_COMPARE_GE = 5,
};

/* ---- match ------------------------------------------------------------------------- */
#define DOCA_FLOW_META_SCRATCH_WORDS 4

/* Packet metadata carried through the pipeline. */
struct doca_flow_meta {
	uint32_t pkt_meta;
	uint32_t u32[DOCA_FLOW_META_SCRATCH_WORDS];
	uint32_t mark;
};

/* What the parser found in the packet. */
struct doca_flow_parser_meta {
	uint32_t port_id;
	uint8_t ipsec_syndrome;
	uint8_t random;
	uint8_t meter_color;
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
	uint8_t inner_l3_ok;
	uint8_t inner_ip4_checksum_ok;
	uint8_t inner_l4_ok;
};

/* One layer of packet headers (outer or inner). */
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

/* Tunnel header. */
struct doca_flow_tun {
	enum doca_flow_tun_type type;
	union {
		doca_be32_t vxlan_tun_id;
		doca_be32_t gre_key;
		doca_be32_t gtp_teid;
		doca_be32_t esp_spi;
	};
};

/* A match (or its mask). */
struct doca_flow_match {
	struct doca_flow_meta meta;
	struct doca_flow_parser_meta parser_meta;
	struct doca_flow_header_format outer;
	struct doca_flow_tun tun;
	struct doca_flow_header_format inner;
};

/* A field named by string, for conditions and action descriptors. */
struct doca_flow_desc_field {
	const char *field_string;
	uint32_t bit_offset;
};

/* A comparison between two fields (or a field and a value). */
struct doca_flow_match_condition {
	enum doca_flow_compare_op operation;
	struct doca_flow_desc_field a;
	struct doca_flow_desc_field b;
	uint32_t width;
};

/* ---- actions ------------------------------------------------------------------------ */
struct doca_flow_actions {
	uint8_t action_idx;
	uint32_t flags;
	struct doca_flow_meta meta;
	struct doca_flow_header_format outer;
	struct doca_flow_tun tun;
};

struct doca_flow_action_desc {
	uint32_t type;
	struct doca_flow_desc_field src;
	struct doca_flow_desc_field dst;
	uint32_t width;
};

struct doca_flow_action_descs {
	uint8_t nb_action_desc;
	struct doca_flow_action_desc *desc_array;
};

/* ---- forward ------------------------------------------------------------------------ */
struct doca_flow_resource_rss_cfg {
	uint32_t outer_flags;
	uint32_t inner_flags;
	uint16_t *queues_array;
	int nr_queues;
	enum doca_flow_rss_hash_function rss_hash_func;
};

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
			uint32_t algorithm;
		} hash_pipe;
	};
};

/* ---- monitor and queries ------------------------------------------------------------ */
struct doca_flow_monitor {
	enum doca_flow_resource_type meter_type;
	union {
		struct {
			uint32_t limit_type;
			uint64_t cir;
			uint64_t cbs;
		} non_shared_meter;
		struct {
			uint32_t shared_meter_id;
		} shared_meter;
	};
	enum doca_flow_resource_type counter_type;
	struct {
		uint32_t shared_counter_id;
	} shared_counter;
	uint32_t aging_sec;
};

struct doca_flow_resource_query {
	union {
		struct {
			uint64_t total_pkts;
			uint64_t total_bytes;
		} counter;
	};
};

/* ---- library ------------------------------------------------------------------------ */
DOCA_STABLE doca_error_t doca_flow_cfg_create(struct doca_flow_cfg **cfg);
DOCA_STABLE doca_error_t doca_flow_cfg_destroy(struct doca_flow_cfg *cfg);
DOCA_STABLE doca_error_t doca_flow_cfg_set_pipe_queues(struct doca_flow_cfg *cfg, uint16_t pipe_queues);
DOCA_STABLE doca_error_t doca_flow_cfg_set_mode_args(struct doca_flow_cfg *cfg, const char *mode_args);
DOCA_STABLE doca_error_t doca_flow_cfg_set_nr_counters(struct doca_flow_cfg *cfg, uint32_t nr_counters);
DOCA_STABLE doca_error_t doca_flow_init(struct doca_flow_cfg *cfg);
DOCA_STABLE void doca_flow_destroy(void);

/* ---- ports -------------------------------------------------------------------------- */
DOCA_STABLE doca_error_t doca_flow_port_cfg_create(struct doca_flow_port_cfg **cfg);
DOCA_STABLE doca_error_t doca_flow_port_cfg_destroy(struct doca_flow_port_cfg *cfg);
DOCA_STABLE doca_error_t doca_flow_port_cfg_set_port_id(struct doca_flow_port_cfg *cfg, uint16_t port_id);
DOCA_STABLE doca_error_t doca_flow_port_cfg_set_dev(struct doca_flow_port_cfg *cfg, struct doca_dev *dev);
DOCA_STABLE doca_error_t doca_flow_port_cfg_set_devargs(struct doca_flow_port_cfg *cfg, const char *devargs);
DOCA_STABLE doca_error_t doca_flow_port_start(const struct doca_flow_port_cfg *cfg, struct doca_flow_port **port);
DOCA_STABLE doca_error_t doca_flow_port_stop(struct doca_flow_port *port);

/* ---- pipes -------------------------------------------------------------------------- */
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_create(struct doca_flow_pipe_cfg **cfg, struct doca_flow_port *port);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_destroy(struct doca_flow_pipe_cfg *cfg);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_name(struct doca_flow_pipe_cfg *cfg, const char *name);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_type(struct doca_flow_pipe_cfg *cfg, enum doca_flow_pipe_type type);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_is_root(struct doca_flow_pipe_cfg *cfg, bool is_root);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_domain(struct doca_flow_pipe_cfg *cfg, enum doca_flow_pipe_domain domain);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_nr_entries(struct doca_flow_pipe_cfg *cfg, uint32_t nr_entries);
DOCA_STABLE doca_error_t doca_flow_pipe_cfg_set_miss_counter(struct doca_flow_pipe_cfg *cfg, bool miss_counter);
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
DOCA_STABLE doca_error_t doca_flow_pipe_create(const struct doca_flow_pipe_cfg *cfg,
					       const struct doca_flow_fwd *fwd,
					       const struct doca_flow_fwd *fwd_miss,
					       struct doca_flow_pipe **pipe);
DOCA_STABLE void doca_flow_pipe_destroy(struct doca_flow_pipe *pipe);

/* ---- entries ------------------------------------------------------------------------ */
DOCA_STABLE doca_error_t doca_flow_pipe_basic_add_entry(uint16_t pipe_queue,
							struct doca_flow_pipe *pipe,
							const struct doca_flow_match *match,
							uint8_t action_idx,
							const struct doca_flow_actions *actions,
							const struct doca_flow_monitor *monitor,
							const struct doca_flow_fwd *fwd,
							uint32_t flags,
							void *usr_ctx,
							struct doca_flow_pipe_entry **entry);
DOCA_STABLE doca_error_t doca_flow_pipe_control_add_entry(uint16_t pipe_queue,
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
DOCA_STABLE doca_error_t doca_flow_entries_process(struct doca_flow_port *port,
						   uint16_t pipe_queue,
						   uint64_t timeout,
						   uint32_t max_processed_entries);
DOCA_STABLE doca_error_t doca_flow_pipe_remove_entry(uint16_t pipe_queue,
						     uint32_t flags,
						     struct doca_flow_pipe_entry *entry);
DOCA_STABLE doca_error_t doca_flow_resource_query_entry(struct doca_flow_pipe_entry *entry,
							struct doca_flow_resource_query *query_stats);
DOCA_STABLE doca_error_t doca_flow_resource_query_pipe_miss(struct doca_flow_pipe *pipe,
							    struct doca_flow_resource_query *query_stats);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_FLOW_H_ */
