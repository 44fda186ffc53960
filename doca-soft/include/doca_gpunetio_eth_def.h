/*
 * doca-soft: GPUNetIO Ethernet definitions shared by host code and the device API: the
 * execution/sync/sharing enums, send flags, constants, and the public queue handle structs
 * (in doca-soft they are the software rings of doca_soft_ring.h).
 *
 * Valid C (host programs include it) and C++/CUDA.
 */
#ifndef DOCA_GPUNETIO_ETH_DEF_H_
#define DOCA_GPUNETIO_ETH_DEF_H_

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * DOCA 3.3 pulls rdma-core's <infiniband/mlx5dv.h> in here (struct mlx5_cqe64 and friends,
 * plus pthread.h, errno.h and inttypes.h through it). doca_soft_mlx5.h includes the
 * installed one, or doca-soft's compat subset where rdma-core is absent (README.md,
 * "rdma-core headers").
 */
#include "doca_soft_mlx5.h"
/* Programs also get the format macros through this header in 3.3; not every rdma-core's
 * mlx5dv.h includes them. */
#include <inttypes.h>

#include "doca_soft_ring.h"

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
	DOCA_GPUNETIO_ETH_SYNC_SCOPE_MAX = INT_MAX,
};

/** Who shares one queue: a single thread, one block, or the whole GPU. */
enum doca_gpu_dev_eth_resource_sharing_mode {
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_EXCLUSIVE = 0,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA = 1,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU = 2,
	DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_MAX = INT_MAX,
};

/** How the doorbell reaches the NIC (doca-soft: always the CPU proxy). */
enum doca_gpu_dev_eth_nic_handler {
	DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO = 0,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_CPU_PROXY = 1,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_GPU_SM_DB = 2,
	DOCA_GPUNETIO_ETH_NIC_HANDLER_TYPE_MAX = 3,
};

/** Multicast "dump" WQE mode of receive (pre-Hopper GPUs; a no-op in doca-soft). */
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
	DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY = 1,
};

/** Multicast QP embedded in an RX handle (kept for layout; unused by doca-soft). */
struct doca_gpu_eth_mcst_qp {
	uint64_t rsvd[8];
};

/**
 * RX queue handle (device-visible). Packet ring: `pkt_num` slots of `max_pkt_sz` bytes at
 * `pkt_addr`; completion ring: `cqe_num` doca_soft_rx_cqe at `cqe_addr`; `buf_addr`: one
 * 16-byte buffer descriptor {addr, mkey} per slot for the legacy doca_gpu_buf API.
 */
struct doca_gpu_eth_rxq {
	uint64_t pkt_addr;
	uint64_t cqe_addr;
	uint32_t pkt_mkey; /* big-endian */
	uint32_t pkt_num;
	uint32_t max_pkt_sz;
	uint32_t cqe_num;
	uint8_t need_mcst;
	uint8_t striding_rq;
	uint16_t rsvd0;
	uint32_t version;
	uint64_t buf_addr; /* struct doca_gpu_buf[pkt_num], one per slot (legacy API) */
	uint64_t rsvd1[2];
	struct doca_soft_ring_index cqe_pi; /* written by the proxy */
	struct doca_soft_ring_index cqe_ci; /* written by the consumer */
	struct doca_gpu_eth_mcst_qp mcst_qp;
};

/**
 * TX queue handle (device-visible). Descriptor ring: `desc_num` (a power of two)
 * doca_soft_tx_desc at `desc_addr`; completion ring: `cq_num` doca_soft_tx_cqe at `cq_addr`.
 */
struct doca_gpu_eth_txq {
	uint64_t desc_addr;
	uint64_t cq_addr;
	uint32_t desc_num;
	uint32_t desc_mask;
	uint32_t cq_num;
	uint32_t cq_mask;
	uint8_t l3_csum;
	uint8_t l4_csum;
	uint8_t completion_on_gpu;
	uint8_t wait_on_time;
	enum doca_gpu_dev_eth_nic_handler nic_handler;
	uint32_t version;
	uint32_t rsvd0;
	uint64_t rsvd1[2];
	struct doca_soft_ring_index sq_rsvd;  /* producers reserve descriptor indices */
	struct doca_soft_ring_index sq_ready; /* descriptors below are ready for the proxy */
	struct doca_soft_ring_index sq_done;  /* descriptors below were consumed by the proxy */
	struct doca_soft_ring_index cq_pi;    /* completions written by the proxy */
	struct doca_soft_ring_index cq_rsvd;  /* completions reserved by pollers */
	struct doca_soft_ring_index cq_ci;    /* completions consumed by pollers */
	struct doca_soft_ring_index lock;     /* spare line (device-side locks) */
};

DOCA_SOFT_RING_ASSERT(sizeof(struct doca_gpu_eth_rxq) == 256, "rxq handle size");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, cqe_addr) == 8, "rxq cqe_addr");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, pkt_mkey) == 16, "rxq pkt_mkey");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, pkt_num) == 20, "rxq pkt_num");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, max_pkt_sz) == 24, "rxq max_pkt_sz");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, cqe_num) == 28, "rxq cqe_num");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, need_mcst) == 32, "rxq need_mcst");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, version) == 36, "rxq version");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, buf_addr) == 40, "rxq buf_addr");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, cqe_pi) == 64, "rxq cqe_pi");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, cqe_ci) == 128, "rxq cqe_ci");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_rxq, mcst_qp) == 192, "rxq mcst_qp");
DOCA_SOFT_RING_ASSERT(sizeof(struct doca_gpu_eth_txq) == 512, "txq handle size");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, desc_num) == 16, "txq desc_num");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, cq_num) == 24, "txq cq_num");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, l3_csum) == 32, "txq l3_csum");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, nic_handler) == 36, "txq nic");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, version) == 40, "txq version");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, sq_rsvd) == 64, "txq sq_rsvd");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, sq_ready) == 128, "txq sq_ready");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, sq_done) == 192, "txq sq_done");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, cq_pi) == 256, "txq cq_pi");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, cq_rsvd) == 320, "txq cq_rsvd");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, cq_ci) == 384, "txq cq_ci");
DOCA_SOFT_RING_ASSERT(offsetof(struct doca_gpu_eth_txq, lock) == 448, "txq lock");

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GPUNETIO_ETH_DEF_H_ */
