// The simple_send sample's kernels: every thread owns one frame slot of `size` bytes in a
// GPU buffer prepared by the host (pktgen frames, checksums left to the offload), stamps a
// new sequence number into it each round and sends it; completions are polled on the GPU.
// Shared-queue mode uses txq_send with thread/warp/block scope from 2 blocks; the
// exclusive (non-shared) mode writes ring entries itself from one block.
#include <doca_gpunetio_dev_eth_txq.cuh>

#include "sample_frames.cuh"

/**
 * Counters the host reads while the kernel runs (CPU-visible memory), one element per
 * block, written only by that block's thread 0 with plain stores (atomics on mapped host
 * memory are not atomic for the host; one writer needs none). The host sums the blocks.
 */
struct doca_rs_tx_stats {
	unsigned long long packets;
	unsigned long long rounds;
	unsigned long long errors;
};

/** Publishes a block's totals (packets last, so the host sees consistent numbers). */
__device__ __forceinline__ void doca_rs_tx_publish(struct doca_rs_tx_stats *stats,
						   unsigned long long packets,
						   unsigned long long rounds,
						   unsigned long long errors)
{
	volatile struct doca_rs_tx_stats *out = stats + blockIdx.x;
	out->rounds = rounds;
	out->errors = errors;
	__threadfence_system();
	out->packets = packets;
	__threadfence_system();
}

/** Whether the block should stop: exit flag set or `rounds` rounds done (0 = no limit). */
__device__ __forceinline__ bool doca_rs_tx_should_stop(const volatile uint32_t *exit_flag,
						       uint64_t round,
						       uint64_t rounds)
{
	__shared__ int stop;
	if (threadIdx.x == 0)
		stop = *exit_flag != 0 || (rounds != 0 && round >= rounds);
	__syncthreads();
	bool s = stop;
	__syncthreads();
	return s;
}

/**
 * Waits until every block of the grid arrived for round `round` (counter in device memory,
 * zeroed before launch), or the exit flag is set (a block that saw it first may never
 * arrive). The blocks share one completion queue, so a block's LAST completion only
 * proves that as many sends completed as it reserved; once both blocks have polled their
 * round, every send of the round has completed and the frames can be rewritten.
 */
__device__ __forceinline__ void doca_rs_grid_barrier(unsigned int *count,
						     uint64_t round,
						     const volatile uint32_t *exit_flag)
{
	__syncthreads();
	if (threadIdx.x == 0) {
		const unsigned int target = (unsigned int)(round + 1) * gridDim.x;
		__threadfence();
		atomicAdd(count, 1u);
		while (*(volatile unsigned int *)count < target && *exit_flag == 0)
			;
		__threadfence();
	}
	__syncthreads();
}

template <enum doca_gpu_dev_eth_exec_scope scope>
__device__ void doca_rs_simple_send_shared(struct doca_gpu_eth_txq *txq,
					   uint8_t *frames,
					   uint32_t mkey_be,
					   uint32_t size,
					   const volatile uint32_t *exit_flag,
					   uint64_t rounds,
					   struct doca_rs_tx_stats *stats,
					   unsigned int *barrier)
{
	const uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	const uint32_t total = gridDim.x * blockDim.x;
	uint8_t *frame = frames + (uint64_t)size * gtid;
	enum doca_gpu_eth_send_flags flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;
	uint32_t cqes;
	// One completion per block and round, requested by the last sender of the scope.
	if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD) {
		flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY;
		cqes = blockDim.x;
	} else if (scope == DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP) {
		if (doca_gpu_dev_eth_get_lane_id() == DOCA_GPUNETIO_ETH_WARP_SIZE - 1)
			flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY;
		cqes = blockDim.x / DOCA_GPUNETIO_ETH_WARP_SIZE;
	} else {
		if (threadIdx.x == blockDim.x - 1)
			flags = DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY;
		cqes = 1;
	}
	unsigned long long errors = 0;
	for (uint64_t round = 0; !doca_rs_tx_should_stop(exit_flag, round, rounds); round++) {
		doca_rs_write_payload(frame, size, round * total + gtid, (uint32_t)round);
		__threadfence_system();
		doca_gpu_dev_eth_ticket_t ticket;
		doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
					  DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
					  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					  scope>(txq, (uint64_t)frame, mkey_be, size, flags, &ticket);
		__syncthreads();
		if (threadIdx.x == 0) {
			uint32_t done = 0;
			doca_error_t r = doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(
				txq, cqes, DOCA_GPUNETIO_ETH_WAIT_FLAG_B, &done);
			errors += r != DOCA_SUCCESS;
			doca_rs_tx_publish(stats, (round + 1) * blockDim.x, round + 1, errors);
		}
		// The frames may be rewritten only once the round's sends completed.
		doca_rs_grid_barrier(barrier, round, exit_flag);
	}
}

/** One exported kernel per execution scope, all with the launcher's argument list. */
#define DOCA_RS_SIMPLE_SEND_SHARED_KERNEL(name, scope)                                                  \
	extern "C" __global__ void name(struct doca_gpu_eth_txq *txq,                                   \
					uint8_t *frames,                                                \
					uint32_t mkey_be,                                               \
					uint32_t size,                                                  \
					const uint32_t *exit_flag,                                      \
					uint64_t rounds,                                                \
					struct doca_rs_tx_stats *stats,                                 \
					unsigned int *barrier)                                          \
	{                                                                                               \
		doca_rs_simple_send_shared<scope>(txq, frames, mkey_be, size, exit_flag, rounds, stats, barrier); \
	}

DOCA_RS_SIMPLE_SEND_SHARED_KERNEL(doca_rs_simple_send_shared_thread, DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD)
DOCA_RS_SIMPLE_SEND_SHARED_KERNEL(doca_rs_simple_send_shared_warp, DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP)
DOCA_RS_SIMPLE_SEND_SHARED_KERNEL(doca_rs_simple_send_shared_block, DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK)

/** Exclusive queue: one block writes ring entries directly and submits them itself. */
extern "C" __global__ void doca_rs_simple_send_exclusive(struct doca_gpu_eth_txq *txq,
							 uint8_t *frames,
							 uint32_t mkey_be,
							 uint32_t size,
							 const uint32_t *exit_flag,
							 uint64_t rounds,
							 struct doca_rs_tx_stats *stats,
							 unsigned int *barrier)
{
	(void)barrier; // one block: its own completion proves the round is done
	uint8_t *frame = frames + (uint64_t)size * threadIdx.x;
	const bool last = threadIdx.x == blockDim.x - 1;
	__shared__ unsigned int prep_errors;
	uint64_t base = 0, cqe = 0;
	unsigned long long errors = 0;
	if (threadIdx.x == 0)
		prep_errors = 0;
	for (uint64_t round = 0; !doca_rs_tx_should_stop(exit_flag, round, rounds); round++) {
		doca_rs_write_payload(frame, size, round * blockDim.x + threadIdx.x, (uint32_t)round);
		__threadfence_system();
		uint16_t idx = (uint16_t)(base + threadIdx.x);
		struct doca_gpu_dev_eth_txq_wqe *wqe = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, idx);
		doca_error_t r = doca_gpu_dev_eth_txq_wqe_prepare_send(txq,
									   wqe,
									   idx,
									   (uint64_t)frame,
									   mkey_be,
									   size,
									   last ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY
										: DOCA_GPUNETIO_ETH_SEND_FLAG_NONE);
		if (r != DOCA_SUCCESS)
			atomicAdd(&prep_errors, 1u);
		__syncthreads();
		if (last) {
			doca_gpu_dev_eth_txq_submit<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
						    DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
						    DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>(txq, base + blockDim.x);
			r = doca_gpu_dev_eth_txq_poll_completion_at<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
								    DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(
				txq, cqe++, DOCA_GPUNETIO_ETH_WAIT_FLAG_B);
			errors += r != DOCA_SUCCESS;
			doca_rs_tx_publish(stats, (round + 1) * blockDim.x, round + 1, errors + prep_errors);
		}
		base += blockDim.x;
		__syncthreads();
	}
}
