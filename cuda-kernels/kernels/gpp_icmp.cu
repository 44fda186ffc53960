// gpu_packet_processing, ICMP: one warp receives on the ICMP queue and answers each echo
// request in place (MACs and IPs swapped, TTL 128, type 0, ICMP checksum recomputed over
// the ICMP message; the IPv4 checksum is left to the send queue's L3 offload), sending the
// reply from the receive buffer with a NOTIFY completion. Other ICMP types are printed.
#include "gpp_common.cuh"

#define GPP_ICMP_MAX_RX 64u
#define GPP_ICMP_TIMEOUT_NS 50000ull

/** Internet checksum of `n` bytes at `p` (sum of 16-bit words in memory order, so the
 * result is stored as-is). */
__device__ __forceinline__ uint16_t gpp_inet_checksum(const uint8_t *p, uint32_t n)
{
	uint32_t sum = 0;
	uint32_t i = 0;
	for (; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] | ((uint32_t)p[i + 1] << 8);
	if (i < n)
		sum += p[i];
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

/** Counters in CPU-visible memory, written by lane 0 only: replies, other ICMP types,
 * malformed frames, device errors. */
struct gpp_icmp_counters {
	unsigned long long replies;
	unsigned long long unknown;
	unsigned long long malformed;
	unsigned long long errors;
};

extern "C" __global__ void doca_rs_gpp_receive_icmp(struct doca_gpu_eth_rxq *rxq,
						    struct doca_gpu_eth_txq *txq,
						    uint32_t *exit_flag,
						    struct gpp_icmp_counters *counters)
{
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[GPP_ICMP_MAX_RX];
	const uint32_t lane = threadIdx.x % 32u;
	if (rxq == nullptr || txq == nullptr || threadIdx.x >= 32u)
		return;
	const uint32_t mkey = doca_gpu_dev_eth_rxq_get_pkt_mkey(rxq);
	unsigned long long replies = 0, unknown = 0, malformed = 0;
	volatile struct gpp_icmp_counters *out = counters;
	for (;;) {
		if (gpp_warp_exit_requested(exit_flag))
			break;
		doca_error_t r = gpp_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(rxq, GPP_ICMP_MAX_RX, GPP_ICMP_TIMEOUT_NS, &first, &num, attr);
		if (r != DOCA_SUCCESS) {
			if (lane == 0) {
				printf("Receive ICMP kernel error %d warp %d lane %d error %d\n",
				       (int)r, (int)(threadIdx.x / 32u), (int)lane, (int)num);
				out->errors = 1;
				gpp_request_exit(exit_flag);
			}
			break;
		}
		const uint32_t n = num;
		unsigned long long my_replies = 0, my_unknown = 0, my_malformed = 0;
		for (uint32_t i = lane; i < n; i += 32u) {
			const uint64_t addr = doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + i);
			uint8_t *f = (uint8_t *)addr;
			const uint32_t len = attr[i].bytes;
			if (!gpp_is_ipv4(f, len, GPP_PROTO_ICMP, GPP_ICMP_HDRS)) {
				my_malformed++;
				continue;
			}
			const uint32_t ip_len = gpp_be16(f + 16);
			// The ICMP message: IP total length minus the 20-byte header, inside the frame.
			if (ip_len < GPP_IP_HDR + 8u || GPP_ETH_HDR + ip_len > len) {
				my_malformed++;
				continue;
			}
			uint8_t *icmp = f + GPP_L4;
			if (icmp[0] != 8 || icmp[1] != 0) {
				printf("Unknown ICMP type %d code %d id %d seq %d\n",
				       (int)icmp[0], (int)icmp[1], (int)gpp_be16(icmp + 4), (int)gpp_be16(icmp + 6));
				my_unknown++;
				continue;
			}
			for (int k = 0; k < 6; k++) {
				const uint8_t t = f[k];
				f[k] = f[6 + k];
				f[6 + k] = t;
			}
			for (int k = 0; k < 4; k++) {
				const uint8_t t = f[26 + k];
				f[26 + k] = f[30 + k];
				f[30 + k] = t;
			}
			f[22] = 128; // TTL
			f[24] = 0;   // IPv4 checksum: the L3 offload fills it
			f[25] = 0;
			icmp[0] = 0; // echo reply
			icmp[2] = 0;
			icmp[3] = 0;
			// Fixed on purpose: the original summed 40 bytes past the message (see the
			// example's docs); this covers exactly the ICMP message.
			const uint16_t c = gpp_inet_checksum(icmp, ip_len - GPP_IP_HDR);
			gpp_put_raw16(icmp + 2, c);
			doca_gpu_dev_eth_ticket_t ticket;
			doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
						  DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
						  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
						  DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(txq,
										       addr,
										       mkey,
										       GPP_ETH_HDR + ip_len,
										       DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY,
										       &ticket);
			my_replies++;
		}
		__syncwarp();
		my_replies = gpp_warp_sum(my_replies);
		my_unknown = gpp_warp_sum(my_unknown);
		my_malformed = gpp_warp_sum(my_malformed);
		if (lane == 0 && n != 0) {
			replies += my_replies;
			unknown += my_unknown;
			malformed += my_malformed;
			out->unknown = unknown;
			out->malformed = malformed;
			__threadfence_system();
			out->replies = replies;
			__threadfence_system();
		}
	}
}
