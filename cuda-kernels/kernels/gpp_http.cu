// gpu_packet_processing, HTTP server (-s): warp w serves HTTP semaphore w and send queue w.
// Lane l watches semaphore items l, l+32, ...; for each GET the TCP kernel marked READY it
// takes the next prebuilt response frame of the page asked for (lane l uses frame slots
// l, l+32, ...), writes the reply's addresses, ports, sequence and acknowledgement numbers,
// sends it (checksums by the queue's offload) and marks the item DONE.
#include "gpp_common.cuh"

/** Rewrites the headers of a prebuilt response frame `r` for the request in `info`. */
__device__ __forceinline__ void gpp_http_fill_reply(uint8_t *r, const struct gpp_info_http *info)
{
	for (int k = 0; k < 6; k++) {
		r[k] = info->eth_src_addr_bytes[k];
		r[6 + k] = info->eth_dst_addr_bytes[k];
	}
	r[24] = 0; // IPv4 checksum: the L3 offload fills it
	r[25] = 0;
	gpp_put_raw32(r + 26, info->ip_dst_addr);
	gpp_put_raw32(r + 30, info->ip_src_addr);
	gpp_put_raw16(r + GPP_L4, info->tcp_dst_port);
	gpp_put_raw16(r + GPP_L4 + 2, info->tcp_src_port);
	// seq = the request's ack, unchanged (raw).
	gpp_put_raw32(r + GPP_L4 + 4, info->tcp_recv_ack);
	// ack = the request's seq + its TCP payload length.
	const uint8_t *lenp = (const uint8_t *)&info->ip_total_length;
	const uint32_t ip_len = gpp_be16(lenp);
	const uint32_t hdrs = GPP_IP_HDR + 4u * (info->tcp_dt_off >> 4);
	const uint32_t payload = ip_len > hdrs ? ip_len - hdrs : 0;
	const uint32_t seq = gpp_be32((const uint8_t *)&info->tcp_sent_seq);
	gpp_put_be32(r + GPP_L4 + 8, seq + payload);
	r[GPP_L4 + 16] = 0; // TCP checksum: the L4 offload fills it
	r[GPP_L4 + 17] = 0;
}

extern "C" __global__ void doca_rs_gpp_http_server(struct doca_gpu_eth_txq *txq0,
						   struct doca_gpu_eth_txq *txq1,
						   struct doca_gpu_eth_txq *txq2,
						   struct doca_gpu_eth_txq *txq3,
						   struct doca_gpu_semaphore_gpu *sem0,
						   struct doca_gpu_semaphore_gpu *sem1,
						   struct doca_gpu_semaphore_gpu *sem2,
						   struct doca_gpu_semaphore_gpu *sem3,
						   uint32_t sem_num,
						   uint8_t *index_buf,
						   uint32_t index_mkey,
						   uint32_t index_len,
						   uint8_t *contacts_buf,
						   uint32_t contacts_mkey,
						   uint32_t contacts_len,
						   uint8_t *not_found_buf,
						   uint32_t not_found_mkey,
						   uint32_t not_found_len,
						   uint32_t *exit_flag,
						   unsigned long long *sent)
{
	const uint32_t warp = threadIdx.x / 32u;
	const uint32_t lane = threadIdx.x % 32u;
	struct doca_gpu_eth_txq *txq = gpp_pick(warp, txq0, txq1, txq2, txq3);
	struct doca_gpu_semaphore_gpu *sem = gpp_pick(warp, sem0, sem1, sem2, sem3);
	if (txq == nullptr || sem == nullptr || sem_num == 0)
		return;
	uint32_t slot = lane % sem_num;
	uint32_t buf_idx = lane;
	unsigned long long answered = 0;
	while (!gpp_exit_requested(exit_flag)) {
		enum doca_gpu_semaphore_status st;
		doca_error_t r = doca_gpu_dev_semaphore_get_status(sem, slot, &st);
		if (r != DOCA_SUCCESS) {
			printf("HTTP server semaphore wait error %d Block %d error %d\n", (int)r, (int)blockIdx.x, (int)r);
			gpp_request_exit(exit_flag);
			break;
		}
		if (st != DOCA_GPU_SEMAPHORE_STATUS_READY)
			continue;
		struct gpp_info_http *info = nullptr;
		r = doca_gpu_dev_semaphore_get_custom_info_addr(sem, slot, (void **)&info);
		if (r != DOCA_SUCCESS || info == nullptr) {
			printf("TCP Error %d doca_gpu_dev_semaphore_get_custom_info_addr block %d thread %d\n",
			       (int)r, (int)blockIdx.x, (int)threadIdx.x);
			gpp_request_exit(exit_flag);
			break;
		}
		uint8_t *base;
		uint32_t mkey, len;
		if (info->page == GPP_HTTP_INDEX) {
			base = index_buf;
			mkey = index_mkey;
			len = index_len;
		} else if (info->page == GPP_HTTP_CONTACTS) {
			base = contacts_buf;
			mkey = contacts_mkey;
			len = contacts_len;
		} else {
			base = not_found_buf;
			mkey = not_found_mkey;
			len = not_found_len;
		}
		uint8_t *frame = base + (uint64_t)buf_idx * GPP_TX_BUF_MAX_SZ;
		gpp_http_fill_reply(frame, info);
		doca_gpu_dev_eth_ticket_t ticket;
		doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
					  DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
					  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					  DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(txq,
									       (uint64_t)frame,
									       mkey,
									       GPP_TCP_HDRS + len,
									       DOCA_GPUNETIO_ETH_SEND_FLAG_NONE,
									       &ticket);
		doca_gpu_dev_semaphore_set_status(sem, slot, DOCA_GPU_SEMAPHORE_STATUS_DONE);
		answered++;
		// One writer per counter: lane (warp, lane) owns sent[threadIdx.x].
		*(volatile unsigned long long *)&sent[threadIdx.x] = answered;
		slot = (slot + 32u) % sem_num;
		buf_idx = (buf_idx + 32u) % GPP_TX_BUF_NUM;
	}
}
