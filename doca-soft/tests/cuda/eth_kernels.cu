// Kernels for the GPU tests of the Ethernet device API (doca-soft/tests/eth_gpu.rs): one
// receive kernel per execution scope and one send kernel per send mode, with extern "C"
// names so the test loads them by name.
#include <doca_gpunetio_dev_eth_rxq.cuh>
#include <doca_gpunetio_dev_eth_txq.cuh>
#include <doca_gpunetio_dev_sem.cuh>

#define RX_BATCH 64
#define RX_TIMEOUT_NS 100000ULL
#define DEADLINE_NS 10000000000ULL

// Adds one frame of `bytes` bytes at `p` to out[1] (lengths) and out[2] (payload bytes).
__device__ void rx_count_frame(unsigned long long *out, const uint8_t *p, uint32_t bytes)
{
	unsigned long long s = 0;
	for (uint32_t i = 0; i < bytes; i++)
		s += p[i];
	atomicAdd(&out[1], (unsigned long long)bytes);
	atomicAdd(&out[2], s);
}

// Ends a receive round of the block: `*stop` (shared) once `total` reached `want` or the
// deadline passed.
__device__ void rx_round_end(uint32_t total, uint32_t want, uint64_t deadline, int *stop)
{
	__syncthreads();
	if (threadIdx.x == 0 && (total >= want || doca_gpu_dev_eth_query_globaltimer() > deadline))
		*stop = 1;
	__syncthreads();
}

// out[0] packets, out[1] sum of lengths, out[2] sum of payload bytes, out[3] error count.
template <enum doca_gpu_dev_eth_exec_scope S>
__device__ void rx_body(struct doca_gpu_eth_rxq *rxq, uint32_t want, unsigned long long *out)
{
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[RX_BATCH];
	__shared__ int stop;
	uint64_t deadline = doca_gpu_dev_eth_query_globaltimer() + DEADLINE_NS;
	uint32_t total = 0;
	if (threadIdx.x == 0)
		stop = 0;
	__syncthreads();
	while (!stop) {
		doca_error_t r = DOCA_SUCCESS;
		// Thread scope: thread 0 receives for the block.
		if (S != DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD || threadIdx.x == 0)
			r = doca_gpu_dev_eth_rxq_recv<S,
						      DOCA_GPUNETIO_ETH_MCST_AUTO,
						      DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
						      DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(rxq, RX_BATCH, RX_TIMEOUT_NS, &first, &num, attr);
		if (r != DOCA_SUCCESS)
			atomicAdd(&out[3], 1ULL);
		__syncthreads();
		for (uint32_t k = threadIdx.x; k < num; k += blockDim.x) {
			const uint8_t *p = (const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + k);
			uint32_t bytes = attr[k].bytes;
			if (bytes != doca_gpu_dev_eth_rxq_get_pkt_bytes(rxq, first + k))
				atomicAdd(&out[3], 1ULL);
			// The packet's mlx5 completion: a receive, its length, its slot.
			const struct mlx5_cqe64 *cqe = doca_gpu_dev_eth_rxq_get_pkt_cqe(rxq, first + k);
			if ((cqe->op_own >> 4) != MLX5_CQE_RESP_SEND || doca_gpu_dev_eth_bswap32(cqe->byte_cnt) != bytes ||
			    (DOCA_GPUNETIO_ETH_BSWAP16(cqe->wqe_counter) & rxq->wqe_mask) != (first + k) % rxq->pkt_num)
				atomicAdd(&out[3], 1ULL);
			rx_count_frame(out, p, bytes);
		}
		total += num;
		rx_round_end(total, want, deadline, &stop);
	}
	if (threadIdx.x == 0)
		out[0] = total;
}

extern "C" __global__ void rx_thread(struct doca_gpu_eth_rxq *rxq, uint32_t want, unsigned long long *out)
{
	rx_body<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(rxq, want, out);
}

extern "C" __global__ void rx_warp(struct doca_gpu_eth_rxq *rxq, uint32_t want, unsigned long long *out)
{
	rx_body<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(rxq, want, out);
}

extern "C" __global__ void rx_block(struct doca_gpu_eth_rxq *rxq, uint32_t want, unsigned long long *out)
{
	rx_body<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(rxq, want, out);
}

// Legacy receive (doca_gpu_buf based), block scope.
extern "C" __global__ void rx_legacy_block(struct doca_gpu_eth_rxq *rxq, uint32_t want, unsigned long long *out)
{
	__shared__ uint32_t num;
	__shared__ uint64_t first;
	__shared__ int stop;
	uint64_t deadline = doca_gpu_dev_eth_query_globaltimer() + DEADLINE_NS;
	uint32_t total = 0;
	if (threadIdx.x == 0)
		stop = 0;
	__syncthreads();
	while (!stop) {
		doca_gpu_dev_eth_rxq_receive_block(rxq, RX_BATCH, RX_TIMEOUT_NS, &num, &first);
		for (uint32_t k = threadIdx.x; k < num; k += blockDim.x) {
			struct doca_gpu_buf *buf;
			uintptr_t addr;
			uint32_t bytes;
			doca_gpu_dev_eth_rxq_get_buf(rxq, first + k, &buf);
			doca_gpu_dev_buf_get_addr(buf, &addr);
			doca_gpu_dev_eth_rxq_get_buf_bytes(rxq, first + k, &bytes);
			rx_count_frame(out, (const uint8_t *)addr, bytes);
		}
		total += num;
		rx_round_end(total, want, deadline, &stop);
	}
	if (threadIdx.x == 0)
		out[0] = total;
}

// Waits (non-blocking polls, bounded by DEADLINE_NS so a broken proxy fails the test
// instead of hanging it) for one completion; returns the poll status, *n the completions.
__device__ doca_error_t wait_one_completion(struct doca_gpu_eth_txq *txq, uint32_t *n)
{
	uint64_t deadline = doca_gpu_dev_eth_query_globaltimer() + DEADLINE_NS;
	doca_error_t r;
	do {
		*n = 0;
		r = doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_LAST>(txq, 1, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB, n);
	} while (r == DOCA_SUCCESS && *n == 0 && doca_gpu_dev_eth_query_globaltimer() < deadline);
	return r;
}

// Every thread sends frame tid (base + tid * size); NOTIFY on the last one; thread 0 waits
// for that completion. out[0] = poll status, out[1] = completions, out[2] = max ticket + 1.
template <enum doca_gpu_dev_eth_exec_scope S>
__device__ void tx_body(struct doca_gpu_eth_txq *txq, uint64_t base, uint32_t mkey, uint32_t size, unsigned long long *out)
{
	uint32_t tid = threadIdx.x;
	enum doca_gpu_eth_send_flags f =
		tid == blockDim.x - 1 ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY : DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;
	doca_gpu_dev_eth_ticket_t t;
	doca_gpu_dev_eth_txq_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
				  DOCA_GPUNETIO_ETH_SYNC_SCOPE_GPU,
				  DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
				  S>(txq, base + (uint64_t)tid * size, mkey, size, f, &t);
	atomicMax(&out[2], (unsigned long long)(t + 1));
	__syncthreads();
	if (tid == 0) {
		uint32_t n = 0;
		out[0] = wait_one_completion(txq, &n);
		out[1] = n;
	}
}

extern "C" __global__ void tx_thread(struct doca_gpu_eth_txq *txq, uint64_t base, uint32_t mkey, uint32_t size, unsigned long long *out)
{
	tx_body<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(txq, base, mkey, size, out);
}

extern "C" __global__ void tx_warp(struct doca_gpu_eth_txq *txq, uint64_t base, uint32_t mkey, uint32_t size, unsigned long long *out)
{
	tx_body<DOCA_GPUNETIO_ETH_EXEC_SCOPE_WARP>(txq, base, mkey, size, out);
}

extern "C" __global__ void tx_block(struct doca_gpu_eth_txq *txq, uint64_t base, uint32_t mkey, uint32_t size, unsigned long long *out)
{
	tx_body<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(txq, base, mkey, size, out);
}

// Timed send of the whole block after `wait_ts` (a wait-on-time value).
extern "C" __global__ void tx_wait_block(struct doca_gpu_eth_txq *txq,
					 uint64_t wait_ts,
					 uint64_t base,
					 uint32_t mkey,
					 uint32_t size,
					 unsigned long long *out)
{
	uint32_t tid = threadIdx.x;
	enum doca_gpu_eth_send_flags f =
		tid == blockDim.x - 1 ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY : DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;
	doca_gpu_dev_eth_ticket_t t;
	doca_gpu_dev_eth_txq_wait_send<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
				       DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
				       DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
				       DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK>(txq, wait_ts, base + (uint64_t)tid * size, mkey, size, f, &t);
	__syncthreads();
	if (tid == 0) {
		uint32_t n = 0;
		out[0] = wait_one_completion(txq, &n);
		out[1] = n;
	}
}

// Non-shared queue: each thread prepares its own entry, the last one submits, then waits for
// completion number `cqe_idx` (NOTIFY on the last entry).
extern "C" __global__ void tx_lowlevel(struct doca_gpu_eth_txq *txq,
				       uint64_t base,
				       uint32_t mkey,
				       uint32_t size,
				       uint64_t first_idx,
				       unsigned long long *out)
{
	uint32_t tid = threadIdx.x;
	uint64_t idx = first_idx + tid;
	enum doca_gpu_eth_send_flags f =
		tid == blockDim.x - 1 ? DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY : DOCA_GPUNETIO_ETH_SEND_FLAG_NONE;
	struct doca_gpu_dev_eth_txq_wqe *w = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, (uint16_t)idx);
	doca_gpu_dev_eth_txq_wqe_prepare_send(txq, w, (uint16_t)idx, base + (uint64_t)tid * size, mkey, size, f);
	__syncthreads();
	if (tid == blockDim.x - 1) {
		doca_gpu_dev_eth_txq_submit<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
					    DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
					    DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO>(txq, idx + 1);
		uint64_t deadline = doca_gpu_dev_eth_query_globaltimer() + DEADLINE_NS;
		doca_error_t r;
		do {
			r = doca_gpu_dev_eth_txq_poll_completion_at<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU,
								    DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(
				txq, 0, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB);
		} while (r == DOCA_ERROR_AGAIN && doca_gpu_dev_eth_query_globaltimer() < deadline);
		out[0] = r;
		out[1] = r == DOCA_SUCCESS ? 1 : 0;
	}
}

// One enhanced multi-packet WQE carrying every thread's frame (blockDim <= 61), built by
// thread 0 with the low-level helpers; NOTIFY on it; thread 0 waits for its completion.
extern "C" __global__ void tx_empw(struct doca_gpu_eth_txq *txq, uint64_t base, uint32_t mkey, uint32_t size, unsigned long long *out)
{
	__shared__ uint64_t addr[DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM];
	__shared__ uint32_t keys[DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM];
	__shared__ uint32_t lens[DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM];
	uint32_t tid = threadIdx.x;
	if (tid < DOCA_GPUNETIO_ETH_EMPW_DSEG_MAX_NUM) {
		addr[tid] = base + (uint64_t)tid * size;
		keys[tid] = mkey;
		lens[tid] = size;
	}
	__syncthreads();
	if (tid == 0) {
		uint32_t n = blockDim.x;
		uint32_t slots = (2 + n + DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE - 1) / DOCA_GPUNETIO_ETH_EMPW_SEGMENTS_PER_WQE;
		uint64_t idx = doca_gpu_dev_eth_txq_reserve_wq_slots<DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_GPU>(txq, slots);
		struct doca_gpu_dev_eth_txq_wqe *w = doca_gpu_dev_eth_txq_get_wqe_ptr(txq, (uint16_t)idx);
		doca_error_t r = doca_gpu_dev_eth_txq_wqe_prepare_send_empw(txq, w, (uint16_t)idx, addr, keys, lens, n,
									    DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY);
		doca_gpu_dev_eth_txq_mark_wqes_ready(txq, idx, idx + slots - 1);
		doca_gpu_dev_eth_txq_submit(txq, idx + slots);
		uint32_t done = 0;
		out[0] = r != DOCA_SUCCESS ? r : wait_one_completion(txq, &done);
		out[1] = done;
		out[2] = idx + slots;
	}
}

// Semaphore items: thread i sets item i READY with packet info (i, 100 + i) and writes i
// into its custom info.
extern "C" __global__ void sem_fill(struct doca_gpu_semaphore_gpu *sem, unsigned long long *out)
{
	uint32_t i = threadIdx.x;
	void *info;
	doca_error_t r = doca_gpu_dev_semaphore_get_custom_info_addr(sem, i, &info);
	if (r == DOCA_SUCCESS)
		*(uint32_t *)info = i;
	r = (doca_error_t)(r | doca_gpu_dev_semaphore_set_packet_info(sem, i, DOCA_GPU_SEMAPHORE_STATUS_READY, i, 100 + i));
	if (r != DOCA_SUCCESS)
		atomicAdd(&out[0], 1ULL);
}

// Pre-3.2 send API: every thread enqueues weakly at position + tid from `bufs`, thread 0
// commits and pushes, then waits for the NOTIFY completion of the last one.
extern "C" __global__ void tx_legacy(struct doca_gpu_eth_txq *txq, const struct doca_gpu_buf *bufs, uint32_t size, unsigned long long *out)
{
	__shared__ uint32_t pos;
	uint32_t tid = threadIdx.x;
	if (tid == 0) {
		uint32_t mask;
		doca_gpu_dev_eth_txq_get_info(txq, &pos, &mask);
	}
	__syncthreads();
	uint32_t flags = tid == blockDim.x - 1 ? DOCA_GPU_SEND_FLAG_NOTIFY : DOCA_GPU_SEND_FLAG_NONE;
	if (doca_gpu_dev_eth_txq_send_enqueue_weak(txq, &bufs[tid], size, pos + tid, flags) != DOCA_SUCCESS)
		atomicAdd(&out[2], 1ULL);
	__syncthreads();
	if (tid == 0) {
		doca_gpu_dev_eth_txq_commit_weak(txq, blockDim.x);
		doca_gpu_dev_eth_txq_push(txq);
		uint64_t deadline = doca_gpu_dev_eth_query_globaltimer() + DEADLINE_NS;
		uint32_t n = 0;
		doca_error_t r;
		do {
			r = doca_gpu_dev_eth_txq_wait_completion(txq, 1, DOCA_GPU_ETH_TXQ_WAIT_FLAG_NB, &n);
		} while (r == DOCA_SUCCESS && n == 0 && doca_gpu_dev_eth_query_globaltimer() < deadline);
		out[0] = r;
		out[1] = n;
	}
}
