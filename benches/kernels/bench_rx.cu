// Receive kernel of the GPU RX benches (benches/rx_throughput.rs, GPU modes): one block per
// RX queue, each receiving bursts with the device API (block scope) and touching every
// packet's headers: Ethernet type, IPv4 protocol, and the bench payload (magic, sender,
// sequence), whose (sender, sequence) bit it sets in a bitmap so the host can check for loss
// and duplicates. Built by `scripts/bench build` into kernels/bench_rx.fatbin.
//
// bench_produce is the GPU-resident producer of the device API ceiling (figure 1,
// benches/device_ceiling.rs): it plays the NIC on rings that live in GPU memory, writing
// whole frames and completions and publishing them, so that no CPU is in the loop.
#include <doca_gpunetio_dev_eth_rxq.cuh>

#define RECV_TIMEOUT_NS 100000ULL

// progress (optional, may be NULL): 4 words per block in host-visible memory, written by
// the block's thread 0 after each receive call: packets received, receive calls,
// globaltimer of the last burst with packets, stop reason (0 running, 1 all received,
// 2 idle for idle_ns, 3 ran max_ns).

// out[] slots, shared by every block.
#define OUT_TOTAL 0     // packets received
#define OUT_FIRST_NS 1  // globaltimer of the first burst (host sets ~0 before launch)
#define OUT_LAST_NS 2   // globaltimer of the last burst
#define OUT_DUP 3       // (sender, seq) seen twice
#define OUT_FOREIGN 4   // not a bench frame, or out of range
#define OUT_ERRORS 5    // recv returned an error
#define OUT_BYTES 6     // frame bytes (L2) received

__device__ __forceinline__ uint64_t load_u64_le(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

// Parses packet `idx`'s headers and payload and marks its (sender, seq) in the bitmap;
// returns its L2 length (0 for a foreign packet, which is counted).
__device__ __forceinline__ uint32_t check_packet(struct doca_gpu_eth_rxq *rxq,
						 uint64_t idx,
						 uint32_t senders,
						 uint64_t per_sender,
						 uint32_t *bitmap,
						 unsigned long long *out)
{
	const uint8_t *p = (const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, idx);
	uint32_t ihl = (uint32_t)(p[14] & 0x0f) * 4;
	const uint8_t *pl = p + 14 + ihl + 8;
	bool ours = p[12] == 0x08 && p[13] == 0x00 && p[23] == 17 && pl[0] == 'D' && pl[1] == 'R' && pl[2] == 'S' &&
		    pl[3] == 'B';
	uint32_t sender = ours ? (uint32_t)pl[4] | ((uint32_t)pl[5] << 8) : 0;
	uint64_t seq = ours ? load_u64_le(pl + 8) : 0;
	if (!ours || sender >= senders || seq >= per_sender) {
		atomicAdd(&out[OUT_FOREIGN], 1ULL);
		return 0;
	}
	uint64_t bit = (uint64_t)sender * per_sender + seq;
	uint32_t mask = 1u << (bit & 31);
	if (atomicOr(&bitmap[bit >> 5], mask) & mask)
		atomicAdd(&out[OUT_DUP], 1ULL);
	uint32_t ip_len = ((uint32_t)p[16] << 8) | p[17];
	return ip_len + 14;
}

extern "C" __global__ void bench_rx(const uint64_t *rxqs,
				    uint64_t want,
				    uint32_t senders,
				    uint64_t per_sender,
				    uint32_t *bitmap,
				    unsigned long long *out,
				    uint64_t idle_ns,
				    uint64_t max_ns,
				    uint32_t burst,
				    unsigned long long *progress)
{
	struct doca_gpu_eth_rxq *rxq = (struct doca_gpu_eth_rxq *)rxqs[blockIdx.x];
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ int stop;
	__shared__ unsigned long long bytes;
	uint64_t start = doca_gpu_dev_eth_query_globaltimer();
	unsigned long long my_pkts = 0, my_calls = 0; // thread 0's progress counts
	if (threadIdx.x == 0)
		stop = 0;
	__syncthreads();
	while (!stop) {
		if (threadIdx.x == 0)
			bytes = 0;
		doca_error_t r = doca_gpu_dev_eth_rxq_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK,
							   DOCA_GPUNETIO_ETH_MCST_AUTO,
							   DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
							   DOCA_GPUNETIO_ETH_RX_ATTR_NONE>(rxq, burst, RECV_TIMEOUT_NS, &first, &num, nullptr);
		if (r != DOCA_SUCCESS && threadIdx.x == 0)
			atomicAdd(&out[OUT_ERRORS], 1ULL);
		// Rounds cover whole warps (k past num does no packet) so every lane takes part
		// in the warp's byte-count reduction.
		uint32_t rounds = (num + blockDim.x - 1) / blockDim.x;
		for (uint32_t r = 0; r < rounds; r++) {
			uint32_t k = r * blockDim.x + threadIdx.x;
			uint32_t my_bytes = 0;
			if (k < num)
				my_bytes = check_packet(rxq, first + k, senders, per_sender, bitmap, out);
			// One shared-memory atomic per warp instead of one per packet.
			uint32_t warp_bytes = __reduce_add_sync(0xffffffffu, my_bytes);
			if ((threadIdx.x & 31) == 0 && warp_bytes != 0)
				atomicAdd(&bytes, (unsigned long long)warp_bytes);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			uint64_t now = doca_gpu_dev_eth_query_globaltimer();
			unsigned long long total;
			if (num > 0) {
				total = atomicAdd(&out[OUT_TOTAL], (unsigned long long)num) + num;
				atomicAdd(&out[OUT_BYTES], bytes);
				atomicMin(&out[OUT_FIRST_NS], (unsigned long long)now);
				atomicMax(&out[OUT_LAST_NS], (unsigned long long)now);
			} else {
				total = atomicAdd(&out[OUT_TOTAL], 0ULL);
			}
			unsigned long long last = *(volatile unsigned long long *)&out[OUT_LAST_NS];
			if (total >= want)
				stop = 1;
			else if (last != 0 && now > last && now - last > idle_ns)
				stop = 2;
			else if (now - start > max_ns)
				stop = 3;
			if (progress != nullptr) {
				// Host-visible trace of this block (pinned host memory): packets, calls,
				// time of the last burst with packets, why it stopped.
				// Counts kept here and only written there (posted writes, no read back
				// over the bus).
				volatile unsigned long long *p = progress + 4 * blockIdx.x;
				my_pkts += num;
				my_calls++;
				p[0] = my_pkts;
				p[1] = my_calls;
				if (num > 0)
					p[2] = now;
				p[3] = (unsigned long long)stop;
			}
		}
		__syncthreads();
	}
}

// Completions kept free between producer and consumer: the consumer releases a burst before
// it reads the burst's packets, so the producer stays two bursts away from those slots.
#define PRODUCE_MARGIN(burst) (2 * (uint64_t)(burst))

// Word `w` (16 bytes) of frame `seq` of sender `sender`: the template's first 64 bytes with
// the sender and sequence patched in (little-endian words), zeros after.
__device__ __forceinline__ uint4 frame_word(const uint4 *tmpl, uint32_t w, uint32_t sender, uint64_t seq)
{
	if (w >= 4)
		return make_uint4(0, 0, 0, 0);
	uint4 t = tmpl[w];
	if (w == 2) {
		// bytes 44..47: sender at 46..47
		t.w = (t.w & 0x0000ffffu) | ((sender & 0xffffu) << 16);
	} else if (w == 3) {
		// bytes 48..63: seq at 50..57
		t.x = (t.x & 0x0000ffffu) | ((uint32_t)(seq & 0xffffu) << 16);
		t.y = (uint32_t)(seq >> 16);
		t.z = (t.z & 0xffff0000u) | (uint32_t)(seq >> 48);
	}
	return t;
}

// One block per ring: writes `per_queue` frames of `size` bytes (the first 64 bytes from
// `tmpl`, the rest zero; sender = block index, seq = 0..per_queue) and their completions,
// `burst` at a time, then publishes the burst. Threads write consecutive 16-byte words
// (a warp writes 512 contiguous bytes of one or more frames: coalesced, as a NIC's DMA
// writes whole lines). out_timeouts counts blocks that gave up after max_ns (consumer gone).
extern "C" __global__ void bench_produce(const uint64_t *rxqs,
					 uint64_t per_queue,
					 uint32_t size,
					 const uint8_t *tmpl,
					 uint64_t max_ns,
					 unsigned long long *out_timeouts,
					 uint32_t burst)
{
	struct doca_gpu_eth_rxq *rxq = (struct doca_gpu_eth_rxq *)rxqs[blockIdx.x];
	__shared__ uint64_t pi;
	__shared__ int give_up;
	uint64_t start = doca_gpu_dev_eth_query_globaltimer();
	if (threadIdx.x == 0) {
		pi = DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_pi.value);
		give_up = 0;
	}
	__syncthreads();
	const uint64_t limit = rxq->pkt_num - PRODUCE_MARGIN(burst);
	const uint4 *t4 = (const uint4 *)tmpl;
	const uint32_t words = size / 16; // the bench's sizes are multiples of 16
	const uint32_t sender = blockIdx.x;
	for (uint64_t done = 0; done < per_queue;) {
		uint32_t n = per_queue - done < burst ? (uint32_t)(per_queue - done) : burst;
		if (threadIdx.x == 0) {
			while (pi + n - DOCA_GPUNETIO_ETH_VOLATILE(rxq->cqe_ci.value) > limit) {
				if (doca_gpu_dev_eth_query_globaltimer() - start > max_ns) {
					give_up = 1;
					atomicAdd(out_timeouts, 1ULL);
					break;
				}
			}
		}
		__syncthreads();
		if (give_up)
			return;
		uint64_t now = doca_gpu_dev_eth_query_globaltimer();
		for (uint32_t c = threadIdx.x; c < n * words; c += blockDim.x) {
			uint32_t k = c / words;
			uint32_t w = c - k * words;
			uint64_t idx = pi + k;
			uint64_t seq = done + k;
			uint32_t slot = (uint32_t)(idx % rxq->pkt_num);
			uint4 *d = (uint4 *)(rxq->pkt_addr + (uint64_t)rxq->max_pkt_sz * slot);
			d[w] = frame_word(t4, w, sender, seq);
			if (w == 0) {
				struct doca_soft_rx_cqe *cq = (struct doca_soft_rx_cqe *)rxq->cqe_addr + (idx % rxq->cqe_num);
				cq->slot = slot;
				cq->bytes = size;
				cq->timestamp_ns = now;
			}
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			__threadfence();
			doca_gpu_dev_eth_store_release_sys(&rxq->cqe_pi.value, pi + n);
			pi += n;
		}
		done += n;
		__syncthreads();
	}
}
