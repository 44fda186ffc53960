// Send kernel of the GPU TX bench (benches/tx_throughput.rs, tx/soft-lo-gpu-per-core): one
// block per TX queue; thread t sends frames t, t + blockDim.x, ... of the queue's frame
// array in GPU memory with the device API (thread scope), optionally paced to one frame per
// `ns_per_frame` from the kernel's start. Built by `scripts/bench build` into
// kernels/bench_tx.fatbin.
#include <doca_gpunetio_dev_eth_txq.cuh>

extern "C" __global__ void bench_tx(const uint64_t *txqs,
				    const uint64_t *bases,
				    const uint32_t *mkeys,
				    uint64_t count,
				    uint32_t slot,
				    uint32_t size,
				    uint64_t ns_per_frame)
{
	struct doca_gpu_eth_txq *txq = (struct doca_gpu_eth_txq *)txqs[blockIdx.x];
	uint64_t base = bases[blockIdx.x];
	uint32_t mkey = mkeys[blockIdx.x];
	__shared__ uint64_t t0;
	if (threadIdx.x == 0)
		t0 = doca_gpu_dev_eth_query_globaltimer();
	__syncthreads();
	for (uint64_t i = threadIdx.x; i < count; i += blockDim.x) {
		if (ns_per_frame != 0)
			while (doca_gpu_dev_eth_query_globaltimer() < t0 + i * ns_per_frame)
				;
		doca_gpu_dev_eth_ticket_t t;
		doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					  DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
					  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					  DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(txq, base + i * slot, mkey, size,
									       DOCA_GPUNETIO_ETH_SEND_FLAG_NONE, &t);
	}
}

// Timed sends of the send scheduling bench (benches/send_sched.rs): one thread sends frame i
// of the frame array with wait-on-time value waits[i] (from doca_eth_txq_calculate_timestamp),
// in order.
extern "C" __global__ void bench_wait_send(struct doca_gpu_eth_txq *txq,
					   const uint64_t *waits,
					   uint64_t base,
					   uint32_t mkey,
					   uint32_t slot,
					   uint32_t size,
					   uint64_t count)
{
	if (threadIdx.x != 0 || blockIdx.x != 0)
		return;
	for (uint64_t i = 0; i < count; i++) {
		doca_gpu_dev_eth_ticket_t t;
		doca_gpu_dev_eth_txq_wait_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					       DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
					       DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					       DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(txq, waits[i], base + i * slot, mkey, size,
										    DOCA_GPUNETIO_ETH_SEND_FLAG_NONE, &t);
	}
}
