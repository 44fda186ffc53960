/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A GPUNetIO receive program written the way DOCA 3.3 programs are, for doca-soft's tests:
 * log backends, argp with a NULL program name, the NIC opened through the devinfo list,
 * DOCA Flow initialised and the port started, a cyclic RX queue whose packet buffer is GPU
 * memory (size from doca_eth_rxq_estimate_packet_buf_size, registered by dmabuf or memory
 * range), a root pipe steering IPv4/UDP to the queue by RSS (everything else dropped), and
 * a kernel in a separate CUDA file (gpunetio_receive_like.cu) that receives. It includes
 * only DOCA headers and relies on what they bring in (memcpy, strnlen, bool, printf,
 * PRIu64), as programs for the real SDK do.
 *
 *   gpunetio_receive_like -g <GPU PCI> -n <NIC PCI or interface> -c <packets>
 *                         [-e 0|1|2] [-t timeout_ms]
 *
 * Prints "received P bytes B number_sum S bad_length L" and exits 0 when P equals -c.
 */
#include <doca_argp.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_gpu_data_path.h>
#include <doca_flow.h>
#include <doca_gpunetio.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_types.h>

#include "gpunetio_receive_like.h"

DOCA_LOG_REGISTER(GPUNETIO_RECEIVE_LIKE);

#include "gpunetio_like_common.h"

#define MAX_PKT_SIZE 2048
#define MAX_PKT_NUM 1024

struct receive_cfg {
	struct like_names names; /* first: the shared callbacks cast the configuration */
	int count;
	int scope;
	int timeout_ms;
};

static doca_error_t count_cb(void *param, void *config)
{
	return like_positive(*(int *)param, &((struct receive_cfg *)config)->count, "count");
}

static doca_error_t scope_cb(void *param, void *config)
{
	int v = *(int *)param;
	if (v < 0 || v > 2) {
		DOCA_LOG_ERR("exec scope %d is not 0, 1 or 2", v);
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct receive_cfg *)config)->scope = v;
	return DOCA_SUCCESS;
}

static doca_error_t timeout_cb(void *param, void *config)
{
	return like_positive(*(int *)param, &((struct receive_cfg *)config)->timeout_ms, "timeout");
}

static doca_error_t register_params(void)
{
	doca_error_t r = like_register_gpu_nic();
	if (r == DOCA_SUCCESS)
		r = like_add_param("c", "count", "<packets>", "packets to receive", count_cb, DOCA_ARGP_TYPE_INT, true);
	if (r == DOCA_SUCCESS)
		r = like_add_param("e", "exec-scope", "<0|1|2>", "thread, warp or block", scope_cb, DOCA_ARGP_TYPE_INT, false);
	if (r == DOCA_SUCCESS)
		r = like_add_param("t", "timeout", "<ms>", "give up after", timeout_cb, DOCA_ARGP_TYPE_INT, false);
	return r;
}

struct resources {
	struct doca_dev *dev;
	struct doca_gpu *gpu;
	struct doca_eth_rxq *rxq;
	struct doca_mmap *mmap;
	void *pkt_gpu;
	struct doca_flow_port *port;
	struct doca_flow_pipe *pipe;
	bool flow;
	bool started;
};

static void teardown(struct resources *res)
{
	if (res->pipe != NULL)
		doca_flow_pipe_destroy(res->pipe);
	if (res->port != NULL)
		doca_flow_port_stop(res->port);
	if (res->started)
		doca_ctx_stop(doca_eth_rxq_as_doca_ctx(res->rxq));
	if (res->pkt_gpu != NULL)
		doca_gpu_mem_free(res->gpu, res->pkt_gpu);
	if (res->rxq != NULL)
		doca_eth_rxq_destroy(res->rxq);
	if (res->mmap != NULL)
		doca_mmap_destroy(res->mmap);
	if (res->gpu != NULL)
		doca_gpu_destroy(res->gpu);
	if (res->dev != NULL)
		doca_dev_close(res->dev);
	if (res->flow)
		doca_flow_destroy();
}

int main(int argc, char **argv)
{
	struct receive_cfg cfg;
	struct resources res;
	struct doca_flow_cfg *flow_cfg = NULL;
	struct doca_flow_port_cfg *port_cfg = NULL;
	struct doca_flow_pipe_cfg *pipe_cfg = NULL;
	struct doca_flow_pipe_entry *entry = NULL;
	struct doca_flow_match match;
	struct doca_flow_monitor monitor;
	struct doca_flow_fwd fwd, miss;
	struct doca_gpu_eth_rxq *gpu_rxq = NULL;
	struct receive_like_result out = {0, 0, 0, 0};
	uint16_t queue_id = 0;
	uint32_t buf_size = 0;
	int exit_code = 1;
	doca_error_t r;

	memset(&res, 0, sizeof(res));
	memset(&cfg, 0, sizeof(cfg));
	memset(&match, 0, sizeof(match));
	memset(&monitor, 0, sizeof(monitor));
	memset(&fwd, 0, sizeof(fwd));
	memset(&miss, 0, sizeof(miss));
	cfg.scope = 2;
	cfg.timeout_ms = 10000;

	if (!like_start(&cfg))
		return 1;
	TRY(register_params());
	TRY(doca_argp_start(argc, argv));

	TRY(receive_like_gpu_select(cfg.names.gpu_pci));
	TRY(like_open_nic(cfg.names.nic_pci, &res.dev));

	TRY(doca_flow_cfg_create(&flow_cfg));
	TRY(doca_flow_cfg_set_pipe_queues(flow_cfg, 1));
	TRY(doca_flow_cfg_set_mode_args(flow_cfg, "vnf,hws"));
	TRY(doca_flow_init(flow_cfg));
	res.flow = true;
	TRY(doca_flow_port_cfg_create(&port_cfg));
	TRY(doca_flow_port_cfg_set_port_id(port_cfg, 0));
	TRY(doca_flow_port_cfg_set_dev(port_cfg, res.dev));
	TRY(doca_flow_port_start(port_cfg, &res.port));

	TRY(doca_gpu_create(cfg.names.gpu_pci, &res.gpu));
	TRY(doca_eth_rxq_create(res.dev, MAX_PKT_NUM, MAX_PKT_SIZE, &res.rxq));
	TRY(doca_eth_rxq_set_type(res.rxq, DOCA_ETH_RXQ_TYPE_CYCLIC));
	TRY(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, MAX_PKT_SIZE, MAX_PKT_NUM, 0, 0, 0, &buf_size));
	buf_size = (buf_size + 65535u) & ~65535u;
	TRY(doca_mmap_create(&res.mmap));
	TRY(doca_mmap_add_dev(res.mmap, res.dev));
	TRY(doca_gpu_mem_alloc(res.gpu, buf_size, 65536, DOCA_GPU_MEM_TYPE_GPU, &res.pkt_gpu, NULL));
	TRY(like_set_gpu_range(res.mmap, res.gpu, res.pkt_gpu, buf_size));
	TRY(doca_mmap_set_permissions(res.mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	TRY(doca_mmap_start(res.mmap));
	TRY(doca_eth_rxq_set_pkt_buf(res.rxq, res.mmap, 0, buf_size));
	TRY(doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(res.rxq), res.gpu));
	TRY(doca_ctx_start(doca_eth_rxq_as_doca_ctx(res.rxq)));
	res.started = true;
	TRY(doca_eth_rxq_get_gpu_handle(res.rxq, &gpu_rxq));
	TRY(doca_eth_rxq_apply_queue_id(res.rxq, queue_id));

	/* IPv4/UDP to the queue by RSS; anything else is dropped. */
	match.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
	monitor.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.type = DOCA_FLOW_FWD_RSS;
	fwd.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.rss.queues_array = &queue_id;
	fwd.rss.nr_queues = 1;
	fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP;
	miss.type = DOCA_FLOW_FWD_DROP;
	TRY(doca_flow_pipe_cfg_create(&pipe_cfg, res.port));
	TRY(doca_flow_pipe_cfg_set_name(pipe_cfg, "UDP_GPU"));
	TRY(doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_BASIC));
	TRY(doca_flow_pipe_cfg_set_is_root(pipe_cfg, true));
	TRY(doca_flow_pipe_cfg_set_match(pipe_cfg, &match, NULL));
	TRY(doca_flow_pipe_cfg_set_monitor(pipe_cfg, &monitor));
	TRY(doca_flow_pipe_create(pipe_cfg, &fwd, &miss, &res.pipe));
	TRY(doca_flow_pipe_basic_add_entry(0, res.pipe, &match, 0, NULL, NULL, NULL, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &entry));
	TRY(doca_flow_entries_process(res.port, 0, 0, 0));

	TRY(receive_like_run(gpu_rxq, cfg.scope, (uint64_t)cfg.count, (uint32_t)cfg.timeout_ms, &out));
	printf("received %" PRIu64 " bytes %" PRIu64 " number_sum %" PRIu64 " bad_length %" PRIu64 "\n",
	       out.packets,
	       out.bytes,
	       out.number_sum,
	       out.bad_length);
	exit_code = out.packets == (uint64_t)cfg.count && out.bad_length == 0 ? 0 : 2;
out:
	if (pipe_cfg != NULL)
		doca_flow_pipe_cfg_destroy(pipe_cfg);
	if (port_cfg != NULL)
		doca_flow_port_cfg_destroy(port_cfg);
	if (flow_cfg != NULL)
		doca_flow_cfg_destroy(flow_cfg);
	teardown(&res);
	doca_argp_destroy();
	return r == DOCA_SUCCESS ? exit_code : 1;
}
