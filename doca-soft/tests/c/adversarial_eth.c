/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Adversarial cases of the Ethernet queue and GPU family: doca_eth_rxq, doca_eth_txq,
 * doca_gpu and semaphores under NULL arguments, zero and huge sizes, packet buffers outside
 * their mmap, wrong states, and (without a GPU) GPU calls that must fail cleanly. See
 * adversarial.h for the harness.
 */
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_gpu_data_path.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_gpu_data_path.h>
#include <doca_gpunetio.h>
#include <doca_mmap.h>

#include "adversarial.h"

static int rxq_bad_sizes(void)
{
	struct doca_dev *dev = adv_open_iface("adv0");
	struct doca_eth_rxq *q = NULL;

	ADV_CHECK(dev != NULL);
	ADV_EXPECT(doca_eth_rxq_create(NULL, 32, 1600, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_rxq_create(dev, 32, 1600, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_rxq_create(dev, 0, 1600, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_rxq_create(dev, 32, 0, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_rxq_create(dev, UINT32_MAX, 1600, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_rxq_create(dev, 32, UINT32_MAX, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_CHECK(q == NULL);
	ADV_EXPECT(doca_eth_rxq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_CHECK(doca_eth_rxq_as_doca_ctx(NULL) == NULL);
	ADV_EXPECT(doca_dev_close(dev), DOCA_SUCCESS);
	return 0;
}

static int rxq_estimate_overflows(void)
{
	uint32_t size = 0;

	ADV_EXPECT(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, UINT32_MAX,
							 UINT32_MAX, 0, 0, 0, &size),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 1600, 32, 0,
							 0, 0, NULL),
		   DOCA_ERROR_INVALID_VALUE);
	return 0;
}

/* Whether starting q fails with a code that refuses the configuration. */
static int start_refused(struct doca_eth_rxq *q)
{
	doca_error_t r = doca_ctx_start(doca_eth_rxq_as_doca_ctx(q));

	return r == DOCA_ERROR_INVALID_VALUE || r == DOCA_ERROR_NOT_SUPPORTED;
}

static int rxq_packet_buffer_outside_its_mmap(void)
{
	static char mem[1 << 16];
	struct doca_dev *dev = adv_open_iface("adv0");
	struct doca_eth_rxq *q = NULL;
	struct doca_mmap *m = NULL;
	doca_error_t r;

	ADV_CHECK(dev != NULL);
	ADV_EXPECT(doca_mmap_create(&m), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_set_memrange(m, mem, sizeof(mem)), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_add_dev(m, dev), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_start(m), DOCA_SUCCESS);
	ADV_EXPECT(doca_eth_rxq_create(dev, 32, 1600, &q), DOCA_SUCCESS);
	ADV_EXPECT(doca_eth_rxq_set_pkt_buf(q, NULL, 0, 4096), DOCA_ERROR_INVALID_VALUE);
	/* Started without a packet buffer. */
	ADV_CHECK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(q)) != DOCA_SUCCESS);
	/* Windows past the mmap (the end wrapping 32 bits, or one byte past): refused when set or
	 * at start (NOT_SUPPORTED comes first here: no GPU data path without a GPU), never used. */
	r = doca_eth_rxq_set_pkt_buf(q, m, UINT32_MAX, UINT32_MAX);
	if (r == DOCA_SUCCESS)
		ADV_CHECK(start_refused(q));
	else
		ADV_EXPECT(r, DOCA_ERROR_INVALID_VALUE);
	r = doca_eth_rxq_set_pkt_buf(q, m, 0, sizeof(mem) + 1);
	if (r == DOCA_SUCCESS)
		ADV_CHECK(start_refused(q));
	else
		ADV_EXPECT(r, DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_rxq_destroy(q), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_destroy(m), DOCA_SUCCESS);
	ADV_EXPECT(doca_dev_close(dev), DOCA_SUCCESS);
	return 0;
}

static int txq_bad_sizes_and_states(void)
{
	struct doca_dev *dev = adv_open_iface("adv0");
	struct doca_eth_txq *q = NULL;
	struct doca_gpu_eth_txq *g = NULL;

	ADV_CHECK(dev != NULL);
	ADV_EXPECT(doca_eth_txq_create(NULL, 32, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_txq_create(dev, 32, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_txq_create(dev, 0, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_txq_create(dev, UINT32_MAX, &q), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_txq_create(dev, 32, &q), DOCA_SUCCESS);
	/* No GPU data path was set on this queue. */
	ADV_EXPECT(doca_eth_txq_get_gpu_handle(q, &g), DOCA_ERROR_NOT_SUPPORTED);
	ADV_EXPECT(doca_eth_txq_get_gpu_handle(q, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_eth_txq_calculate_timestamp(q, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_ctx_stop(doca_eth_txq_as_doca_ctx(q)), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_eth_txq_destroy(q), DOCA_SUCCESS);
	ADV_EXPECT(doca_eth_txq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_dev_close(dev), DOCA_SUCCESS);
	return 0;
}

static int gpu_calls_fail_cleanly(void)
{
	struct doca_gpu *gpu = NULL;
	struct doca_gpu_semaphore *sem = NULL;
	void *g = NULL, *c = NULL;
	doca_error_t r;

	ADV_EXPECT(doca_gpu_create(NULL, &gpu), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_gpu_create("17:00.0", NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_gpu_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_gpu_mem_alloc(NULL, 4096, 4096, DOCA_GPU_MEM_TYPE_GPU, &g, &c),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_gpu_mem_free(NULL, g), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_gpu_semaphore_create(NULL, &sem), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_gpu_semaphore_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	/* A bus id that is no GPU: an error code, whether or not CUDA is present. */
	r = doca_gpu_create("zz:99.9", &gpu);
	ADV_CHECK(r != DOCA_SUCCESS);
	ADV_CHECK(gpu == NULL);
	return 0;
}

/* With a GPU: sizes a caller controls fail with a code, never abort. Skipped (passes
 * trivially, saying so) without one. */
static int gpu_sizes_too_large(void)
{
	struct doca_gpu *gpu = NULL;
	struct doca_gpu_semaphore *sem = NULL;
	void *g = NULL, *c = NULL;
	const char *bus = getenv("ADV_GPU_BUS_ID");

	if (bus == NULL || doca_gpu_create(bus, &gpu) != DOCA_SUCCESS) {
		printf("  skipped: no GPU (set ADV_GPU_BUS_ID)\n");
		return 0;
	}
	ADV_CHECK(doca_gpu_mem_alloc(gpu, SIZE_MAX, 4096, DOCA_GPU_MEM_TYPE_GPU, &g, &c) != DOCA_SUCCESS);
	ADV_CHECK(doca_gpu_mem_alloc(gpu, (size_t)1 << 50, 4096, DOCA_GPU_MEM_TYPE_CPU_GPU, &g, &c) !=
		  DOCA_SUCCESS);
	ADV_EXPECT(doca_gpu_semaphore_create(gpu, &sem), DOCA_SUCCESS);
	ADV_EXPECT(doca_gpu_semaphore_set_memory_type(sem, DOCA_GPU_MEM_TYPE_CPU_GPU), DOCA_SUCCESS);
	ADV_EXPECT(doca_gpu_semaphore_set_items_num(sem, UINT32_MAX), DOCA_SUCCESS);
	ADV_EXPECT(doca_gpu_semaphore_set_custom_info(sem, UINT32_MAX, DOCA_GPU_MEM_TYPE_CPU_GPU),
		   DOCA_SUCCESS);
	ADV_CHECK(doca_gpu_semaphore_start(sem) != DOCA_SUCCESS);
	ADV_EXPECT(doca_gpu_semaphore_destroy(sem), DOCA_SUCCESS);
	ADV_EXPECT(doca_gpu_destroy(gpu), DOCA_SUCCESS);
	return 0;
}

static const struct adv_case cases[] = {
	ADV_CASE(rxq_bad_sizes),
	ADV_CASE(rxq_estimate_overflows),
	ADV_CASE(rxq_packet_buffer_outside_its_mmap),
	ADV_CASE(txq_bad_sizes_and_states),
	ADV_CASE(gpu_calls_fail_cleanly),
	ADV_CASE(gpu_sizes_too_large),
};

ADV_MAIN(cases)
