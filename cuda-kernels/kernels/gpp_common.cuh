// Shared by the gpu_packet_processing kernels (gpp_*.cu): the records exchanged with the
// host through semaphores (layouts mirrored in cuda-kernels/src/gpp.rs and asserted on both
// sides), packet offsets, and small helpers. All packet parsing assumes Ethernet without
// VLAN and a 20-byte IPv4 header, as the original application does; every read is bounded
// by the frame length the queue reported, so malformed frames are classified, never
// trusted.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <doca_gpunetio_dev_eth_rxq.cuh>
#include <doca_gpunetio_dev_eth_txq.cuh>
#include <doca_gpunetio_dev_sem.cuh>

#define GPP_MAX_QUEUES 4u
#define GPP_ETH_HDR 14u
#define GPP_IP_HDR 20u
/** Offset of the L4 header (Ethernet + fixed 20-byte IPv4 header). */
#define GPP_L4 34u
/** Ethernet + IPv4 + TCP without options: the smallest TCP frame. */
#define GPP_TCP_HDRS 54u
/** Ethernet + IPv4 + UDP, or + ICMP header. */
#define GPP_UDP_HDRS 42u
#define GPP_ICMP_HDRS 42u

#define GPP_PROTO_ICMP 1u
#define GPP_PROTO_TCP 6u
#define GPP_PROTO_UDP 17u
#define GPP_DNS_PORT 53u

#define GPP_TCP_FIN 0x01u
#define GPP_TCP_SYN 0x02u
#define GPP_TCP_RST 0x04u
#define GPP_TCP_ACK 0x10u

/** Prebuilt HTTP response frames: slots per page and slot size. */
#define GPP_TX_BUF_NUM 1024u
#define GPP_TX_BUF_MAX_SZ 512u

/** Bytes of a frame carried between the CPU TCP thread and the relay kernel. */
#define GPP_CPU_FRAME_BYTES 128u
/** Send slots of the relay kernel per queue (frames of GPP_CPU_FRAME_BYTES). */
#define GPP_CPU_TX_SLOTS 1024u

/** UDP statistics of one receive batch (semaphore custom info, CPU_GPU). */
struct gpp_stats_udp {
	uint64_t dns;
	uint64_t dns_bytes;
	uint64_t others;
	uint64_t others_bytes;
	uint64_t total;
	uint64_t total_bytes;
};

/** TCP statistics of one receive batch (semaphore custom info, CPU_GPU). */
struct gpp_stats_tcp {
	uint32_t http;
	uint32_t http_head;
	uint32_t http_get;
	uint32_t http_post;
	uint32_t tcp_syn;
	uint32_t tcp_fin;
	uint32_t tcp_ack;
	uint32_t others;
	uint32_t total;
};

/** Page a GET asks for (`enum http_page_get`). */
enum gpp_http_page {
	GPP_HTTP_INDEX = 0,
	GPP_HTTP_CONTACTS = 1,
	GPP_HTTP_NOT_FOUND = 2,
};

/** One GET handed from the TCP kernel to the HTTP server kernel (GPU memory). Packet
 * fields are raw network-order bytes of the request. */
struct gpp_info_http {
	uint8_t eth_src_addr_bytes[6];
	uint8_t eth_dst_addr_bytes[6];
	uint32_t ip_src_addr;
	uint32_t ip_dst_addr;
	uint16_t ip_total_length;
	uint16_t tcp_src_port;
	uint16_t tcp_dst_port;
	uint8_t tcp_dt_off;
	uint32_t tcp_sent_seq;
	uint32_t tcp_recv_ack;
	uint32_t page;
};

/** A frame (its first GPP_CPU_FRAME_BYTES bytes) between the relay kernel and a CPU TCP
 * thread: `len` is the frame length on the wire, `copied` how many bytes follow. */
struct gpp_cpu_frame {
	uint32_t len;
	uint32_t copied;
	uint8_t bytes[GPP_CPU_FRAME_BYTES];
};

static_assert(sizeof(struct gpp_stats_udp) == 48, "stats_udp size");
static_assert(sizeof(struct gpp_stats_tcp) == 36, "stats_tcp size");
static_assert(sizeof(struct gpp_info_http) == 40, "info_http size");
static_assert(offsetof(struct gpp_info_http, ip_src_addr) == 12, "info_http ip_src");
static_assert(offsetof(struct gpp_info_http, ip_total_length) == 20, "info_http ip_len");
static_assert(offsetof(struct gpp_info_http, tcp_dt_off) == 26, "info_http dt_off");
static_assert(offsetof(struct gpp_info_http, tcp_sent_seq) == 28, "info_http seq");
static_assert(offsetof(struct gpp_info_http, tcp_recv_ack) == 32, "info_http ack");
static_assert(offsetof(struct gpp_info_http, page) == 36, "info_http page");
static_assert(sizeof(struct gpp_cpu_frame) == 8 + GPP_CPU_FRAME_BYTES, "cpu_frame size");

/** Queue `i` of up to four passed as separate arguments (NULL beyond the queue count). */
template <typename T>
__device__ __forceinline__ T *gpp_pick(uint32_t i, T *a0, T *a1, T *a2, T *a3)
{
	switch (i) {
	case 0:
		return a0;
	case 1:
		return a1;
	case 2:
		return a2;
	case 3:
		return a3;
	default:
		return nullptr;
	}
}

__device__ __forceinline__ uint16_t gpp_be16(const uint8_t *p)
{
	return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

__device__ __forceinline__ uint32_t gpp_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

__device__ __forceinline__ void gpp_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/** Raw (memory-order) 32-bit copy of unaligned packet bytes. */
__device__ __forceinline__ uint32_t gpp_raw32(const uint8_t *p)
{
	uint32_t v;
	uint8_t *d = (uint8_t *)&v;
	d[0] = p[0];
	d[1] = p[1];
	d[2] = p[2];
	d[3] = p[3];
	return v;
}

__device__ __forceinline__ uint16_t gpp_raw16(const uint8_t *p)
{
	uint16_t v;
	uint8_t *d = (uint8_t *)&v;
	d[0] = p[0];
	d[1] = p[1];
	return v;
}

__device__ __forceinline__ void gpp_put_raw32(uint8_t *p, uint32_t v)
{
	const uint8_t *s = (const uint8_t *)&v;
	p[0] = s[0];
	p[1] = s[1];
	p[2] = s[2];
	p[3] = s[3];
}

__device__ __forceinline__ void gpp_put_raw16(uint8_t *p, uint16_t v)
{
	const uint8_t *s = (const uint8_t *)&v;
	p[0] = s[0];
	p[1] = s[1];
}

/** Whether `f` (of `len` bytes) holds Ethernet + IPv4 (version 4, 20-byte header) with
 * protocol `proto` and at least `min_len` bytes. */
__device__ __forceinline__ bool gpp_is_ipv4(const uint8_t *f, uint32_t len, uint8_t proto, uint32_t min_len)
{
	return len >= min_len && f[12] == 0x08 && f[13] == 0x00 && f[14] == 0x45 && f[23] == proto;
}

/** Sums `x` over the warp (result valid in every lane). */
__device__ __forceinline__ unsigned long long gpp_warp_sum(unsigned long long x)
{
	for (int o = 16; o > 0; o >>= 1)
		x += __shfl_down_sync(0xffffffffu, x, o);
	return __shfl_sync(0xffffffffu, x, 0);
}

/** Reads the exit flag with a volatile load. */
__device__ __forceinline__ bool gpp_exit_requested(const uint32_t *exit_flag)
{
	return *(const volatile uint32_t *)exit_flag != 0;
}

/** Sets the exit flag (a device-side error stops every gpu_packet_processing kernel). */
__device__ __forceinline__ void gpp_request_exit(uint32_t *exit_flag)
{
	*(volatile uint32_t *)exit_flag = 1;
	__threadfence_system();
}

/**
 * Whether the warp should stop: lane 0 reads the exit flag and shares it with the warp (every
 * lane returns the same answer, so the warp leaves its loop together).
 */
__device__ __forceinline__ bool gpp_warp_exit_requested(const uint32_t *exit_flag)
{
	int stop = threadIdx.x % 32u == 0 ? gpp_exit_requested(exit_flag) : 0;
	return __shfl_sync(0xffffffffu, stop, 0) != 0;
}

/**
 * Whether a block's receive failed (`r`); if so thread 0 prints the error as the original
 * does (`proto`: "TCP", "UDP") and sets the exit flag, and the block should leave its loop.
 */
__device__ __forceinline__ bool gpp_block_recv_failed(doca_error_t r, uint32_t num, const char *proto, uint32_t *exit_flag)
{
	if (r == DOCA_SUCCESS)
		return false;
	if (threadIdx.x == 0) {
		printf("Receive %s kernel error %d Block %d rxpkts %d error %d\n",
		       proto, (int)r, (int)blockIdx.x, (int)num, (int)r);
		gpp_request_exit(exit_flag);
	}
	return true;
}

/**
 * Receives up to `max` packets with the given scope (block or warp) and synchronises that scope
 * afterwards, so that `*first`, `*num` and `attr` (shared memory) are visible to every thread.
 */
template <enum doca_gpu_dev_eth_exec_scope scope>
__device__ __forceinline__ doca_error_t gpp_recv(struct doca_gpu_eth_rxq *rxq,
						  uint32_t max,
						  uint64_t timeout_ns,
						  uint64_t *first,
						  uint32_t *num,
						  struct doca_gpu_dev_eth_rxq_attr *attr)
{
	doca_error_t r = doca_gpu_dev_eth_rxq_recv<scope,
						   DOCA_GPUNETIO_ETH_MCST_AUTO,
						   DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
						   DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(rxq, max, timeout_ns, first, num, attr);
	if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
		__syncwarp();
	else
		__syncthreads();
	return r;
}
