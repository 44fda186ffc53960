// gpu_packet_processing, UDP: block b receives on UDP queue b, counts DNS (destination port
// 53) against other UDP traffic in packets and bytes, and posts each batch's counts to
// semaphore b for the CPU statistics thread (which never blocks the kernel).
#include "gpp_common.cuh"

/** Most packets one receive call takes (bounded so their lengths fit shared memory). */
#define GPP_UDP_MAX_RX 1024u
#define GPP_UDP_TIMEOUT_NS 1000000ull

extern "C" __global__ void doca_rs_gpp_receive_udp(struct doca_gpu_eth_rxq *rxq0,
						   struct doca_gpu_eth_rxq *rxq1,
						   struct doca_gpu_eth_rxq *rxq2,
						   struct doca_gpu_eth_rxq *rxq3,
						   struct doca_gpu_semaphore_gpu *sem0,
						   struct doca_gpu_semaphore_gpu *sem1,
						   struct doca_gpu_semaphore_gpu *sem2,
						   struct doca_gpu_semaphore_gpu *sem3,
						   uint32_t sem_num,
						   uint32_t *exit_flag)
{
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[GPP_UDP_MAX_RX];
	__shared__ unsigned long long dns, dns_bytes, others, others_bytes;
	__shared__ int stop;
	struct doca_gpu_eth_rxq *rxq = gpp_pick(blockIdx.x, rxq0, rxq1, rxq2, rxq3);
	struct doca_gpu_semaphore_gpu *sem = gpp_pick(blockIdx.x, sem0, sem1, sem2, sem3);
	if (rxq == nullptr || sem == nullptr || sem_num == 0)
		return;
	uint32_t sem_idx = 0;
	if (threadIdx.x == 0) {
		dns = dns_bytes = others = others_bytes = 0;
	}
	for (;;) {
		if (threadIdx.x == 0)
			stop = gpp_exit_requested(exit_flag);
		__syncthreads();
		if (stop)
			break;
		doca_error_t r = gpp_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(rxq, GPP_UDP_MAX_RX, GPP_UDP_TIMEOUT_NS, &first, &num, attr);
		if (gpp_block_recv_failed(r, num, "UDP", exit_flag))
			break;
		const uint32_t n = num;
		if (n == 0)
			continue;
		unsigned long long my_dns = 0, my_dns_bytes = 0, my_oth = 0, my_oth_bytes = 0;
		for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
			uint8_t *f = (uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + i);
			const uint32_t len = attr[i].bytes;
			if (gpp_is_ipv4(f, len, GPP_PROTO_UDP, GPP_UDP_HDRS)) {
				// As the original: the IP total length (16-bit) plus the Ethernet header.
				const uint16_t bytes = (uint16_t)(gpp_be16(f + 16) + GPP_ETH_HDR);
				if (gpp_be16(f + GPP_L4 + 2) == GPP_DNS_PORT) {
					my_dns++;
					my_dns_bytes += bytes;
				} else {
					my_oth++;
					my_oth_bytes += bytes;
				}
			} else {
				// Not a whole IPv4/UDP header: counted as other traffic, by frame size.
				my_oth++;
				my_oth_bytes += len;
			}
			// The original clears the 32 bytes from the UDP header on (inside the slot).
			for (uint32_t k = 0; k < 32; k++)
				f[GPP_L4 + k] = 0;
		}
		my_dns = gpp_warp_sum(my_dns);
		my_dns_bytes = gpp_warp_sum(my_dns_bytes);
		my_oth = gpp_warp_sum(my_oth);
		my_oth_bytes = gpp_warp_sum(my_oth_bytes);
		if ((threadIdx.x & 31u) == 0) {
			atomicAdd(&dns, my_dns);
			atomicAdd(&dns_bytes, my_dns_bytes);
			atomicAdd(&others, my_oth);
			atomicAdd(&others_bytes, my_oth_bytes);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			struct gpp_stats_udp *st = nullptr;
			doca_error_t e = doca_gpu_dev_semaphore_get_custom_info_addr(sem, sem_idx, (void **)&st);
			if (e != DOCA_SUCCESS || st == nullptr) {
				printf("UDP Error %d doca_gpu_dev_semaphore_get_custom_info_addr block %d thread %d\n",
				       (int)e, (int)blockIdx.x, (int)threadIdx.x);
				gpp_request_exit(exit_flag);
				stop = 1;
			} else {
				volatile struct gpp_stats_udp *v = st;
				v->dns = dns;
				v->dns_bytes = dns_bytes;
				v->others = others;
				v->others_bytes = others_bytes;
				v->total = n;
				v->total_bytes = dns_bytes + others_bytes;
				doca_gpu_dev_semaphore_set_status(sem, sem_idx, DOCA_GPU_SEMAPHORE_STATUS_READY);
				__threadfence_system();
				sem_idx = (sem_idx + 1) % sem_num;
			}
			dns = dns_bytes = others = others_bytes = 0;
		}
		__syncthreads();
		if (stop)
			break;
	}
}
