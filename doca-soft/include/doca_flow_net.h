/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: DOCA Flow network header descriptions (the header fields pipes match on).
 * Multi-byte header fields are big-endian (doca_be*_t); convert with htons/htonl.
 */
#ifndef DOCA_FLOW_NET_H_
#define DOCA_FLOW_NET_H_

#include <stdint.h>
#include <stdbool.h>

#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_FLOW_ETHER_ADDR_LEN 6

/* Ether types (host order values; store them with htons). */
#define DOCA_FLOW_ETHER_TYPE_IPV4 0x0800
#define DOCA_FLOW_ETHER_TYPE_IPV6 0x86DD
#define DOCA_FLOW_ETHER_TYPE_ARP 0x0806
#define DOCA_FLOW_ETHER_TYPE_VLAN 0x8100
#define DOCA_FLOW_ETHER_TYPE_QINQ 0x88A8

/* IP protocol numbers. */
#define DOCA_FLOW_PROTO_ICMP 1
#define DOCA_FLOW_PROTO_TCP 6
#define DOCA_FLOW_PROTO_UDP 17
#define DOCA_FLOW_PROTO_GRE 47
#define DOCA_FLOW_PROTO_ESP 50
#define DOCA_FLOW_PROTO_ICMP6 58

/* Most VLAN tags a header description carries. */
#define DOCA_FLOW_VLAN_MAX 2

/* TCP flag bits (outer.tcp.flags). */
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

/* Which L3 header a header description holds. */
enum doca_flow_l3_type {
	DOCA_FLOW_L3_TYPE_NONE = 0,
	DOCA_FLOW_L3_TYPE_IP4 = 1,
	DOCA_FLOW_L3_TYPE_IP6 = 2,
};

/* Which L4 header a header description holds. */
enum doca_flow_l4_type_ext {
	DOCA_FLOW_L4_TYPE_EXT_NONE = 0,
	DOCA_FLOW_L4_TYPE_EXT_TCP = 1,
	DOCA_FLOW_L4_TYPE_EXT_UDP = 2,
	DOCA_FLOW_L4_TYPE_EXT_ICMP = 3,
	DOCA_FLOW_L4_TYPE_EXT_ICMP6 = 4,
	DOCA_FLOW_L4_TYPE_EXT_TRANSPORT = 5,
	DOCA_FLOW_L4_TYPE_EXT_ROCE_V2 = 6,
};

/* Ethernet header. */
struct doca_flow_header_eth {
	uint8_t src_mac[DOCA_FLOW_ETHER_ADDR_LEN];
	uint8_t dst_mac[DOCA_FLOW_ETHER_ADDR_LEN];
	doca_be16_t type;
};

/* One VLAN tag. */
struct doca_flow_header_eth_vlan {
	doca_be16_t tci;
};

/* IPv4 header. */
struct doca_flow_header_ip4 {
	doca_be32_t src_ip;
	doca_be32_t dst_ip;
	uint8_t version_ihl;
	uint8_t dscp_ecn;
	doca_be16_t total_len;
	doca_be16_t identification;
	doca_be16_t flags_fragment_offset;
	uint8_t next_proto;
	uint8_t ttl;
};

/* IPv6 header. */
struct doca_flow_header_ip6 {
	doca_be32_t src_ip[4];
	doca_be32_t dst_ip[4];
	uint8_t traffic_class;
	doca_be32_t flow_label;
	doca_be16_t payload_len;
	uint8_t next_proto;
	uint8_t hop_limit;
};

/* L4 source and destination ports. */
struct doca_flow_header_l4_port {
	doca_be16_t src_port;
	doca_be16_t dst_port;
};

/* UDP header. */
struct doca_flow_header_udp {
	struct doca_flow_header_l4_port l4_port;
	doca_be16_t total_len;
};

/* TCP header. */
struct doca_flow_header_tcp {
	struct doca_flow_header_l4_port l4_port;
	uint8_t data_offset;
	uint8_t flags;
	doca_be32_t seq_num;
	doca_be32_t ack_num;
};

/* ICMP header. */
struct doca_flow_header_icmp {
	uint8_t type;
	uint8_t code;
	doca_be16_t ident;
};

/* RoCE v2 base transport header fields. */
struct doca_flow_header_roce_v2 {
	doca_be32_t dest_qp;
	uint8_t opcode;
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_FLOW_NET_H_ */
