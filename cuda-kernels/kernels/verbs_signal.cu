// GPU verbs sample kernels with signals and counters: put_signal_bw / put_counter_bw
// (thread and warp scope, <<<2, T/2>>>) and the put_signal_lat / put_counter_lat
// ping-pongs (<<<1, 1>>>), as DOCA 3.3's samples run them (reference facts §3.11).
#include "verbs_common.cuh"

// Each thread (warp scope: each warp) does iters / threads puts of `size` bytes, each with
// +1 on its flag at the peer (put_signal) or, through the companion QP after a WAIT for
// the write, on its counter (put_counter); the old value lands in prev[gtid]. Then every
// thread (warp: lane 0) waits until its last fetched value is base + it - 1 (`base`: the
// flag's value before this launch, launch number x it), and thread 0 waits for everything
// the QP posted.
template <enum doca_gpu_dev_verbs_exec_scope scope, bool counter>
__device__ static inline void verbs_signal_bw(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_qp *companion,
					      uint32_t iters, uint32_t size, uint64_t src, uint32_t skey, uint64_t dst,
					      uint32_t dkey, uint64_t flags, uint32_t fkey, uint64_t prev, uint32_t pkey,
					      uint64_t base, const uint32_t *exit)
{
	uint32_t gtid = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t total = gridDim.x * blockDim.x;
	uint32_t it = iters / total;
	if (it == 0)
		it = 1;
	struct doca_gpu_dev_verbs_addr r = verbs_addr(dst + (uint64_t)size * gtid, dkey);
	struct doca_gpu_dev_verbs_addr l = verbs_addr(src + (uint64_t)size * gtid, skey);
	struct doca_gpu_dev_verbs_addr sr = verbs_addr(flags + 8ull * gtid, fkey);
	struct doca_gpu_dev_verbs_addr sl = verbs_addr(prev + 8ull * gtid, pkey);
	for (uint32_t i = 0; i < it; i++) {
		if constexpr (counter)
			doca_gpu_dev_verbs_put_counter<VERBS_GPU, VERBS_AUTO, scope>(qp, r, l, size, companion, sr, sl, 1);
		else
			doca_gpu_dev_verbs_put_signal<VERBS_ADD, VERBS_GPU, VERBS_AUTO, scope>(qp, r, l, size, sr, sl, 1);
	}
	if (scope == VERBS_THREAD || doca_gpu_dev_verbs_get_lane_id() == 0) {
		const uint64_t *p = (const uint64_t *)(prev + 8ull * gtid);
		uint64_t v;
		do {
			v = verbs_load_u64(p);
		} while (v != base + it - 1 && !verbs_stopped(exit));
	}
	__syncthreads();
	if (threadIdx.x == 0)
		doca_gpu_dev_verbs_wait<VERBS_GPU, VERBS_AUTO>(qp);
}

#define VERBS_SIGNAL_BW(name, scope, counter)                                                                          \
	extern "C" __global__ void name(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_qp *companion,     \
					uint32_t iters, uint32_t size, uint64_t src, uint32_t skey, uint64_t dst,      \
					uint32_t dkey, uint64_t flags, uint32_t fkey, uint64_t prev, uint32_t pkey,    \
					uint64_t base, const uint32_t *exit)                                           \
	{                                                                                                              \
		verbs_signal_bw<scope, counter>(qp, companion, iters, size, src, skey, dst, dkey, flags, fkey, prev, pkey, \
						base, exit);                                                           \
	}

VERBS_SIGNAL_BW(doca_rs_verbs_put_signal_bw_thread, VERBS_THREAD, false)
VERBS_SIGNAL_BW(doca_rs_verbs_put_signal_bw_warp, VERBS_WARP, false)
VERBS_SIGNAL_BW(doca_rs_verbs_put_counter_bw_thread, VERBS_THREAD, true)
VERBS_SIGNAL_BW(doca_rs_verbs_put_counter_bw_warp, VERBS_WARP, true)

// The latency ping-pong: round i ends when the local flag reaches start + i + 1. The
// client sends first (put + signal/counter +1 on the peer's flag), then waits; the server
// waits, then sends. At the end each side waits for everything it posted.
template <bool counter>
__device__ static inline void verbs_signal_lat(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_qp *companion,
					       bool client, uint32_t iters, uint32_t size, uint64_t src, uint32_t skey,
					       uint64_t dst, uint32_t dkey, uint64_t rflag, uint32_t rfkey, uint64_t prev,
					       uint32_t pkey, uint64_t lflag, uint64_t start, const uint32_t *exit)
{
	const uint64_t *mine = (const uint64_t *)lflag;
	for (uint32_t i = 0; i < iters; i++) {
		if (!client) {
			while (verbs_load_u64(mine) != start + i + 1)
				if (verbs_stopped(exit))
					return;
		}
		if constexpr (counter)
			doca_gpu_dev_verbs_put_counter<VERBS_EXCL, VERBS_AUTO>(qp, verbs_addr(dst, dkey), verbs_addr(src, skey), size,
									    companion, verbs_addr(rflag, rfkey),
									    verbs_addr(prev, pkey), 1);
		else
			doca_gpu_dev_verbs_put_signal<VERBS_ADD, VERBS_EXCL, VERBS_AUTO>(qp, verbs_addr(dst, dkey),
										       verbs_addr(src, skey), size,
										       verbs_addr(rflag, rfkey),
										       verbs_addr(prev, pkey), 1);
		if (client) {
			while (verbs_load_u64(mine) != start + i + 1)
				if (verbs_stopped(exit))
					return;
		}
	}
	doca_gpu_dev_verbs_wait<VERBS_EXCL, VERBS_AUTO>(qp);
}

#define VERBS_SIGNAL_LAT(name, counter, client)                                                                        \
	extern "C" __global__ void name(struct doca_gpu_dev_verbs_qp *qp, struct doca_gpu_dev_verbs_qp *companion,     \
					uint32_t iters, uint32_t size, uint64_t src, uint32_t skey, uint64_t dst,      \
					uint32_t dkey, uint64_t rflag, uint32_t rfkey, uint64_t prev, uint32_t pkey,   \
					uint64_t lflag, uint64_t start, const uint32_t *exit)                          \
	{                                                                                                              \
		if (threadIdx.x == 0 && blockIdx.x == 0)                                                               \
			verbs_signal_lat<counter>(qp, companion, client, iters, size, src, skey, dst, dkey, rflag, rfkey,  \
						  prev, pkey, lflag, start, exit);                                     \
	}

VERBS_SIGNAL_LAT(doca_rs_verbs_put_signal_lat_client, false, true)
VERBS_SIGNAL_LAT(doca_rs_verbs_put_signal_lat_server, false, false)
VERBS_SIGNAL_LAT(doca_rs_verbs_put_counter_lat_client, true, true)
VERBS_SIGNAL_LAT(doca_rs_verbs_put_counter_lat_server, true, false)
