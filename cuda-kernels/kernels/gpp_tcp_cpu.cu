// gpu_packet_processing, CPU TCP queues (-s): the original receives TCP SYN/FIN/RST on CPU
// queues and answers from CPU send queues. The software runtime has GPU-data-path queues
// only, so warp b of this kernel plays the CPU queue pair b: it copies each frame received
// on CPU receive queue b into the next item of semaphore `rx` b (CPU-visible memory) for
// the CPU TCP thread b, and sends every reply frame that thread posts in semaphore `tx` b
// through send queue b. The thread sees whole frames and decides everything (sessions,
// Flow entries, replies), as with CPU queues.
#include "gpp_common.cuh"

#define GPP_RELAY_MAX_RX 32u
#define GPP_RELAY_TIMEOUT_NS 50000ull
/** Replies sent per loop at most (so receiving is never starved). */
#define GPP_RELAY_MAX_TX 32u

/** Per queue counters in CPU-visible memory, written by lane 0 of the queue's warp. */
struct gpp_relay_counters {
	unsigned long long received;
	unsigned long long dropped_busy; // the CPU thread had not freed the next item
	unsigned long long sent;
	unsigned long long errors;
};

extern "C" __global__ void doca_rs_gpp_tcp_cpu_relay(struct doca_gpu_eth_rxq *rxq0,
						     struct doca_gpu_eth_rxq *rxq1,
						     struct doca_gpu_eth_rxq *rxq2,
						     struct doca_gpu_eth_rxq *rxq3,
						     struct doca_gpu_semaphore_gpu *rx0,
						     struct doca_gpu_semaphore_gpu *rx1,
						     struct doca_gpu_semaphore_gpu *rx2,
						     struct doca_gpu_semaphore_gpu *rx3,
						     struct doca_gpu_eth_txq *txq0,
						     struct doca_gpu_eth_txq *txq1,
						     struct doca_gpu_eth_txq *txq2,
						     struct doca_gpu_eth_txq *txq3,
						     struct doca_gpu_semaphore_gpu *tx0,
						     struct doca_gpu_semaphore_gpu *tx1,
						     struct doca_gpu_semaphore_gpu *tx2,
						     struct doca_gpu_semaphore_gpu *tx3,
						     uint32_t sem_num,
						     uint8_t *tx_frames,
						     uint32_t tx_mkey,
						     uint32_t *exit_flag,
						     struct gpp_relay_counters *counters)
{
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[GPP_RELAY_MAX_RX];
	const uint32_t q = blockIdx.x;
	const uint32_t lane = threadIdx.x % 32u;
	struct doca_gpu_eth_rxq *rxq = gpp_pick(q, rxq0, rxq1, rxq2, rxq3);
	struct doca_gpu_semaphore_gpu *rx = gpp_pick(q, rx0, rx1, rx2, rx3);
	struct doca_gpu_eth_txq *txq = gpp_pick(q, txq0, txq1, txq2, txq3);
	struct doca_gpu_semaphore_gpu *tx = gpp_pick(q, tx0, tx1, tx2, tx3);
	if (rxq == nullptr || rx == nullptr || txq == nullptr || tx == nullptr || sem_num == 0 || threadIdx.x >= 32u)
		return;
	uint8_t *slots = tx_frames + (uint64_t)q * GPP_CPU_TX_SLOTS * GPP_CPU_FRAME_BYTES;
	volatile struct gpp_relay_counters *out = counters + q;
	uint32_t rx_next = 0, tx_next = 0, tx_slot = 0;
	unsigned long long received = 0, dropped = 0, sent = 0;
	for (;;) {
		if (gpp_warp_exit_requested(exit_flag))
			break;
		doca_error_t r = gpp_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(rxq, GPP_RELAY_MAX_RX, GPP_RELAY_TIMEOUT_NS, &first, &num, attr);
		if (r != DOCA_SUCCESS) {
			if (lane == 0) {
				printf("Receive TCP CPU relay error %d queue %d error %d\n", (int)r, (int)q, (int)r);
				out->errors = 1;
				gpp_request_exit(exit_flag);
			}
			break;
		}
		const uint32_t n = num;
		unsigned long long my_dropped = 0;
		for (uint32_t i = lane; i < n; i += 32u) {
			const uint32_t item = (rx_next + i) % sem_num;
			enum doca_gpu_semaphore_status st;
			doca_gpu_dev_semaphore_get_status(rx, item, &st);
			struct gpp_cpu_frame *cf = nullptr;
			doca_gpu_dev_semaphore_get_custom_info_addr(rx, item, (void **)&cf);
			if (cf == nullptr || (st != DOCA_GPU_SEMAPHORE_STATUS_FREE && st != DOCA_GPU_SEMAPHORE_STATUS_DONE)) {
				my_dropped++;
				continue;
			}
			const uint8_t *f = (const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + i);
			const uint32_t len = attr[i].bytes;
			const uint32_t copied = len < GPP_CPU_FRAME_BYTES ? len : GPP_CPU_FRAME_BYTES;
			volatile struct gpp_cpu_frame *v = cf;
			for (uint32_t k = 0; k < copied; k++)
				v->bytes[k] = f[k];
			v->len = len;
			v->copied = copied;
			doca_gpu_dev_semaphore_set_status(rx, item, DOCA_GPU_SEMAPHORE_STATUS_READY);
		}
		rx_next = (rx_next + n) % sem_num;
		my_dropped = gpp_warp_sum(my_dropped);
		if (lane == 0) {
			received += n;
			dropped += my_dropped;
			// Replies the CPU thread posted, in order.
			for (uint32_t k = 0; k < GPP_RELAY_MAX_TX; k++) {
				enum doca_gpu_semaphore_status st;
				doca_gpu_dev_semaphore_get_status(tx, tx_next, &st);
				if (st != DOCA_GPU_SEMAPHORE_STATUS_READY)
					break;
				struct gpp_cpu_frame *cf = nullptr;
				doca_gpu_dev_semaphore_get_custom_info_addr(tx, tx_next, (void **)&cf);
				const volatile struct gpp_cpu_frame *v = cf;
				const uint32_t len = cf == nullptr ? 0 : v->len;
				if (len >= GPP_TCP_HDRS && len <= GPP_CPU_FRAME_BYTES) {
					uint8_t *dst = slots + (uint64_t)tx_slot * GPP_CPU_FRAME_BYTES;
					for (uint32_t b = 0; b < len; b++)
						dst[b] = v->bytes[b];
					doca_gpu_dev_eth_ticket_t ticket;
					doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
								  DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
								  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
								  DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(txq,
												       (uint64_t)dst,
												       tx_mkey,
												       len,
												       DOCA_GPUNETIO_ETH_SEND_FLAG_NONE,
												       &ticket);
					sent++;
					tx_slot = (tx_slot + 1) % GPP_CPU_TX_SLOTS;
				}
				doca_gpu_dev_semaphore_set_status(tx, tx_next, DOCA_GPU_SEMAPHORE_STATUS_FREE);
				tx_next = (tx_next + 1) % sem_num;
			}
			if (n != 0 || sent != out->sent) {
				out->dropped_busy = dropped;
				out->received = received;
				__threadfence_system();
				out->sent = sent;
				__threadfence_system();
			}
		}
		__syncwarp();
	}
}
