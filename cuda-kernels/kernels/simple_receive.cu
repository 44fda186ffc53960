// The simple_receive sample's kernel: receive on one GPU RX queue until the exit flag is
// set, with thread, warp or block execution scope, and count packets, bytes, pktgen frames
// and the sum of their sequence numbers (so the host can check it got exactly 0..N).
#include <doca_gpunetio_dev_eth_rxq.cuh>

#include "sample_frames.cuh"

#define DOCA_RS_RX_MAX_PKTS 2048u
#define DOCA_RS_RX_TIMEOUT_NS 500000ull

/**
 * Counters the host reads while the kernel runs (CPU-visible memory). Only thread 0 of
 * the single block writes them, with plain stores: atomics on mapped host memory are not
 * atomic for the host, and one writer needs none.
 */
struct doca_rs_rx_stats {
	unsigned long long packets;
	unsigned long long bytes;
	unsigned long long pktgen_frames;
	unsigned long long seq_sum;
	unsigned long long errors;
};

template <enum doca_gpu_dev_eth_exec_scope scope>
__device__ void doca_rs_simple_receive(struct doca_gpu_eth_rxq *rxq,
				       const volatile uint32_t *exit_flag,
				       struct doca_rs_rx_stats *stats)
{
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[DOCA_RS_RX_MAX_PKTS];
	__shared__ int stop;
	__shared__ unsigned long long batch_bytes, batch_frames, batch_seqs;
	// Thread scope: one thread receives and counts, as in the original sample.
	const bool one = scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD;
	if (one && threadIdx.x != 0)
		return;
	const uint32_t step = one ? 1 : blockDim.x;
	const uint32_t tid = one ? 0 : threadIdx.x;
	volatile struct doca_rs_rx_stats *out = stats;
	// Running totals, kept by thread 0 only.
	unsigned long long packets = 0, bytes = 0, frames = 0, seqs = 0, errors = 0;

	while (true) {
		if (tid == 0) {
			stop = *exit_flag != 0;
			batch_bytes = 0;
			batch_frames = 0;
			batch_seqs = 0;
		}
		if (!one)
			__syncthreads();
		if (stop)
			break;
		doca_error_t r = doca_gpu_dev_eth_rxq_recv<scope,
							   DOCA_GPUNETIO_ETH_MCST_AUTO,
							   DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
							   DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(rxq,
											 DOCA_RS_RX_MAX_PKTS,
											 DOCA_RS_RX_TIMEOUT_NS,
											 &first,
											 &num,
											 attr);
		if (!one)
			__syncthreads();
		const uint32_t n = r == DOCA_SUCCESS ? num : 0;
		unsigned long long my_bytes = 0, my_frames = 0, my_seqs = 0;
		for (uint32_t i = tid; i < n; i += step) {
			const uint8_t *f = (const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + i);
			my_bytes += attr[i].bytes;
			int64_t seq = doca_rs_frame_seq(f, attr[i].bytes);
			if (seq >= 0) {
				my_frames++;
				my_seqs += (unsigned long long)seq;
			}
		}
		if (one) {
			batch_bytes = my_bytes;
			batch_frames = my_frames;
			batch_seqs = my_seqs;
		} else {
			if (my_bytes)
				atomicAdd(&batch_bytes, my_bytes);
			if (my_frames) {
				atomicAdd(&batch_frames, my_frames);
				atomicAdd(&batch_seqs, my_seqs);
			}
			__syncthreads();
		}
		if (tid == 0 && (n != 0 || r != DOCA_SUCCESS)) {
			packets += n;
			bytes += batch_bytes;
			frames += batch_frames;
			seqs += batch_seqs;
			errors += r != DOCA_SUCCESS;
			out->bytes = bytes;
			out->pktgen_frames = frames;
			out->seq_sum = seqs;
			out->errors = errors;
			// Packets last: a host that sees the count sees the other totals too.
			__threadfence_system();
			out->packets = packets;
			__threadfence_system();
		}
		if (!one)
			__syncthreads();
	}
}

extern "C" __global__ void doca_rs_simple_receive_thread(struct doca_gpu_eth_rxq *rxq,
							 const uint32_t *exit_flag,
							 struct doca_rs_rx_stats *stats)
{
	doca_rs_simple_receive<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(rxq, exit_flag, stats);
}

extern "C" __global__ void doca_rs_simple_receive_warp(struct doca_gpu_eth_rxq *rxq,
						       const uint32_t *exit_flag,
						       struct doca_rs_rx_stats *stats)
{
	doca_rs_simple_receive<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(rxq, exit_flag, stats);
}

extern "C" __global__ void doca_rs_simple_receive_block(struct doca_gpu_eth_rxq *rxq,
							const uint32_t *exit_flag,
							struct doca_rs_rx_stats *stats)
{
	doca_rs_simple_receive<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(rxq, exit_flag, stats);
}
