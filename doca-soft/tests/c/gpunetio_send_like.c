/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A GPUNetIO send program written the way DOCA 3.3 programs are, for doca-soft's tests:
 * log backends first, argp with a NULL program name and flag callbacks, the NIC opened by
 * PCI address (or interface name) through the devinfo list, a TX queue with checksum
 * offloads and completions on the GPU, frames in GPU memory registered in an mmap (dmabuf,
 * else a plain memory range), and a kernel in a separate CUDA file (gpunetio_send_like.cu)
 * that sends them. Apart from <time.h> (for the timed mode's clock) it includes only DOCA
 * headers and relies on what they bring in: calloc, free, memcpy, strnlen, assert, bool,
 * printf/FILE and PRIu64, as programs for the real SDK do.
 *
 * Built as C (gcc) and as C++ (g++) with -Wall -Wextra -Werror, linked by nvcc with the
 * device half and libdoca_soft.so.
 *
 *   gpunetio_send_like -g <GPU PCI> -n <NIC PCI or interface> [-m 0|1|2] [-r rounds]
 *                      [-s size] [-i interval_ns]
 *   -m 0: device send, warp scope; 1: low-level WQE helpers; 2: wait-on-time bursts.
 *
 * Prints "sent S completions C errors E" and, for mode 2, "held H ns" (the time the last
 * burst was held for: at least (rounds - 1) x interval). Exits 0 when every frame was sent
 * with one completion per round and no error.
 */
#include <time.h>

#include <doca_argp.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_gpu_data_path.h>
#include <doca_gpunetio.h>
#include <doca_gpunetio_eth_def.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_types.h>

#include "gpunetio_send_like.h"

DOCA_LOG_REGISTER(GPUNETIO_SEND_LIKE);

#include "gpunetio_like_common.h"

#define FRAMES_PER_ROUND 32
#define HEADERS_LEN 42 /* Ethernet 14 + IPv4 20 + UDP 8 */

struct send_cfg {
	struct like_names names; /* first: the shared callbacks cast the configuration */
	int mode;
	int rounds;
	int size;
	int interval_ns;
};

static doca_error_t mode_cb(void *param, void *config)
{
	int v = *(int *)param;
	if (v < SEND_LIKE_WARP || v > SEND_LIKE_WAIT_TIME) {
		DOCA_LOG_ERR("mode %d is not 0, 1 or 2", v);
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct send_cfg *)config)->mode = v;
	return DOCA_SUCCESS;
}

static doca_error_t rounds_cb(void *param, void *config)
{
	return like_positive(*(int *)param, &((struct send_cfg *)config)->rounds, "rounds");
}

static doca_error_t size_cb(void *param, void *config)
{
	int v = *(int *)param;
	if (v < HEADERS_LEN || v > 9000) {
		DOCA_LOG_ERR("size must be %d to 9000 bytes, not %d", HEADERS_LEN, v);
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct send_cfg *)config)->size = v;
	return DOCA_SUCCESS;
}

static doca_error_t interval_cb(void *param, void *config)
{
	return like_positive(*(int *)param, &((struct send_cfg *)config)->interval_ns, "interval");
}

static doca_error_t register_params(void)
{
	doca_error_t r = like_register_gpu_nic();
	if (r == DOCA_SUCCESS)
		r = like_add_param("m", "mode", "<0|1|2>", "warp send, low-level helpers, timed", mode_cb, DOCA_ARGP_TYPE_INT, false);
	if (r == DOCA_SUCCESS)
		r = like_add_param("r", "rounds", "<num>", "rounds of 32 frames", rounds_cb, DOCA_ARGP_TYPE_INT, false);
	if (r == DOCA_SUCCESS)
		r = like_add_param("s", "size", "<bytes>", "frame size", size_cb, DOCA_ARGP_TYPE_INT, false);
	if (r == DOCA_SUCCESS)
		r = like_add_param("i", "interval", "<ns>", "time between timed bursts", interval_cb, DOCA_ARGP_TYPE_INT, false);
	return r;
}

static uint32_t to_be32(uint32_t v)
{
	return ((v & 0xffu) << 24) | ((v & 0xff00u) << 8) | ((v >> 8) & 0xff00u) | (v >> 24);
}

/* Frame k: Ethernet (dst 10:11:12:13:14:15, src 20:21:22:23:24:25, IPv4), IPv4/UDP with
 * zero checksums (the queue's offloads fill them) and a payload naming the frame. */
static void build_frame(uint8_t *f, uint32_t size, uint32_t k)
{
	static const uint8_t eth[14] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x08, 0x00};
	static const uint8_t addrs[8] = {192, 0, 2, 1, 192, 0, 2, 2};
	static const uint8_t ports[4] = {0x30, 0x39, 0x30, 0x3a};
	uint32_t ip_len = size - 14;
	uint32_t udp_len = size - 34;

	memcpy(f, eth, sizeof(eth));
	f[14] = 0x45;
	f[16] = (uint8_t)(ip_len >> 8);
	f[17] = (uint8_t)ip_len;
	f[22] = 64;
	f[23] = 17;
	memcpy(f + 26, addrs, sizeof(addrs));
	memcpy(f + 34, ports, sizeof(ports));
	f[38] = (uint8_t)(udp_len >> 8);
	f[39] = (uint8_t)udp_len;
	for (uint32_t i = HEADERS_LEN; i < size; i++)
		f[i] = (uint8_t)(k + i);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct resources {
	struct doca_dev *dev;
	struct doca_gpu *gpu;
	struct doca_eth_txq *txq;
	struct doca_mmap *mmap;
	void *frames_gpu;
	void *times_gpu;
	bool started;
};

static void teardown(struct resources *res)
{
	if (res->started)
		doca_ctx_stop(doca_eth_txq_as_doca_ctx(res->txq));
	if (res->mmap != NULL)
		doca_mmap_destroy(res->mmap);
	if (res->frames_gpu != NULL)
		doca_gpu_mem_free(res->gpu, res->frames_gpu);
	if (res->times_gpu != NULL)
		doca_gpu_mem_free(res->gpu, res->times_gpu);
	if (res->txq != NULL)
		doca_eth_txq_destroy(res->txq);
	if (res->gpu != NULL)
		doca_gpu_destroy(res->gpu);
	if (res->dev != NULL)
		doca_dev_close(res->dev);
}

int main(int argc, char **argv)
{
	struct send_cfg cfg;
	struct resources res;
	struct doca_gpu_eth_txq *gpu_txq = NULL;
	struct send_like_result out = {0, 0, 0};
	enum doca_eth_wait_on_time_type wait_mode = DOCA_ETH_WAIT_ON_TIME_TYPE_NONE;
	uint8_t *frames = NULL;
	void *times_cpu = NULL;
	uint32_t mkey = 0, frames_len;
	uint64_t start = 0, held = 0;
	int exit_code = 1;
	doca_error_t r;

	memset(&res, 0, sizeof(res));
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = SEND_LIKE_WARP;
	cfg.rounds = 4;
	cfg.size = 256;
	cfg.interval_ns = 2000000;

	if (!like_start(&cfg))
		return 1;
	TRY(register_params());
	TRY(doca_argp_start(argc, argv));
	assert(cfg.rounds > 0 && cfg.size >= HEADERS_LEN);

	TRY(send_like_gpu_select(cfg.names.gpu_pci));
	TRY(like_open_nic(cfg.names.nic_pci, &res.dev));
	TRY(doca_gpu_create(cfg.names.gpu_pci, &res.gpu));

	TRY(doca_eth_txq_create(res.dev, 1024, &res.txq));
	TRY(doca_eth_txq_set_l3_chksum_offload(res.txq, 1));
	TRY(doca_eth_txq_set_l4_chksum_offload(res.txq, 1));
	TRY(doca_eth_txq_gpu_set_completion_on_gpu(res.txq));
	if (cfg.mode == SEND_LIKE_WAIT_TIME) {
		TRY(doca_eth_txq_cap_get_wait_on_time_offload_supported(doca_dev_as_devinfo(res.dev), &wait_mode));
		if (wait_mode == DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE)
			TRY(doca_eth_txq_set_wait_on_time_offload(res.txq));
	}
	TRY(doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(res.txq), res.gpu));
	TRY(doca_ctx_start(doca_eth_txq_as_doca_ctx(res.txq)));
	res.started = true;
	TRY(doca_eth_txq_apply_queue_id(res.txq, 0));
	TRY(doca_eth_txq_get_gpu_handle(res.txq, &gpu_txq));

	frames_len = (uint32_t)cfg.size * FRAMES_PER_ROUND;
	frames = (uint8_t *)calloc(frames_len, 1);
	if (frames == NULL) {
		r = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	for (uint32_t k = 0; k < FRAMES_PER_ROUND; k++)
		build_frame(frames + (size_t)k * (size_t)cfg.size, (uint32_t)cfg.size, k);
	TRY(doca_gpu_mem_alloc(res.gpu, frames_len, 4096, DOCA_GPU_MEM_TYPE_GPU, &res.frames_gpu, NULL));
	TRY(send_like_copy_to_gpu(res.frames_gpu, frames, frames_len));
	TRY(doca_mmap_create(&res.mmap));
	TRY(doca_mmap_add_dev(res.mmap, res.dev));
	TRY(like_set_gpu_range(res.mmap, res.gpu, res.frames_gpu, frames_len));
	TRY(doca_mmap_set_permissions(res.mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	TRY(doca_mmap_start(res.mmap));
	TRY(doca_mmap_get_mkey(res.mmap, res.dev, &mkey));

	if (cfg.mode == SEND_LIKE_WAIT_TIME) {
		TRY(doca_gpu_mem_alloc(res.gpu,
				       sizeof(uint64_t) * (size_t)cfg.rounds,
				       0,
				       DOCA_GPU_MEM_TYPE_CPU_GPU,
				       &res.times_gpu,
				       &times_cpu));
		start = now_ns();
		for (int k = 0; k < cfg.rounds; k++)
			TRY(doca_eth_txq_calculate_timestamp(res.txq,
							     start + 1000000ULL + (uint64_t)k * (uint64_t)cfg.interval_ns,
							     (uint64_t *)times_cpu + k));
	}

	TRY(send_like_run(gpu_txq,
			  (enum send_like_mode)cfg.mode,
			  res.frames_gpu,
			  to_be32(mkey),
			  (uint32_t)cfg.size,
			  (uint32_t)cfg.rounds,
			  (const uint64_t *)res.times_gpu,
			  &out));
	if (cfg.mode == SEND_LIKE_WAIT_TIME)
		held = now_ns() - start;

	printf("sent %u completions %u errors %u\n", out.sent, out.completions, out.errors);
	if (cfg.mode == SEND_LIKE_WAIT_TIME)
		printf("held %" PRIu64 " ns\n", held);
	exit_code = (out.sent == (uint32_t)cfg.rounds * FRAMES_PER_ROUND && out.completions == (uint32_t)cfg.rounds &&
		     out.errors == 0)
			    ? 0
			    : 2;
out:
	free(frames);
	teardown(&res);
	doca_argp_destroy();
	return r == DOCA_SUCCESS ? exit_code : 1;
}
