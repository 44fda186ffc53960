// The send_wait_time sample's kernel: one block of 32 threads sends `bursts` bursts of 32
// frames (prepared by the host), each burst held by the queue until its wait-on-time
// timestamp, polling one completion per burst.
#include <doca_gpunetio_dev_eth_txq.cuh>

#define DOCA_RS_WAIT_BURST 32u

extern "C" __global__ void doca_rs_send_wait_time(struct doca_gpu_eth_txq *txq,
						  uint8_t *frames,
						  uint32_t mkey_be,
						  uint32_t size,
						  const uint64_t *wait_on_time,
						  uint32_t bursts,
						  const uint32_t *exit_flag,
						  unsigned long long *sent)
{
	__shared__ int stop;
	for (uint32_t b = 0; b < bursts; b++) {
		if (threadIdx.x == 0)
			stop = *(const volatile uint32_t *)exit_flag != 0;
		__syncthreads();
		if (stop)
			break;
		uint8_t *frame = frames + (uint64_t)size * (b * blockDim.x + threadIdx.x);
		doca_gpu_dev_eth_ticket_t ticket;
		doca_gpu_dev_eth_txq_wait_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
					       DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
					       DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					       DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(
			txq,
			wait_on_time[b],
			(uint64_t)frame,
			mkey_be,
			size,
			threadIdx.x == blockDim.x - 1 ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY
						      : DOCA_GPUNETIO_ETH_SEND_FLAG_NONE,
			&ticket);
		__syncthreads();
		if (threadIdx.x == 0) {
			uint32_t done = 0;
			doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
				txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);
			// One writer (this thread): a plain store to the CPU-visible counter.
			*(volatile unsigned long long *)sent = (unsigned long long)(b + 1) * blockDim.x;
			__threadfence_system();
		}
		__syncthreads();
	}
}
