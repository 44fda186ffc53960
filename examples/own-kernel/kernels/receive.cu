// own-kernel's kernels. `own_kernel_receive` receives on one GPU RX queue with the DOCA
// device API (thread scope) until the host sets the exit flag, and counts every frame, its
// bytes, and the IPv4/UDP frames sent to one destination port. `own_kernel_probe` writes a
// known value: the smallest launch that shows a driver runs code from this fatbin.
#include <doca_gpunetio_dev_eth_rxq.cuh>

#define OWN_KERNEL_MAX_PKTS 1024u
/* One receive call returns after at most 0.5 ms, so the exit flag is polled that often. */
#define OWN_KERNEL_TIMEOUT_NS 500000ull

/* What the host reads while the kernel runs (CPU-visible memory; one writing thread). Must
 * match `Stats` in src/main.rs. */
struct own_kernel_stats {
	unsigned long long packets;
	unsigned long long bytes;
	unsigned long long port_frames;
	unsigned long long errors;
};

/* The UDP destination port of an Ethernet/IPv4/UDP frame, or -1. */
__device__ static int own_kernel_udp_dst_port(const uint8_t *f, uint32_t len)
{
	if (len < 14 + 20 + 8 || f[12] != 0x08 || f[13] != 0x00 || f[23] != 17)
		return -1;
	const uint32_t l4 = 14 + (f[14] & 0x0f) * 4;
	if (l4 + 8 > len)
		return -1;
	return (f[l4 + 2] << 8) | f[l4 + 3];
}

extern "C" __global__ void own_kernel_receive(struct doca_gpu_eth_rxq *rxq,
					      const uint32_t *exit_flag, uint32_t port,
					      struct own_kernel_stats *stats)
{
	__shared__ uint64_t first;
	__shared__ uint32_t num;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[OWN_KERNEL_MAX_PKTS];
	if (threadIdx.x != 0)
		return;
	const volatile uint32_t *flag = exit_flag;
	volatile struct own_kernel_stats *out = stats;
	unsigned long long packets = 0, bytes = 0, port_frames = 0, errors = 0;
	while (*flag == 0) {
		doca_error_t r = doca_gpu_dev_eth_rxq_recv<DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD,
							   DOCA_GPUNETIO_ETH_MCST_AUTO,
							   DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
							   DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(
			rxq, OWN_KERNEL_MAX_PKTS, OWN_KERNEL_TIMEOUT_NS, &first, &num, attr);
		if (r != DOCA_SUCCESS) {
			out->errors = ++errors;
			continue;
		}
		if (num == 0)
			continue;
		for (uint32_t i = 0; i < num; i++) {
			const uint8_t *f = (const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(rxq, first + i);
			bytes += attr[i].bytes;
			if (own_kernel_udp_dst_port(f, attr[i].bytes) == (int)port)
				port_frames++;
		}
		packets += num;
		out->bytes = bytes;
		out->port_frames = port_frames;
		/* The packet count last: a host that sees it sees the other totals too. */
		__threadfence_system();
		out->packets = packets;
		__threadfence_system();
	}
}

extern "C" __global__ void own_kernel_probe(unsigned int *out)
{
	*out = 0xd0ca;
}
