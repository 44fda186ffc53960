/*
 * doca-soft: GPUNetIO Ethernet definitions shared by host code and the device API: the
 * execution/sync/sharing enums, send flags, constants, and the public GPU-side queue
 * structs, which hold mlx5 rings as in DOCA 3.3 (receive: RQ WQEs and mlx5_cqe64
 * completions; send: 64-byte mlx5 WQEs and mlx5_cqe64 completions). In doca-soft a CPU
 * proxy plays the NIC on exactly these bytes (doca-soft/README and include/README.md,
 * "Ethernet ring formats").
 *
 * Valid C (host programs include it) and C++/CUDA. Includes what DOCA 3.3's includes:
 * <assert.h>, <stdio.h>, <stdint.h> and rdma-core's <infiniband/mlx5dv.h> (through doca_soft_mlx5.h:
 * the installed header, or doca-soft's compat subset where rdma-core is absent), plus
 * <inttypes.h>, which 3.3 programs get through rdma-core's header.
 */
#ifndef DOCA_GPUNETIO_ETH_DEF_H_
#define DOCA_GPUNETIO_ETH_DEF_H_

#include <assert.h>
#include <stdio.h>
#include <stdint.h>

#include "doca_soft_mlx5.h"
/* 3.3 programs get the format macros (PRIu64, ...) through rdma-core's header here; not
 * every rdma-core's mlx5dv.h includes <inttypes.h>, so doca-soft includes it itself. */
#include <inttypes.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Constants. */
#define DOCA_GPUNETIO_ETH_WARP_SIZE 32
#define DOCA_GPUNETIO_ETH_WARP_FULL_MASK 0xffffffffu
#define DOCA_GPUNETIO_ETH_PAGE_SIZE 65536
#define DOCA_GPUNETIO_ETH_WQE_L3_CSUM (1u << 6)
#define DOCA_GPUNETIO_ETH_WQE_L4_CSUM (1u << 7)
#define DOCA_GPUNETIO_ETH_NS_PER_S 1000000000ULL

/** Which threads take part in one device call. */
enum doca_gpu_dev_eth_exec_scope {
	DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD = 0,
	DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP = 1,
	DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK = 2,
};

/** Scope of the fences a device call issues. */
enum doca_gpu_dev_eth_sync_scope {
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_SYS = 0,
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU = 1,
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA = 2,
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_MAX = 0x7fffffff, /* INT_MAX */
};

/** Who shares one queue: a single thread, one block, or the whole GPU. */
enum doca_gpu_dev_eth_resource_sharing_mode {
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE = 0,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA = 1,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU = 2,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_MAX = 0x7fffffff, /* INT_MAX */
};

/** How the doorbell reaches the NIC (doca-soft's queues report CPU_PROXY). */
enum doca_gpu_dev_eth_nic_handler {
	DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO = 0,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_CPU_PROXY = 1,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_GPU_SM_DB = 2,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_TYPE_MAX = 3,
};

/** Multicast "dump" WQE mode of receive (pre-Hopper GPUs). */
enum doca_gpu_dev_eth_mcst_mode {
	DOCA_GPUNETIO_ETH_MCST_DISABLED = 0,
	DOCA_GPUNETIO_ETH_MCST_ENABLED = 1,
	DOCA_GPUNETIO_ETH_MCST_AUTO = 2,
};

/** poll_completion: wait for every reserved completion, or only for the last one. */
enum doca_gpu_dev_eth_cq_poll_mode {
	DOCA_GPUNETIO_ETH_CQ_POLL_ALL = 0,
	DOCA_GPUNETIO_ETH_CQ_POLL_LAST = 1,
};

/** Blocking or non-blocking completion polling. */
enum doca_gpu_dev_eth_wait_flags {
	DOCA_GPUNETIO_ETH_WAIT_FLAG_NB = 0,
	DOCA_GPUNETIO_ETH_WAIT_FLAG_B = 1,
};

/** Per-send flags. */
enum doca_gpu_eth_send_flags {
	DOCA_GPUNETIO_ETH_SEND_FLAG_NONE = 0,
	DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY = 1, /* ask for a completion (CQ_UPDATE) */
};

/*
 * The public GPU-side structs. DOCA 3.3's sizes (mcst QP 112, RX 232, TX 176 bytes) and
 * field names; the facts do not give every field's offset, so the order below is
 * doca-soft's (and fixed: the Rust side, eth/ring.rs, mirrors it and both assert it).
 * Pointers are device addresses; in doca-soft they point into device-mapped host memory
 * that the CPU proxy also reads and writes.
 */

/** Send queue of the multicast "dump" QP a pre-Hopper receive posts DUMP WQEs to. */
struct doca_gpu_eth_mcst_qp {
	uint64_t sq_rsvd_index;   /* next WQE index handed out */
	uint64_t sq_ready_index;  /* WQEs below are written */
	uint64_t sq_wqe_pi;       /* WQEs below were submitted */
	uint8_t *sq_wqe_addr;     /* 64-byte WQE slots */
	__be32 *sq_db_rec;        /* BE32(pi & 0xffff) */
	uint64_t *sq_db;          /* doorbell (doca-soft: the CPU proxy's producer slot) */
	uint32_t sq_num;          /* QP number */
	__be32 sq_num_shift8_be;  /* BE32(sq_num << 8) */
	uint16_t sq_wqe_num;      /* power of two */
	uint16_t sq_wqe_mask;     /* sq_wqe_num - 1 */
	int sq_lock;
	uint8_t *cqe_addr;        /* mlx5_cqe64 ring */
	__be32 *cq_db_rec;
	uint64_t cqe_ci;
	uint32_t cqe_num;
	uint32_t cqe_mask;
	__be32 dump_mkey;         /* key of the byte a DUMP WQE reads */
	uint32_t rsvd0;
	uint64_t dump_addr;
};

/**
 * Receive queue. Packet ring: `pkt_num` slots of `max_pkt_sz` bytes at `pkt_addr`. RQ:
 * one 16-byte mlx5 data segment per slot at `wqe_addr`, re-posted by advancing `wqe_pi`
 * and the doorbell record. CQ: `cqe_num` mlx5_cqe64 at `cqe_addr`; completion k lives in
 * slot k & cqe_mask, is present when its owner bit equals (k / cqe_num) & 1, and names its
 * packet slot in `wqe_counter`. `cqe_ci` is the consumer's 64-bit index (the proxy drops,
 * never overwrites, when `pkt_num` completions are unconsumed).
 */
struct doca_gpu_eth_rxq {
	uint64_t pkt_addr;
	__be32 pkt_mkey;
	uint32_t pkt_num;
	uint32_t max_pkt_sz;
	uint8_t striding_rq;      /* 0: one packet per RQ WQE (doca-soft's queues) */
	uint8_t need_mcst;        /* 1: MCST_AUTO receives post DUMP WQEs */
	uint16_t rsvd0;
	uint8_t *wqe_addr;
	__be32 *wqe_db_rec;       /* BE32(wqe_pi & 0xffff) */
	uint64_t wqe_pi;
	uint32_t wqe_num;
	uint32_t wqe_mask;
	uint32_t stride_num;      /* striding RQ only: strides per WQE */
	uint32_t stride_sz;       /* striding RQ only: stride bytes */
	uint64_t cqe_ci;
	uint32_t cqe_num;
	uint32_t cqe_mask;
	uint8_t *cqe_addr;
	__be32 *cq_db_rec;        /* BE32(cqe_ci & 0xffffff) */
	struct doca_gpu_eth_mcst_qp mcst_qp;
	uint64_t buf_addr;        /* doca-soft: struct doca_gpu_buf[pkt_num] (pre-3.2 API) */
	uint64_t rsvd1[2];
};

/**
 * Send queue. SQ: `sq_wqe_num` 64-byte WQE slots at `sq_wqe_addr`; producers take indices
 * from `sq_rsvd_index`, publish them in order through `sq_ready_index` and submit up to a
 * producer index: doorbell record + doorbell (GPU_SM_DB) or the CPU proxy's slot
 * `*cpu_proxy_pi` (CPU_PROXY, doca-soft's handler). The proxy reports the WQE slots it has
 * consumed in `*cpu_proxy_ci`. CQ: `cqe_num` mlx5_cqe64 (one per NOTIFY send or error),
 * reserved by pollers from `cqe_rsvd`, consumed up to `cqe_ci`.
 */
struct doca_gpu_eth_txq {
	uint64_t sq_rsvd_index;
	uint64_t sq_ready_index;
	uint64_t sq_wqe_pi;
	uint8_t *sq_wqe_addr;
	__be32 *sq_db_rec;
	uint64_t *sq_db;
	uint32_t sq_num;
	__be32 sq_num_shift8_be;      /* ctrl word 1 with DS 0 (doorbell) */
	__be32 sq_num_shift8_be_2ds;  /* ... DS 2: wait-on-time WQE */
	__be32 sq_num_shift8_be_3ds;  /* ... DS 3: send with one data segment */
	__be32 sq_num_shift8_be_4ds;  /* ... DS 4: send with two data segments */
	uint16_t sq_wqe_num;
	uint16_t sq_wqe_mask;
	int sq_lock;
	uint8_t cs_flags;             /* DOCA_GPUNETIO_ETH_WQE_L3/L4_CSUM the queue enabled */
	uint8_t wait_on_time;         /* 1: wait-on-time offload enabled */
	uint8_t completion_on_gpu;    /* 1: completions go to the CQ (else PE events) */
	uint8_t rsvd0;
	uint8_t *cqe_addr;
	__be32 *cq_db_rec;
	uint64_t cqe_ci;
	uint64_t cqe_rsvd;
	uint32_t cqe_num;
	uint32_t cqe_mask;
	uint64_t *cpu_proxy_pi;       /* host-order producer index for the CPU proxy */
	uint64_t *cpu_proxy_ci;       /* WQE slots the CPU proxy consumed */
	enum doca_gpu_dev_eth_nic_handler nic_handler;
	uint32_t rsvd1;
	uint64_t rsvd2[4];
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_ETH_DEF_H_ */
