/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft compat: the part of rdma-core's <infiniband/mlx5dv.h> that the DOCA 3.3 GPU
 * headers and their sample programs use, for machines without rdma-core. Written for
 * doca-soft from the published mlx5 formats (names, values, layouts); it is not
 * rdma-core's header.
 *
 * Decision (why a shim and not only an include path): DOCA 3.3's doca_gpunetio_verbs_def.h
 * includes <infiniband/mlx5dv.h>. doca-soft's headers include doca_soft_mlx5.h instead,
 * which includes the real <infiniband/mlx5dv.h> when the compiler finds one anywhere on its
 * search path (`__has_include`: system directories, -I, -isystem, -idirafter) and this
 * file otherwise. So gcc, g++, clang/bindgen and nvcc (its preprocessing runs on the host
 * compiler, which evaluates __has_include) need no extra flag, and an installed rdma-core
 * always wins. This directory is also a plain include directory: programs that include
 * <infiniband/mlx5dv.h> themselves on a machine without rdma-core add
 * `-idirafter <include>/compat` (nvcc: `-Xcompiler -idirafter,<include>/compat`), which is
 * searched after the system directories. doca-soft/include/README.md has the details.
 *
 * Contents: the byte formats the device code writes and polls (WQE segments, CQEs), the
 * opcode, CQE and control-flag constants, doorbell record indices. Every struct and
 * constant here has the real header's layout and value; doca-soft/tests/rdma_compat.rs
 * compiles a probe against both and compares sizes, offsets and values. No mlx5dv_*
 * functions: programs calling the mlx5 direct-verbs library need the real rdma-core.
 */
#ifndef DOCA_SOFT_COMPAT_INFINIBAND_MLX5DV_H_
#define DOCA_SOFT_COMPAT_INFINIBAND_MLX5DV_H_

#include <endian.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Doorbell record words: receive counter first, send counter second. */
enum {
	MLX5_RCV_DBR = 0,
	MLX5_SND_DBR = 1,
};

/* Send WQE opcodes (low byte of the control segment's first word). */
enum {
	MLX5_OPCODE_NOP = 0x00,
	MLX5_OPCODE_SEND_INVAL = 0x01,
	MLX5_OPCODE_RDMA_WRITE = 0x08,
	MLX5_OPCODE_RDMA_WRITE_IMM = 0x09,
	MLX5_OPCODE_SEND = 0x0a,
	MLX5_OPCODE_SEND_IMM = 0x0b,
	MLX5_OPCODE_TSO = 0x0e,
	MLX5_OPCODE_RDMA_READ = 0x10,
	MLX5_OPCODE_ATOMIC_CS = 0x11,
	MLX5_OPCODE_ATOMIC_FA = 0x12,
	MLX5_OPCODE_ATOMIC_MASKED_CS = 0x14,
	MLX5_OPCODE_ATOMIC_MASKED_FA = 0x15,
	MLX5_OPCODE_FMR = 0x19,
	MLX5_OPCODE_LOCAL_INVAL = 0x1b,
	MLX5_OPCODE_CONFIG_CMD = 0x1f,
	MLX5_OPCODE_SET_PSV = 0x20,
	MLX5_OPCODE_UMR = 0x25,
	MLX5_OPCODE_TAG_MATCHING = 0x28,
	MLX5_OPCODE_FLOW_TBL_ACCESS = 0x2c,
	MLX5_OPCODE_MMO = 0x2F,
};

/* op_own bits telling that received data was scattered into the CQE itself. */
enum {
	MLX5_INLINE_SCATTER_32 = 0x4,
	MLX5_INLINE_SCATTER_64 = 0x8,
};

/* Error CQE syndromes. */
enum {
	MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR = 0x01,
	MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR = 0x02,
	MLX5_CQE_SYNDROME_LOCAL_PROT_ERR = 0x04,
	MLX5_CQE_SYNDROME_WR_FLUSH_ERR = 0x05,
	MLX5_CQE_SYNDROME_MW_BIND_ERR = 0x06,
	MLX5_CQE_SYNDROME_BAD_RESP_ERR = 0x10,
	MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR = 0x11,
	MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR = 0x12,
	MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR = 0x13,
	MLX5_CQE_SYNDROME_REMOTE_OP_ERR = 0x14,
	MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR = 0x15,
	MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR = 0x16,
	MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR = 0x22,
};

enum {
	MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT = 0x93,
};

/* Checksum-ok bits of a receive CQE. */
enum {
	MLX5_CQE_L2_OK = 1 << 0,
	MLX5_CQE_L3_OK = 1 << 1,
	MLX5_CQE_L4_OK = 1 << 2,
};

enum {
	MLX5_CQE_L3_HDR_TYPE_NONE = 0x0,
	MLX5_CQE_L3_HDR_TYPE_IPV6 = 0x1,
	MLX5_CQE_L3_HDR_TYPE_IPV4 = 0x2,
};

/* op_own: owner bit (bit 0) and the CQE opcode (high nibble). */
enum {
	MLX5_CQE_OWNER_MASK = 1,
	MLX5_CQE_REQ = 0,
	MLX5_CQE_RESP_WR_IMM = 1,
	MLX5_CQE_RESP_SEND = 2,
	MLX5_CQE_RESP_SEND_IMM = 3,
	MLX5_CQE_RESP_SEND_INV = 4,
	MLX5_CQE_RESIZE_CQ = 5,
	MLX5_CQE_NO_PACKET = 6,
	MLX5_CQE_SIG_ERR = 12,
	MLX5_CQE_REQ_ERR = 13,
	MLX5_CQE_RESP_ERR = 14,
	MLX5_CQE_INVALID = 15,
};

enum {
	MLX5_CQ_DOORBELL = 0x20,
};

enum {
	MLX5_CQ_DB_REQ_NOT_SOL = 1 << 24,
	MLX5_CQ_DB_REQ_NOT = 0 << 24,
};

/* Error CQE (64 bytes). */
struct mlx5_err_cqe {
	uint8_t rsvd0[32];
	uint32_t srqn;
	uint8_t rsvd1[18];
	uint8_t vendor_err_synd;
	uint8_t syndrome;
	uint32_t s_wqe_opcode_qpn;
	uint16_t wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

/* Tag-matching header and CQE part (they share the CQE's first 16 bytes). */
struct ibv_tmh {
	uint8_t opcode;
	uint8_t reserved[3];
	__be32 app_ctx;
	__be64 tag;
};

struct mlx5_tm_cqe {
	__be32 success;
	__be16 hw_phase_cnt;
	uint8_t rsvd0[12];
};

/* Completion queue entry (64 bytes); its tail (from srqn_uidx on) is what pollers read. */
struct mlx5_cqe64 {
	union {
		struct {
			uint8_t rsvd0[2];
			__be16 wqe_id;
			uint8_t rsvd4[13];
			uint8_t ml_path;
			uint8_t rsvd20[4];
			__be16 slid;
			__be32 flags_rqpn;
			uint8_t hds_ip_ext;
			uint8_t l4_hdr_type_etc;
			__be16 vlan_info;
		};
		struct mlx5_tm_cqe tm_cqe;
		struct ibv_tmh tmh;
	};
	__be32 srqn_uidx;
	__be32 imm_inval_pkey;
	uint8_t app;
	uint8_t app_op;
	__be16 app_info;
	__be32 byte_cnt;
	__be64 timestamp;
	__be32 sop_drop_qpn;
	__be16 wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

/* Key that ends a scatter list. */
enum {
	MLX5_INVALID_LKEY = 0x100,
};

enum {
	MLX5_EXTENDED_UD_AV = 0x80000000,
};

/* fm_ce_se byte of the control segment. */
enum {
	MLX5_WQE_CTRL_CQ_UPDATE = 2 << 2,
	MLX5_WQE_CTRL_SOLICITED = 1 << 1,
	MLX5_WQE_CTRL_FENCE = 4 << 5,
	MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = 1 << 5,
};

/* Send WQE basic block. */
enum {
	MLX5_SEND_WQE_BB = 64,
	MLX5_SEND_WQE_SHIFT = 6,
};

/* Marks an inline data segment (or'ed into its byte count). */
enum {
	MLX5_INLINE_SEG = 0x80000000,
};

enum {
	MLX5_ETH_WQE_L3_CSUM = 1 << 6,
	MLX5_ETH_WQE_L4_CSUM = 1 << 7,
};

struct mlx5_wqe_srq_next_seg {
	uint8_t rsvd0[2];
	__be16 next_wqe_index;
	uint8_t signature;
	uint8_t rsvd1[11];
};

/* Pointer segment: byte count, key, address (all big-endian). */
struct mlx5_wqe_data_seg {
	__be32 byte_count;
	__be32 lkey;
	__be64 addr;
};

/* Control segment (16 bytes; the 16-bit stream id sits unaligned, hence packed). */
struct mlx5_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
	uint8_t signature;
	__be16 dci_stream_channel_id;
	uint8_t fm_ce_se;
	__be32 imm;
} __attribute__((__packed__)) __attribute__((__aligned__(4)));

struct mlx5_mprq_wqe {
	struct mlx5_wqe_srq_next_seg nseg;
	struct mlx5_wqe_data_seg dseg;
};

/* Address vector of a datagram WQE. */
struct mlx5_wqe_av {
	union {
		struct {
			__be32 qkey;
			__be32 reserved;
		} qkey;
		__be64 dc_key;
	} key;
	__be32 dqp_dct;
	uint8_t stat_rate_sl;
	uint8_t fl_mlid;
	__be16 rlid;
	uint8_t reserved0[4];
	uint8_t rmac[6];
	uint8_t tclass;
	uint8_t hop_limit;
	__be32 grh_gid_fl;
	uint8_t rgid[16];
};

struct mlx5_wqe_datagram_seg {
	struct mlx5_wqe_av av;
};

/* Remote address segment of RDMA read/write and atomics. */
struct mlx5_wqe_raddr_seg {
	__be64 raddr;
	__be32 rkey;
	__be32 reserved;
};

/* Atomic operands: swap (or add) value and compare value. */
struct mlx5_wqe_atomic_seg {
	__be64 swap_add;
	__be64 compare;
};

/* Inline data header; the payload follows it directly. */
struct mlx5_wqe_inl_data_seg {
	uint32_t byte_count;
};

/* Ethernet segment of a send WQE. */
struct mlx5_wqe_eth_seg {
	__be32 rsvd0;
	uint8_t cs_flags;
	uint8_t rsvd1;
	__be16 mss;
	__be32 rsvd2;
	__be16 inline_hdr_sz;
	uint8_t inline_hdr_start[2];
	uint8_t inline_hdr[16];
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SOFT_COMPAT_INFINIBAND_MLX5DV_H_ */
