/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: GPU verbs definitions shared by host code and the device API
 * (doca_gpunetio_dev_verbs_*.cuh): constants, enums, the WQE/CQE views, and the public
 * GPU-side QP and CQ descriptors that kernels receive from doca_gpu_verbs_get_qp_dev().
 *
 * Valid C and C++/CUDA. Layouts are DOCA 3.3's (x86-64 and CUDA agree); the static asserts
 * at the end pin every offset. In doca-soft a CPU proxy plays the NIC: it consumes the
 * mlx5 WQEs and doorbells these descriptors point to and writes mlx5 CQEs, so the device
 * code writes exactly what it writes on hardware.
 */
#ifndef DOCA_GPUNETIO_VERBS_DEF_H_
#define DOCA_GPUNETIO_VERBS_DEF_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_soft_mlx5.h"

#ifdef __cplusplus
extern "C" {
#endif

/* doca-soft's layout checks (not DOCA names). */
#ifdef __cplusplus
#define DOCA_SOFT_VERBS_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define DOCA_SOFT_VERBS_ALIGNOF(t) alignof(t)
#else
#define DOCA_SOFT_VERBS_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define DOCA_SOFT_VERBS_ALIGNOF(t) _Alignof(t)
#endif

/** Re-read `x` from memory every time. */
#define DOCA_GPUNETIO_VERBS_VOLATILE(x) (*(volatile __typeof__(x) *)&(x))

#define DOCA_GPUNETIO_VERBS_WARP_SIZE 32
#define DOCA_GPUNETIO_VERBS_WARP_FULL_MASK 0xffffffff
#define DOCA_GPUNETIO_VERBS_PAGE_SIZE 65536
/** CQ consumer indices are 24 bits wide on the wire. */
#define DOCA_GPUNETIO_VERBS_CQE_CI_MASK 0xFFFFFF
/** WQE indices are 16 bits wide in control segments and doorbells. */
#define DOCA_GPUNETIO_VERBS_WQE_PI_MASK 0xFFFF
/** log2 of a send WQE slot (64 bytes) and of a receive WQE slot (16 bytes). */
#define DOCA_GPUNETIO_MLX5_WQE_SQ_SHIFT 6
#define DOCA_GPUNETIO_MLX5_WQE_RQ_SHIFT 4
/** Keys handed to the WQE helpers are big-endian already and stored as given. */
#define DOCA_GPUNETIO_VERBS_MKEY_SWAPPED 1
/** 1: DOCA_GPUNETIO_VERBS_ASSERT checks and error CQEs are printed. */
#ifndef DOCA_GPUNETIO_VERBS_ENABLE_DEBUG
#define DOCA_GPUNETIO_VERBS_ENABLE_DEBUG 0
#endif
#if DOCA_GPUNETIO_VERBS_ENABLE_DEBUG == 1
#include <assert.h>
#define DOCA_GPUNETIO_VERBS_ASSERT(x) assert(x)
#else
#define DOCA_GPUNETIO_VERBS_ASSERT(x) \
	do {                          \
	} while (0)
#endif
/** Most bytes an inline RDMA write carries (64-byte WQE minus ctrl, raddr, inline header). */
#define DOCA_GPUNETIO_VERBS_MAX_INLINE_SIZE 28
#define DOCA_GPUNETIO_VERBS_MLX5_CQE_OPCODE_SHIFT 4
#define DOCA_GPUNETIO_VERBS_CQE_SIZE 64
/** The WQE index sits above the opcode byte in a control segment's first word. */
#define DOCA_GPUNETIO_VERBS_WQE_IDX_SHIFT 8
/** The high-level calls split transfers into WQEs of at most 1 GiB. */
#define DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT 30
#define DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE (1ULL << DOCA_GPUNETIO_VERBS_MAX_TRANSFER_SIZE_SHIFT)

/** Send WQE opcodes (the mlx5 ones, plus WAIT and DUMP). */
enum {
	DOCA_GPUNETIO_MLX5_OPCODE_NOP = 0x00,
	DOCA_GPUNETIO_MLX5_OPCODE_SEND_INVAL = 0x01,
	DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE = 0x08,
	DOCA_GPUNETIO_MLX5_OPCODE_RDMA_WRITE_IMM = 0x09,
	DOCA_GPUNETIO_MLX5_OPCODE_SEND = 0x0a,
	DOCA_GPUNETIO_MLX5_OPCODE_SEND_IMM = 0x0b,
	DOCA_GPUNETIO_MLX5_OPCODE_TSO = 0x0e,
	DOCA_GPUNETIO_MLX5_OPCODE_WAIT = 0x0f,
	DOCA_GPUNETIO_MLX5_OPCODE_RDMA_READ = 0x10,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_CS = 0x11,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_FA = 0x12,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_MASKED_CS = 0x14,
	DOCA_GPUNETIO_MLX5_OPCODE_ATOMIC_MASKED_FA = 0x15,
	DOCA_GPUNETIO_MLX5_OPCODE_FMR = 0x19,
	DOCA_GPUNETIO_MLX5_OPCODE_LOCAL_INVAL = 0x1b,
	DOCA_GPUNETIO_MLX5_OPCODE_CONFIG_CMD = 0x1f,
	DOCA_GPUNETIO_MLX5_OPCODE_SET_PSV = 0x20,
	DOCA_GPUNETIO_MLX5_OPCODE_DUMP = 0x23,
	DOCA_GPUNETIO_MLX5_OPCODE_UMR = 0x25,
	DOCA_GPUNETIO_MLX5_OPCODE_TAG_MATCHING = 0x28,
	DOCA_GPUNETIO_MLX5_OPCODE_FLOW_TBL_ACCESS = 0x2c,
	DOCA_GPUNETIO_MLX5_OPCODE_MMO = 0x2F,
};

/** Completion-event modes (the CE field, bits 2-3 of fm_ce_se). */
enum {
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR = 0x0,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR = 0x1,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ALWAYS = 0x2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_AND_EQE = 0x3,
};

/** Fence modes (the FM field, bits 5-7 of fm_ce_se). */
enum {
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_NO_FENCE = 0x0,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE = 0x1,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE = 0x2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_STRONG_ORDERING = 0x3,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE_AND_INITIATOR_SMALL_FENCE = 0x4,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_CUSTOM = 0x100,
};

/** Values of a control segment's fm_ce_se byte. */
enum doca_gpu_dev_verbs_wqe_ctrl_flags {
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE = DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ALWAYS << 2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_ERROR_UPDATE = DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR << 2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_FIRST_CQE_ERROR = DOCA_GPUNETIO_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR << 2,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_SOLICITED = 1 << 1,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_FENCE = DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_FENCE_AND_INITIATOR_SMALL_FENCE << 5,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE << 5,
	DOCA_GPUNETIO_MLX5_WQE_CTRL_STRONG_ORDERING = DOCA_GPUNETIO_MLX5_WQE_CTRL_FM_STRONG_ORDERING << 5,
};

/** Doorbell record words: receive first, send second. */
enum {
	DOCA_GPUNETIO_MLX5_RCV_DBR = 0,
	DOCA_GPUNETIO_MLX5_SND_DBR = 1,
};

/** Where a buffer lives. */
enum doca_gpu_dev_verbs_mem_type {
	DOCA_GPUNETIO_VERBS_MEM_TYPE_AUTO = 0,
	DOCA_GPUNETIO_VERBS_MEM_TYPE_HOST = 1,
	DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU = 2,
	DOCA_GPUNETIO_VERBS_MEM_TYPE_MAX = INT_MAX,
};

/** Which work queue of a QP a call works on. */
enum doca_gpu_dev_verbs_qp_type {
	DOCA_GPUNETIO_VERBS_QP_SQ = 0,
	DOCA_GPUNETIO_VERBS_QP_RQ = 1,
};

/** Which threads take part in one call (verbs has no block scope). */
enum doca_gpu_dev_verbs_exec_scope {
	DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD = 0,
	DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP = 1,
};

/** Scope of the fences a call issues. */
enum doca_gpu_dev_verbs_sync_scope {
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS = 0,
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU = 1,
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA = 2,
	DOCA_GPUNETIO_VERBS_SYNC_SCOPE_MAX = INT_MAX,
};

/** Who shares one QP: one thread, the threads of one block, or threads of many blocks. */
enum doca_gpu_dev_verbs_resource_sharing_mode {
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE = 0,
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA = 1,
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU = 2,
	DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_MAX = INT_MAX,
};

/** Who rings the doorbell: the GPU (doorbell register, BlueFlame, no DBR) or a CPU proxy. */
enum doca_gpu_dev_verbs_nic_handler {
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO = 0,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY = 1,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB = 2,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF = 3,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR = 4,
	DOCA_GPUNETIO_VERBS_NIC_HANDLER_TYPE_MAX = 5,
};

/** ENABLED: a one-byte DUMP WQE follows reads/receives (memory ordering on pre-Hopper GPUs). */
enum doca_gpu_dev_verbs_mcst_mode {
	DOCA_GPUNETIO_VERBS_MCST_DISABLED = 0,
	DOCA_GPUNETIO_VERBS_MCST_ENABLED = 1,
};

/** Code paths a caller may opt into (bits). */
enum doca_gpu_dev_verbs_gpu_code_opt {
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT = 0,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE = 1 << 0,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_HAS_GDRCOPY = 1 << 1,
	DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_MAX = INT_MAX,
};

/** Operation a signal applies to the remote word. */
enum doca_gpu_dev_verbs_signal_op {
	DOCA_GPUNETIO_VERBS_SIGNAL_OP_ADD = 0,
};

/** Whether a get/receive waits for its completion. */
enum doca_gpu_dev_verbs_blocking_mode {
	DOCA_GPUNETIO_VERBS_BLOCKING_MODE_DISABLED = 0,
	DOCA_GPUNETIO_VERBS_BLOCKING_MODE_ENABLED = 1,
};

/** WQE sizes in 16-byte units (DS) of the fixed-shape WQEs. */
enum {
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MIN = 3,
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_RDMA_WRITE_INL_MAX = 4,
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_ATOMIC_FA_CAS = 4,
	DOCA_GPUNETIO_VERBS_WQE_SEG_CNT_WAIT = 2,
};

/** A ticket: the 64-bit index of a WQE, to wait for its completion. */
typedef uint64_t doca_gpu_dev_verbs_ticket_t;

/** Control segment: opcode and index, QPN and size, flags, immediate. */
struct doca_gpu_dev_verbs_wqe_ctrl_seg {
	__be32 opmod_idx_opcode;
	__be32 qpn_ds;
	union {
		struct {
			uint8_t signature;
			uint8_t rsvd[2];
			uint8_t fm_ce_se;
		};
		__be32 signature_fm_ce_se;
	};
	__be32 imm;
} __attribute__((__aligned__(8)));

/** WAIT segment: hold the queue until CQ `qpn_cqn` completed WQE `max_index`. */
struct doca_gpu_dev_verbs_wqe_wait_seg {
	uint32_t resv[2];
	__be32 max_index;
	__be32 qpn_cqn;
} __attribute__((__packed__)) __attribute__((__aligned__(8)));

/** A local or remote memory address with its key (big-endian). */
struct doca_gpu_dev_verbs_addr {
	uint64_t addr;
	uint32_t key;
};

/** One 64-byte send WQE, seen as raw bytes, as four data segments, or per WQE shape. */
struct doca_gpu_dev_verbs_wqe {
	union {
		uint8_t inl_data[64];
		struct {
			struct mlx5_wqe_data_seg dseg0;
			struct mlx5_wqe_data_seg dseg1;
			struct mlx5_wqe_data_seg dseg2;
			struct mlx5_wqe_data_seg dseg3;
		};
		struct {
			struct doca_gpu_dev_verbs_wqe_ctrl_seg rw_cseg;
			struct mlx5_wqe_raddr_seg rw_rseg;
			struct mlx5_wqe_data_seg rw_dseg0;
			struct mlx5_wqe_data_seg rw_dseg1;
		};
		struct {
			struct doca_gpu_dev_verbs_wqe_ctrl_seg at_cseg;
			struct mlx5_wqe_raddr_seg at_rseg;
			struct mlx5_wqe_atomic_seg at_seg;
			struct mlx5_wqe_data_seg at_dseg;
		};
		struct {
			struct doca_gpu_dev_verbs_wqe_ctrl_seg snd_cseg;
			struct mlx5_wqe_data_seg snd_dseg0;
			struct mlx5_wqe_data_seg snd_dseg1;
			struct mlx5_wqe_data_seg snd_dseg2;
		};
	};
} __attribute__((__aligned__(8)));

/** Error CQE with the hardware syndrome bytes. */
struct mlx5_err_cqe_ex {
	uint8_t rsvd0[32];
	__be32 srqn;
	uint8_t rsvd1[16];
	uint8_t hw_err_synd;
	uint8_t hw_synd_type;
	uint8_t vendor_err_synd;
	uint8_t syndrome;
	__be32 s_wqe_opcode_qpn;
	__be16 wqe_counter;
	uint8_t signature;
	uint8_t op_own;
};

/** A CQE whose first 32 bytes hold inline-received data; the tail is mlx5_cqe64's. */
struct doca_gpu_dev_verbs_cqe64_inline {
	uint8_t inl_data[32];
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

/**
 * GPU view of a completion queue. `cqe_ci` is the number of the next CQE not yet consumed
 * (64-bit, monotonic; CQE k lives in slot k & cqe_mask); `cqe_rsvd` hands out CQE numbers
 * to poll_cq(count) callers.
 */
struct doca_gpu_dev_verbs_cq {
	uint8_t *cqe_daddr;
	uint32_t cq_num;
	uint32_t cqe_num;
	__be32 *dbrec;
	uint64_t cqe_ci;
	uint32_t cqe_mask;
	uint8_t cqe_size;
	uint64_t cqe_rsvd;
	enum doca_gpu_dev_verbs_mem_type mem_type;
} __attribute__((__aligned__(8)));

/**
 * GPU view of a queue pair. Per work queue, three 64-bit monotonic indices: `*_rsvd_index`
 * (next WQE to hand out), `*_ready_index` (every WQE below is written), `*_wqe_pi` (highest
 * producer index submitted). Slot = index & `*_wqe_mask`. The constant fields (numbers,
 * masks, ring and doorbell addresses, `sq_num_shift8_be_Kds` = BE32(QPN << 8 | K)) are set
 * at export and never change; device code reads them through the read-only cache.
 * `sq_db` is the doorbell register, or in CPU-proxy mode the host-visible 8-byte slot that
 * receives the producer index.
 */
struct doca_gpu_dev_verbs_qp {
	uint64_t sq_rsvd_index;
	uint64_t sq_ready_index;
	uint64_t sq_wqe_pi;
	uint32_t sq_num;
	uint32_t sq_num_shift8;
	__be32 sq_num_shift8_be;
	__be32 sq_num_shift8_be_1ds;
	__be32 sq_num_shift8_be_2ds;
	__be32 sq_num_shift8_be_3ds;
	__be32 sq_num_shift8_be_4ds;
	int sq_lock;
	uint16_t sq_wqe_num;
	uint16_t sq_wqe_mask;
	uint8_t *sq_wqe_daddr;
	__be32 *sq_dbrec;
	uint64_t *sq_db;

	uint32_t rq_num;
	uint64_t rq_wqe_pi;
	uint32_t rq_wqe_num;
	uint32_t rq_wqe_mask;
	uint8_t *rq_wqe_daddr;
	__be32 *rq_dbrec;
	uint32_t rcv_wqe_size;
	uint64_t rq_rsvd_index;
	uint64_t rq_ready_index;
	int rq_lock;

	struct doca_gpu_dev_verbs_cq cq_sq;
	struct doca_gpu_dev_verbs_cq cq_rq;

	enum doca_gpu_dev_verbs_nic_handler nic_handler;
	enum doca_gpu_dev_verbs_mem_type mem_type;
	bool need_mcst;
	uint64_t last_get_wqe_idx;
	uint64_t last_dump_wqe_idx;
	uint64_t last_recv_wqe_idx;
} __attribute__((__aligned__(8)));

/* DOCA 3.3's layouts (x86-64 and CUDA). */
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_verbs_wqe_ctrl_seg) == 16, "ctrl seg size");
DOCA_SOFT_VERBS_STATIC_ASSERT(DOCA_SOFT_VERBS_ALIGNOF(struct doca_gpu_dev_verbs_wqe_ctrl_seg) == 8, "ctrl seg align");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, qpn_ds) == 4, "ctrl qpn_ds");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, signature) == 8, "ctrl sig");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, rsvd) == 9, "ctrl rsvd");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, fm_ce_se) == 11, "ctrl fm_ce_se");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, signature_fm_ce_se) == 8,
				  "ctrl signature_fm_ce_se");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_ctrl_seg, imm) == 12, "ctrl imm");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_verbs_wqe_wait_seg) == 16, "wait seg size");
DOCA_SOFT_VERBS_STATIC_ASSERT(DOCA_SOFT_VERBS_ALIGNOF(struct doca_gpu_dev_verbs_wqe_wait_seg) == 8, "wait seg align");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_wait_seg, max_index) == 8, "wait max");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe_wait_seg, qpn_cqn) == 12, "wait cqn");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_verbs_addr) == 16, "addr size");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_addr, key) == 8, "addr key");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_verbs_wqe) == 64, "wqe size");
DOCA_SOFT_VERBS_STATIC_ASSERT(DOCA_SOFT_VERBS_ALIGNOF(struct doca_gpu_dev_verbs_wqe) == 8, "wqe align");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, dseg3) == 48, "wqe dseg3");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, rw_rseg) == 16, "wqe rw_rseg");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, rw_dseg0) == 32, "wqe rw_dseg0");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, rw_dseg1) == 48, "wqe rw_dseg1");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, at_seg) == 32, "wqe at_seg");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, at_dseg) == 48, "wqe at_dseg");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, snd_dseg0) == 16, "wqe snd_dseg0");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_wqe, snd_dseg2) == 48, "wqe snd_dseg2");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct mlx5_err_cqe_ex) == 64, "err cqe size");
DOCA_SOFT_VERBS_STATIC_ASSERT(DOCA_SOFT_VERBS_ALIGNOF(struct mlx5_err_cqe_ex) == 4, "err cqe align");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, srqn) == 32, "err cqe srqn");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, rsvd1) == 36, "err cqe rsvd1");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, hw_err_synd) == 52, "err cqe hw_err_synd");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, hw_synd_type) == 53, "err cqe hw_synd_type");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, vendor_err_synd) == 54, "err cqe vendor");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, syndrome) == 55, "err cqe syndrome");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, s_wqe_opcode_qpn) == 56, "err cqe qpn");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, wqe_counter) == 60, "err cqe counter");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, signature) == 62, "err cqe signature");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct mlx5_err_cqe_ex, op_own) == 63, "err cqe op_own");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_verbs_cqe64_inline) == 64, "inline cqe size");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, srqn_uidx) == 32, "icqe srqn");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, imm_inval_pkey) == 36, "icqe imm");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, app) == 40, "icqe app");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, app_op) == 41, "icqe app_op");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, app_info) == 42, "icqe app_info");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, byte_cnt) == 44, "icqe bytes");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, timestamp) == 48, "icqe ts");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, sop_drop_qpn) == 56, "icqe qpn");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, wqe_counter) == 60, "icqe ctr");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, signature) == 62, "icqe sig");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cqe64_inline, op_own) == 63, "icqe op_own");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_verbs_cq) == 56, "cq size");
DOCA_SOFT_VERBS_STATIC_ASSERT(DOCA_SOFT_VERBS_ALIGNOF(struct doca_gpu_dev_verbs_cq) == 8, "cq align");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, cq_num) == 8, "cq cq_num");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, cqe_num) == 12, "cq cqe_num");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, dbrec) == 16, "cq dbrec");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, cqe_ci) == 24, "cq cqe_ci");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, cqe_mask) == 32, "cq cqe_mask");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, cqe_size) == 36, "cq cqe_size");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, cqe_rsvd) == 40, "cq cqe_rsvd");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_cq, mem_type) == 48, "cq mem_type");
DOCA_SOFT_VERBS_STATIC_ASSERT(sizeof(struct doca_gpu_dev_verbs_qp) == 312, "qp size");
DOCA_SOFT_VERBS_STATIC_ASSERT(DOCA_SOFT_VERBS_ALIGNOF(struct doca_gpu_dev_verbs_qp) == 8, "qp align");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_ready_index) == 8, "qp sq_ready");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_pi) == 16, "qp sq_wqe_pi");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_num) == 24, "qp sq_num");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8) == 28, "qp shift8");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be) == 32, "qp shift8_be");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_1ds) == 36, "qp 1ds");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_2ds) == 40, "qp 2ds");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_3ds) == 44, "qp 3ds");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_num_shift8_be_4ds) == 48, "qp 4ds");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_lock) == 52, "qp sq_lock");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_num) == 56, "qp sq_wqe_num");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_mask) == 58, "qp sq_wqe_mask");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_wqe_daddr) == 64, "qp sq_wqe_daddr");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_dbrec) == 72, "qp sq_dbrec");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, sq_db) == 80, "qp sq_db");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_num) == 88, "qp rq_num");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_pi) == 96, "qp rq_wqe_pi");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_num) == 104, "qp rq_wqe_num");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_mask) == 108, "qp rq_wqe_mask");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_wqe_daddr) == 112, "qp rq_wqe_daddr");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_dbrec) == 120, "qp rq_dbrec");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rcv_wqe_size) == 128, "qp rcv_wqe_size");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_rsvd_index) == 136, "qp rq_rsvd");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_ready_index) == 144, "qp rq_ready");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, rq_lock) == 152, "qp rq_lock");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, cq_sq) == 160, "qp cq_sq");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, cq_rq) == 216, "qp cq_rq");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, nic_handler) == 272, "qp nic_handler");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, mem_type) == 276, "qp mem_type");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, need_mcst) == 280, "qp need_mcst");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, last_get_wqe_idx) == 288, "qp last_get");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, last_dump_wqe_idx) == 296, "qp last_dump");
DOCA_SOFT_VERBS_STATIC_ASSERT(offsetof(struct doca_gpu_dev_verbs_qp, last_recv_wqe_idx) == 304, "qp last_recv");

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_VERBS_DEF_H_ */
