// gpu_packet_processing, TCP: block b receives on TCP queue b and classifies each packet
// (HTTP GET, HEAD, POST, HTTP/1.1 response, FIN, SYN, ACK, other; first match wins), posts
// each batch's counts to statistics semaphore b, and in HTTP-server mode hands every GET
// to the HTTP kernel through HTTP semaphore b (GPU memory).
#include "gpp_common.cuh"

#define GPP_TCP_MAX_RX 1024u
#define GPP_TCP_TIMEOUT_NS 1000000ull

__device__ __forceinline__ bool gpp_starts_with(const uint8_t *p, uint32_t avail, const char *s, uint32_t n)
{
	if (avail < n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)s[i])
			return false;
	return true;
}

/** Copies a GET's addressing into an HTTP semaphore item (raw network-order fields). */
__device__ __forceinline__ void gpp_fill_info_http(struct gpp_info_http *info,
						   const uint8_t *f,
						   const uint8_t *payload,
						   uint32_t payload_len)
{
	for (int k = 0; k < 6; k++) {
		info->eth_src_addr_bytes[k] = f[6 + k];
		info->eth_dst_addr_bytes[k] = f[k];
	}
	info->ip_src_addr = gpp_raw32(f + 26);
	info->ip_dst_addr = gpp_raw32(f + 30);
	info->ip_total_length = gpp_raw16(f + 16);
	info->tcp_src_port = gpp_raw16(f + GPP_L4);
	info->tcp_dst_port = gpp_raw16(f + GPP_L4 + 2);
	info->tcp_dt_off = f[GPP_L4 + 12];
	info->tcp_sent_seq = gpp_raw32(f + GPP_L4 + 4);
	info->tcp_recv_ack = gpp_raw32(f + GPP_L4 + 8);
	if (gpp_starts_with(payload + 5, payload_len >= 5 ? payload_len - 5 : 0, "index.", 6))
		info->page = GPP_HTTP_INDEX;
	else if (gpp_starts_with(payload + 5, payload_len >= 5 ? payload_len - 5 : 0, "contacts.", 9))
		info->page = GPP_HTTP_CONTACTS;
	else
		info->page = GPP_HTTP_NOT_FOUND;
}

extern "C" __global__ void doca_rs_gpp_receive_tcp(struct doca_gpu_eth_rxq *rxq0,
						   struct doca_gpu_eth_rxq *rxq1,
						   struct doca_gpu_eth_rxq *rxq2,
						   struct doca_gpu_eth_rxq *rxq3,
						   struct doca_gpu_semaphore_gpu *sem0,
						   struct doca_gpu_semaphore_gpu *sem1,
						   struct doca_gpu_semaphore_gpu *sem2,
						   struct doca_gpu_semaphore_gpu *sem3,
						   struct doca_gpu_semaphore_gpu *http0,
						   struct doca_gpu_semaphore_gpu *http1,
						   struct doca_gpu_semaphore_gpu *http2,
						   struct doca_gpu_semaphore_gpu *http3,
						   uint32_t sem_num,
						   uint32_t http_server,
						   uint32_t *exit_flag)
{
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[GPP_TCP_MAX_RX];
	// http, head, get, post, syn, fin, ack, others
	__shared__ uint32_t counts[8];
	__shared__ uint32_t http_slot;
	__shared__ int stop;
	struct doca_gpu_eth_rxq *rxq = gpp_pick(blockIdx.x, rxq0, rxq1, rxq2, rxq3);
	struct doca_gpu_semaphore_gpu *sem = gpp_pick(blockIdx.x, sem0, sem1, sem2, sem3);
	struct doca_gpu_semaphore_gpu *http = gpp_pick(blockIdx.x, http0, http1, http2, http3);
	if (rxq == nullptr || sem == nullptr || sem_num == 0 || (http_server && http == nullptr))
		return;
	uint32_t sem_idx = 0;
	if (threadIdx.x < 8)
		counts[threadIdx.x] = 0;
	if (threadIdx.x == 0)
		http_slot = 0;
	for (;;) {
		if (threadIdx.x == 0)
			stop = gpp_exit_requested(exit_flag);
		__syncthreads();
		if (stop)
			break;
		doca_error_t r = gpp_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(rxq, GPP_TCP_MAX_RX, GPP_TCP_TIMEOUT_NS, &first, &num, attr);
		if (gpp_block_recv_failed(r, num, "TCP", exit_flag))
			break;
		const uint32_t n = num;
		if (n == 0)
			continue;
		for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
			uint8_t *f = (uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + i);
			const uint32_t len = attr[i].bytes;
			int kind = 7; // others
			uint32_t payload_off = GPP_TCP_HDRS;
			if (gpp_is_ipv4(f, len, GPP_PROTO_TCP, GPP_TCP_HDRS)) {
				const uint32_t data_off = 4u * (f[GPP_L4 + 12] >> 4);
				const uint32_t ip_end = GPP_ETH_HDR + gpp_be16(f + 16);
				// The payload ends at the IP total length (Ethernet padding excluded), and
				// never past the frame.
				const uint32_t end = ip_end < len ? ip_end : len;
				if (data_off >= 20 && GPP_L4 + data_off <= end) {
					payload_off = GPP_L4 + data_off;
					const uint8_t *p = f + payload_off;
					const uint32_t plen = end - payload_off;
					const uint8_t flags = f[GPP_L4 + 13];
					if (gpp_starts_with(p, plen, "GET /", 5)) {
						kind = 2;
						if (http_server) {
							const uint32_t slot = atomicAdd(&http_slot, 1u) % sem_num;
							struct gpp_info_http *info = nullptr;
							doca_error_t e = doca_gpu_dev_semaphore_get_custom_info_addr(
								http, slot, (void **)&info);
							if (e != DOCA_SUCCESS || info == nullptr) {
								printf("TCP Error %d doca_gpu_dev_semaphore_get_custom_info_addr block %d thread %d\n",
								       (int)e, (int)blockIdx.x, (int)threadIdx.x);
								gpp_request_exit(exit_flag);
							} else {
								gpp_fill_info_http(info, f, p, plen);
								__threadfence();
								doca_gpu_dev_semaphore_set_status(http, slot,
												  DOCA_GPU_SEMAPHORE_STATUS_READY);
							}
						}
					} else if (gpp_starts_with(p, plen, "HEAD /", 6)) {
						kind = 1;
					} else if (gpp_starts_with(p, plen, "POST /", 6)) {
						kind = 3;
					} else if (gpp_starts_with(p, plen, "HTTP/1.1", 8)) {
						kind = 0;
					} else if (flags & GPP_TCP_FIN) {
						kind = 5;
					} else if (flags & GPP_TCP_SYN) {
						kind = 4;
					} else if (flags & GPP_TCP_ACK) {
						kind = 6;
					}
				}
			}
			atomicAdd(&counts[kind], 1u);
			// The original clears 32 payload bytes (inside the slot).
			for (uint32_t k = 0; k < 32; k++)
				f[payload_off + k] = 0;
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			struct gpp_stats_tcp *st = nullptr;
			doca_error_t e = doca_gpu_dev_semaphore_get_custom_info_addr(sem, sem_idx, (void **)&st);
			if (e != DOCA_SUCCESS || st == nullptr) {
				printf("TCP Error %d doca_gpu_dev_semaphore_get_custom_info_addr block %d thread %d\n",
				       (int)e, (int)blockIdx.x, (int)threadIdx.x);
				gpp_request_exit(exit_flag);
				stop = 1;
			} else {
				volatile struct gpp_stats_tcp *v = st;
				v->http = counts[0];
				v->http_head = counts[1];
				v->http_get = counts[2];
				v->http_post = counts[3];
				v->tcp_syn = counts[4];
				v->tcp_fin = counts[5];
				v->tcp_ack = counts[6];
				v->others = counts[7];
				v->total = n;
				doca_gpu_dev_semaphore_set_status(sem, sem_idx, DOCA_GPU_SEMAPHORE_STATUS_READY);
				__threadfence_system();
				sem_idx = (sem_idx + 1) % sem_num;
			}
		}
		__syncthreads();
		if (threadIdx.x < 8)
			counts[threadIdx.x] = 0;
		__syncthreads();
		if (stop)
			break;
	}
}
