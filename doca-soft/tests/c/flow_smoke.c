/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * C smoke program for DOCA Flow over libdoca_soft: the gpunetio_simple_receive control
 * plane (UDP pipe under a root control pipe) on the port named by argv[1], then teardown.
 * Exits 0 on success; prints the failing step otherwise.
 */
#include <stdio.h>
#include <string.h>

#include <doca_bitfield.h>
#include <doca_dev.h>
#include <doca_flow.h>
#include <doca_soft_port.h>

#define CHECK(call, expect)                                                                        \
	do {                                                                                       \
		doca_error_t r_ = (call);                                                          \
		if (r_ != (expect)) {                                                              \
			fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__, __LINE__, #call,      \
				doca_error_get_name(r_));                                          \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;
	char name[DOCA_DEVINFO_IFACE_NAME_SIZE];
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_port *port = NULL;
	struct doca_flow_pipe_cfg *pipe_cfg = NULL;
	struct doca_flow_pipe *udp = NULL, *root = NULL;
	struct doca_flow_pipe_entry *entry = NULL, *root_entry = NULL;
	struct doca_flow_match match, root_match;
	struct doca_flow_monitor monitor;
	struct doca_flow_fwd fwd, miss, to_udp;
	struct doca_flow_resource_query stats;
	struct doca_soft_port_counters counters;
	uint16_t queues[1] = {0};
	uint32_t i;

	if (argc != 2)
		return 2;
	CHECK(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	for (i = 0; i < n && dev == NULL; i++) {
		CHECK(doca_devinfo_get_iface_name(list[i], name, sizeof(name)), DOCA_SUCCESS);
		if (strcmp(name, argv[1]) == 0)
			CHECK(doca_dev_open(list[i], &dev), DOCA_SUCCESS);
	}
	CHECK(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	if (dev == NULL) {
		fprintf(stderr, "no device %s\n", argv[1]);
		return 1;
	}

	CHECK(doca_flow_cfg_create(&cfg), DOCA_SUCCESS);
	CHECK(doca_flow_cfg_set_pipe_queues(cfg, 1), DOCA_SUCCESS);
	CHECK(doca_flow_cfg_set_mode_args(cfg, "vnf"), DOCA_SUCCESS);
	CHECK(doca_flow_cfg_set_nr_counters(cfg, 524228), DOCA_SUCCESS);
	CHECK(doca_flow_init(cfg), DOCA_SUCCESS);
	CHECK(doca_flow_init(cfg), DOCA_ERROR_BAD_STATE);
	CHECK(doca_flow_cfg_destroy(cfg), DOCA_SUCCESS);

	CHECK(doca_flow_port_cfg_create(&pcfg), DOCA_SUCCESS);
	CHECK(doca_flow_port_cfg_set_port_id(pcfg, 0), DOCA_SUCCESS);
	CHECK(doca_flow_port_cfg_set_dev(pcfg, dev), DOCA_SUCCESS);
	CHECK(doca_flow_port_start(pcfg, &port), DOCA_SUCCESS);
	CHECK(doca_flow_port_cfg_destroy(pcfg), DOCA_SUCCESS);

	memset(&match, 0, sizeof(match));
	memset(&monitor, 0, sizeof(monitor));
	memset(&fwd, 0, sizeof(fwd));
	memset(&miss, 0, sizeof(miss));
	match.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
	monitor.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.type = DOCA_FLOW_FWD_RSS;
	fwd.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.rss.queues_array = queues;
	fwd.rss.nr_queues = 1;
	fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP;
	miss.type = DOCA_FLOW_FWD_DROP;
	CHECK(doca_flow_pipe_cfg_create(&pipe_cfg, port), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_name(pipe_cfg, "UDP_PIPE"), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_BASIC), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_is_root(pipe_cfg, false), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_match(pipe_cfg, &match, NULL), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_monitor(pipe_cfg, &monitor), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_create(pipe_cfg, &fwd, &miss, &udp), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_destroy(pipe_cfg), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_basic_add_entry(0, udp, &match, 0, NULL, NULL, NULL,
					     DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL, &entry),
	      DOCA_SUCCESS);
	CHECK(doca_flow_entries_process(port, 0, 0, 0), DOCA_SUCCESS);

	memset(&root_match, 0, sizeof(root_match));
	memset(&to_udp, 0, sizeof(to_udp));
	root_match.outer.eth.type = DOCA_HTOBE16(DOCA_FLOW_ETHER_TYPE_IPV4);
	root_match.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	root_match.outer.ip4.next_proto = DOCA_FLOW_PROTO_UDP;
	to_udp.type = DOCA_FLOW_FWD_PIPE;
	to_udp.next_pipe = udp;
	CHECK(doca_flow_pipe_cfg_create(&pipe_cfg, port), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_name(pipe_cfg, "ROOT_PIPE"), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_CONTROL), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_set_is_root(pipe_cfg, true), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_create(pipe_cfg, NULL, NULL, &root), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_cfg_destroy(pipe_cfg), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_control_add_entry(0, root, &root_match, NULL, NULL, NULL, NULL, NULL, NULL, 0,
					       &to_udp, NULL, &root_entry),
	      DOCA_SUCCESS);
	CHECK(doca_flow_entries_process(port, 0, 0, 0), DOCA_SUCCESS);

	memset(&stats, 0xff, sizeof(stats));
	CHECK(doca_flow_resource_query_entry(entry, &stats), DOCA_SUCCESS);
	if (stats.counter.total_pkts != 0 || stats.counter.total_bytes != 0) {
		fprintf(stderr, "fresh counter is not zero\n");
		return 1;
	}
	CHECK(doca_soft_port_get_counters(dev, &counters), DOCA_SUCCESS);
	if (counters.received != 0 || counters.delivered != 0)
		return 1;

	CHECK(doca_flow_pipe_remove_entry(0, 0, root_entry), DOCA_SUCCESS);
	CHECK(doca_flow_pipe_remove_entry(0, 0, root_entry), DOCA_ERROR_NOT_FOUND);
	doca_flow_pipe_destroy(root);
	doca_flow_pipe_destroy(udp);
	CHECK(doca_flow_port_stop(port), DOCA_SUCCESS);
	doca_flow_destroy();
	CHECK(doca_dev_close(dev), DOCA_SUCCESS);
	printf("flow smoke ok\n");
	return 0;
}
