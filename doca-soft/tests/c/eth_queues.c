/*
 * Drives the Ethernet queue host API from C through libdoca_soft.so: argument and state
 * errors, capabilities, buffer size estimate, packet buffer from an mmap, event
 * registration. Checks that the headers and the library agree on the ABI (enum, uint8_t,
 * uint16_t and union arguments, callback types). Usage: eth_queues <iface>.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_gpu_data_path.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_gpu_data_path.h>
#include <doca_gpunetio_eth_def.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_soft_queue.h>

#define CHECK(expr, want)                                                                          \
	do {                                                                                       \
		doca_error_t r_ = (expr);                                                          \
		if (r_ != (want)) {                                                                \
			fprintf(stderr, "%s:%d: %s -> %s, want %s\n", __FILE__, __LINE__, #expr,   \
				doca_error_get_name(r_), doca_error_get_name(want));               \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

static void on_error(struct doca_eth_txq_gpu_event_error_send_packet *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
}

static void on_notify(struct doca_eth_txq_gpu_event_notify_send_packet *ev, union doca_data ud)
{
	(void)ev;
	(void)ud;
}

static struct doca_dev *open_by_iface(const char *iface)
{
	struct doca_devinfo **list;
	uint32_t n = 0;
	struct doca_dev *dev = NULL;
	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++) {
		char name[DOCA_DEVINFO_IFACE_NAME_SIZE];
		if (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) == DOCA_SUCCESS && strcmp(name, iface) == 0)
			doca_dev_open(list[i], &dev);
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	struct doca_dev *dev = open_by_iface(argv[1]);
	if (dev == NULL) {
		fprintf(stderr, "no device %s\n", argv[1]);
		return 1;
	}
	const struct doca_devinfo *info = doca_dev_as_devinfo(dev);

	/* Capabilities. */
	uint32_t v32 = 0;
	CHECK(doca_eth_rxq_cap_get_max_burst_size(info, &v32), DOCA_SUCCESS);
	if (v32 < 16384)
		return 1;
	CHECK(doca_eth_rxq_cap_is_type_supported(info, DOCA_ETH_RXQ_TYPE_CYCLIC, DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU),
	      DOCA_SUCCESS);
	CHECK(doca_eth_txq_cap_is_l3_chksum_offload_supported(info), DOCA_SUCCESS);
	enum doca_eth_wait_on_time_type mode = DOCA_ETH_WAIT_ON_TIME_TYPE_NONE;
	CHECK(doca_eth_txq_cap_get_wait_on_time_offload_supported(info, &mode), DOCA_SUCCESS);
	if (mode != DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE)
		return 1;
	/* The metadata caps write one uint8_t: the bytes after it stay as they were. */
	uint8_t meta[4] = {0xa5, 0xa5, 0xa5, 0xa5};
	CHECK(doca_eth_rxq_cap_get_max_metadata_num(info, &meta[0]), DOCA_SUCCESS);
	if (meta[0] != 1 || meta[1] != 0xa5 || meta[2] != 0xa5 || meta[3] != 0xa5) {
		fprintf(stderr, "rxq metadata caps wrote %02x %02x %02x %02x\n", meta[0], meta[1], meta[2], meta[3]);
		return 1;
	}
	memset(meta, 0x5a, sizeof(meta));
	CHECK(doca_eth_txq_cap_get_max_metadata_num(info, &meta[0]), DOCA_SUCCESS);
	if (meta[0] != 1 || meta[1] != 0x5a || meta[2] != 0x5a || meta[3] != 0x5a) {
		fprintf(stderr, "txq metadata caps wrote %02x %02x %02x %02x\n", meta[0], meta[1], meta[2], meta[3]);
		return 1;
	}
	CHECK(doca_eth_rxq_cap_get_max_metadata_num(info, NULL), DOCA_ERROR_INVALID_VALUE);

	/* Buffer estimate as the samples call it. */
	uint32_t sz = 0;
	CHECK(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 2048, 16384, 0, 0, 0, &sz),
	      DOCA_SUCCESS);
	if (sz != 32u << 20)
		return 1;
	CHECK(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 2048, 16384, 0, 0, 0, NULL),
	      DOCA_ERROR_INVALID_VALUE);

	/* RX queue. */
	struct doca_eth_rxq *rxq = NULL;
	CHECK(doca_eth_rxq_create(NULL, 16, 2048, &rxq), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_eth_rxq_create(dev, 16, 2048, &rxq), DOCA_SUCCESS);
	CHECK(doca_eth_rxq_set_type(rxq, DOCA_ETH_RXQ_TYPE_CYCLIC), DOCA_SUCCESS);
	CHECK(doca_eth_rxq_set_max_packet_size(rxq, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_eth_rxq_set_timestamp(rxq, 1), DOCA_SUCCESS);
	CHECK(doca_eth_rxq_set_notification_moderation(rxq, 10, 4), DOCA_SUCCESS);
	CHECK(doca_eth_rxq_gpu_enable_mcst_qp(rxq), DOCA_SUCCESS);
	CHECK(doca_eth_rxq_gpu_set_rq_mem_type(rxq, DOCA_GPU_MEM_TYPE_GPU), DOCA_SUCCESS);
	struct doca_gpu_eth_rxq *rxh = NULL;
	CHECK(doca_eth_rxq_get_gpu_handle(rxq, &rxh), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_eth_rxq_apply_queue_id(rxq, 0), DOCA_ERROR_BAD_STATE);
	void *mem = calloc(1, 16 * 2048);
	struct doca_mmap *mmap = NULL;
	CHECK(doca_mmap_create(&mmap), DOCA_SUCCESS);
	CHECK(doca_mmap_add_dev(mmap, dev), DOCA_SUCCESS);
	CHECK(doca_mmap_set_memrange(mmap, mem, 16 * 2048), DOCA_SUCCESS);
	CHECK(doca_mmap_start(mmap), DOCA_SUCCESS);
	CHECK(doca_eth_rxq_set_pkt_buf(rxq, NULL, 0, 2048), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_eth_rxq_set_pkt_buf(rxq, mmap, 0, 16 * 2048), DOCA_SUCCESS);
	struct doca_ctx *rctx = doca_eth_rxq_as_doca_ctx(rxq);
	CHECK(doca_ctx_set_datapath_on_gpu(rctx, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_ctx_start(rctx), DOCA_ERROR_NOT_SUPPORTED); /* no GPU data path set */
	struct doca_soft_rxq_counters rc;
	memset(&rc, 0xff, sizeof(rc));
	CHECK(doca_soft_eth_rxq_get_counters(rxq, &rc), DOCA_SUCCESS);
	if (rc.received != 0 || rc.delivered != 0)
		return 1;
	CHECK(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE);
	CHECK(doca_eth_rxq_destroy(rxq), DOCA_SUCCESS);
	CHECK(doca_mmap_stop(mmap), DOCA_SUCCESS);
	CHECK(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	free(mem);

	/* TX queue. */
	struct doca_eth_txq *txq = NULL;
	CHECK(doca_eth_txq_create(dev, 0, &txq), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_eth_txq_create(dev, 8192, &txq), DOCA_SUCCESS);
	CHECK(doca_eth_txq_set_l3_chksum_offload(txq, 1), DOCA_SUCCESS);
	CHECK(doca_eth_txq_set_l4_chksum_offload(txq, 1), DOCA_SUCCESS);
	CHECK(doca_eth_txq_gpu_set_completion_on_gpu(txq), DOCA_SUCCESS);
	CHECK(doca_eth_txq_gpu_set_uar_on_cpu(txq), DOCA_SUCCESS);
	CHECK(doca_eth_txq_set_wait_on_time_offload(txq), DOCA_SUCCESS);
	CHECK(doca_eth_txq_set_type(txq, DOCA_ETH_TXQ_TYPE_REGULAR), DOCA_SUCCESS);
	uint64_t wot = 0;
	CHECK(doca_eth_txq_calculate_timestamp(txq, 1000000000ULL, &wot), DOCA_ERROR_BAD_STATE);
	union doca_data ud = {.u64 = 5};
	CHECK(doca_eth_txq_gpu_event_error_send_packet_register(txq, on_error, ud), DOCA_SUCCESS);
	CHECK(doca_eth_txq_gpu_event_notify_send_packet_register(txq, on_notify, ud), DOCA_SUCCESS);
	struct doca_pe *pe = NULL;
	CHECK(doca_pe_create(&pe), DOCA_SUCCESS);
	struct doca_ctx *tctx = doca_eth_txq_as_doca_ctx(txq);
	CHECK(doca_pe_connect_ctx(pe, tctx), DOCA_SUCCESS);
	struct doca_gpu_eth_txq *txh = NULL;
	CHECK(doca_eth_txq_get_gpu_handle(txq, &txh), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_eth_txq_gpu_cpu_proxy_progress(txq), DOCA_ERROR_BAD_STATE);
	struct doca_soft_txq_counters tc;
	CHECK(doca_soft_eth_txq_get_counters(txq, &tc), DOCA_SUCCESS);
	CHECK(doca_eth_txq_destroy(txq), DOCA_SUCCESS);
	CHECK(doca_pe_destroy(pe), DOCA_SUCCESS);
	CHECK(doca_dev_close(dev), DOCA_SUCCESS);
	printf("eth queues c smoke ok\n");
	return 0;
}
