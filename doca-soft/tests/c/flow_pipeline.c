/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A DOCA Flow program written the way DOCA programs are, for doca-soft's tests (built as C
 * and as C++, -Wall -Wextra -Werror): argp flags with callbacks, Flow initialised with
 * entry and pipe callbacks, then three pipes on one port:
 *
 *   ROOT (CONTROL, ordered by priority, lower first):
 *                   0: UDP          -> UDP_REWRITE
 *                   1: TCP with SYN -> drop (counted)
 *                   2: ICMP         -> ICMP_SPREAD (hash-pipe forward)
 *                   3: any TCP      -> back out of the port (counted; added before the
 *                                      SYN entry, which still wins for SYN frames)
 *   UDP_REWRITE (BASIC): per-entry UDP destination port; actions set the destination MAC,
 *                   a per-entry IPv4 destination, and decrement the TTL (ADD descriptor);
 *                   forward back out of the port; misses dropped.
 *   ICMP_SPREAD (HASH over the IPv4 source): 4 entries, each setting its own DSCP; forward
 *                   back out of the port.
 *
 * Every entry's completion is checked through the callback (ADD, then a DEL); unsupported
 * requests must fail with DOCA_ERROR_NOT_SUPPORTED. The program then waits, reading only
 * Flow's own counters (every path a frame can take is counted: the root's entries and the
 * UDP pipe's misses), until -n frames are accounted for, prints the counters and the hash
 * slots, and tears everything down. It uses nothing beyond DOCA 3.3's API.
 *
 *   flow_pipeline -p <interface> -n <frames>
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_bitfield.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_flow.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(FLOW_PIPELINE);

#define NB_HASH_ENTRIES 4
#define UDP_PORT 5000
#define WAIT_SECONDS 10

struct app_cfg {
	char iface[64];
	int frames;
};

/* What the entry callback saw (the samples' entries_status, with the ops counted). */
struct entries_status {
	bool failure;
	int nb_processed;
	int nb_add;
	int nb_del;
};

static int pipe_events;

static doca_error_t iface_callback(void *param, void *config)
{
	struct app_cfg *cfg = (struct app_cfg *)config;
	const char *name = (const char *)param;

	if (strlen(name) >= sizeof(cfg->iface)) {
		DOCA_LOG_ERR("Interface name %s is too long", name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->iface, name);
	return DOCA_SUCCESS;
}

static doca_error_t frames_callback(void *param, void *config)
{
	struct app_cfg *cfg = (struct app_cfg *)config;

	cfg->frames = *(int *)param;
	if (cfg->frames < 1) {
		DOCA_LOG_ERR("Frame count must be positive");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t register_params(void)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, "p");
	doca_argp_param_set_long_name(param, "port");
	doca_argp_param_set_arguments(param, "<interface>");
	doca_argp_param_set_description(param, "Interface the Flow port steers");
	doca_argp_param_set_callback(param, iface_callback);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_STRING);
	doca_argp_param_set_mandatory(param);
	result = doca_argp_register_param(param);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, "n");
	doca_argp_param_set_long_name(param, "frames");
	doca_argp_param_set_arguments(param, "<count>");
	doca_argp_param_set_description(param, "Frames to wait for");
	doca_argp_param_set_callback(param, frames_callback);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_INT);
	doca_argp_param_set_mandatory(param);
	return doca_argp_register_param(param);
}

static void check_for_valid_entry(struct doca_flow_pipe_entry *entry,
				  uint16_t pipe_queue,
				  enum doca_flow_entry_status status,
				  enum doca_flow_entry_op op,
				  void *user_ctx)
{
	struct entries_status *st = (struct entries_status *)user_ctx;

	(void)entry;
	(void)pipe_queue;
	if (st == NULL)
		return;
	if (status != DOCA_FLOW_ENTRY_STATUS_SUCCESS)
		st->failure = true;
	if (op == DOCA_FLOW_ENTRY_OP_ADD)
		st->nb_add++;
	else if (op == DOCA_FLOW_ENTRY_OP_DEL)
		st->nb_del++;
	st->nb_processed++;
}

static void pipe_event(struct doca_flow_pipe *pipe, enum doca_flow_pipe_status status, enum doca_flow_pipe_op op, void *ctx)
{
	(void)pipe;
	(void)ctx;
	if (status == DOCA_FLOW_PIPE_STATUS_SUCCESS && op == DOCA_FLOW_PIPE_OP_DESTROYED)
		pipe_events++;
}

static doca_error_t open_port_device(const char *iface, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	char name[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t n, i;
	doca_error_t result;

	*dev = NULL;
	result = doca_devinfo_create_list(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	for (i = 0; i < n && *dev == NULL; i++) {
		if (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) != DOCA_SUCCESS)
			continue;
		if (strcmp(name, iface) == 0)
			result = doca_dev_open(list[i], dev);
	}
	doca_devinfo_destroy_list(list);
	if (*dev == NULL)
		return DOCA_ERROR_NOT_FOUND;
	return result;
}

static doca_error_t init_flow(uint16_t nb_queues)
{
	struct doca_flow_cfg *cfg;
	doca_error_t result;

	result = doca_flow_cfg_create(&cfg);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_flow_cfg_set_pipe_queues(cfg, nb_queues);
	if (result == DOCA_SUCCESS)
		result = doca_flow_cfg_set_mode_args(cfg, "vnf,hws");
	if (result == DOCA_SUCCESS)
		result = doca_flow_cfg_set_nr_counters(cfg, 1024);
	if (result == DOCA_SUCCESS)
		result = doca_flow_cfg_set_cb_entry_process(cfg, check_for_valid_entry);
	if (result == DOCA_SUCCESS)
		result = doca_flow_cfg_set_cb_pipe_process(cfg, pipe_event);
	if (result == DOCA_SUCCESS)
		result = doca_flow_init(cfg);
	doca_flow_cfg_destroy(cfg);
	return result;
}

static doca_error_t start_port(struct doca_dev *dev, struct doca_flow_port **port)
{
	struct doca_flow_port_cfg *cfg;
	doca_error_t result;

	result = doca_flow_port_cfg_create(&cfg);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_flow_port_cfg_set_port_id(cfg, 0);
	if (result == DOCA_SUCCESS)
		result = doca_flow_port_cfg_set_dev(cfg, dev);
	if (result == DOCA_SUCCESS)
		result = doca_flow_port_start(cfg, port);
	doca_flow_port_cfg_destroy(cfg);
	return result;
}

static doca_error_t new_pipe_cfg(struct doca_flow_port *port,
				 const char *name,
				 enum doca_flow_pipe_type type,
				 bool is_root,
				 struct doca_flow_pipe_cfg **cfg)
{
	doca_error_t result;

	result = doca_flow_pipe_cfg_create(cfg, port);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_flow_pipe_cfg_set_name(*cfg, name);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_type(*cfg, type);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_is_root(*cfg, is_root);
	return result;
}

/* HASH pipe over the IPv4 source: entry i sets DSCP i + 1 and sends the frame back out. */
static doca_error_t create_icmp_spread(struct doca_flow_port *port,
				       struct entries_status *status,
				       struct doca_flow_pipe **pipe)
{
	struct doca_flow_match match_mask;
	struct doca_flow_actions actions, entry_actions, *actions_arr[1];
	struct doca_flow_fwd fwd, fwd_miss;
	struct doca_flow_pipe_cfg *cfg;
	struct doca_flow_pipe_entry *entry;
	doca_error_t result;
	uint32_t i;

	memset(&match_mask, 0, sizeof(match_mask));
	memset(&actions, 0, sizeof(actions));
	memset(&fwd, 0, sizeof(fwd));
	memset(&fwd_miss, 0, sizeof(fwd_miss));
	match_mask.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	match_mask.outer.ip4.src_ip = 0xffffffff;
	actions.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	actions.outer.ip4.dscp_ecn = 0xff; /* changeable: each entry gives its value */
	actions_arr[0] = &actions;
	fwd.type = DOCA_FLOW_FWD_PORT;
	fwd.port_id = 0;
	fwd_miss.type = DOCA_FLOW_FWD_DROP;

	result = new_pipe_cfg(port, "ICMP_SPREAD", DOCA_FLOW_PIPE_HASH, false, &cfg);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_match(cfg, NULL, &match_mask);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_actions(cfg, actions_arr, NULL, NULL, 1);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_nr_entries(cfg, NB_HASH_ENTRIES);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_create(cfg, &fwd, &fwd_miss, pipe);
	doca_flow_pipe_cfg_destroy(cfg);
	if (result != DOCA_SUCCESS)
		return result;

	for (i = 0; i < NB_HASH_ENTRIES; i++) {
		memset(&entry_actions, 0, sizeof(entry_actions));
		entry_actions.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
		entry_actions.outer.ip4.dscp_ecn = (uint8_t)((i + 1) << 2);
		result = doca_flow_pipe_hash_add_entry(0, *pipe, i, 0, &entry_actions, NULL, NULL,
						       DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, status, &entry);
		if (result != DOCA_SUCCESS)
			return result;
	}
	return DOCA_SUCCESS;
}

/* BASIC pipe: UDP to a per-entry port gets a new destination MAC and address and a TTL one
 * lower, and goes back out of the port. */
static doca_error_t create_udp_rewrite(struct doca_flow_port *port,
				       struct entries_status *status,
				       struct doca_flow_pipe **pipe,
				       struct doca_flow_pipe_entry **entry)
{
	static const uint8_t new_mac[DOCA_FLOW_ETHER_ADDR_LEN] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	struct doca_flow_match match, entry_match;
	struct doca_flow_actions actions, entry_actions, *actions_arr[1];
	struct doca_flow_action_desc ttl_desc;
	struct doca_flow_action_descs descs, *descs_arr[1];
	struct doca_flow_monitor monitor;
	struct doca_flow_fwd fwd, fwd_miss;
	struct doca_flow_pipe_cfg *cfg;
	doca_error_t result;

	memset(&match, 0, sizeof(match));
	memset(&actions, 0, sizeof(actions));
	memset(&ttl_desc, 0, sizeof(ttl_desc));
	memset(&monitor, 0, sizeof(monitor));
	memset(&fwd, 0, sizeof(fwd));
	memset(&fwd_miss, 0, sizeof(fwd_miss));
	match.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
	match.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	match.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP;
	match.outer.udp.l4_port.dst_port = 0xffff;
	memcpy(actions.outer.eth.dst_mac, new_mac, sizeof(new_mac));
	actions.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	actions.outer.ip4.dst_ip = 0xffffffff;
	actions.outer.ip4.ttl = 0xff; /* added: minus one */
	actions_arr[0] = &actions;
	ttl_desc.type = DOCA_FLOW_ACTION_ADD;
	ttl_desc.field_op.dst.field_string = "outer.ipv4.ttl";
	ttl_desc.field_op.width = 8;
	descs.nb_action_desc = 1;
	descs.desc_array = &ttl_desc;
	descs_arr[0] = &descs;
	monitor.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.type = DOCA_FLOW_FWD_PORT;
	fwd.port_id = 0;
	fwd_miss.type = DOCA_FLOW_FWD_DROP;

	result = new_pipe_cfg(port, "UDP_REWRITE", DOCA_FLOW_PIPE_BASIC, false, &cfg);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_match(cfg, &match, NULL);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_actions(cfg, actions_arr, NULL, descs_arr, 1);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_monitor(cfg, &monitor);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_miss_counter(cfg, true);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_create(cfg, &fwd, &fwd_miss, pipe);
	doca_flow_pipe_cfg_destroy(cfg);
	if (result != DOCA_SUCCESS)
		return result;

	memset(&entry_match, 0, sizeof(entry_match));
	memset(&entry_actions, 0, sizeof(entry_actions));
	entry_match.outer.udp.l4_port.dst_port = DOCA_HTOBE16(UDP_PORT);
	entry_actions.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	entry_actions.outer.ip4.dst_ip = DOCA_HTOBE32(0xc0a86401); /* 192.168.100.1 */
	return doca_flow_pipe_basic_add_entry(0, *pipe, &entry_match, 0, &entry_actions, NULL, NULL,
					      DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, status, entry);
}

static doca_error_t add_root_entry(struct doca_flow_pipe *root,
				   struct doca_flow_match *match,
				   struct doca_flow_match *mask,
				   struct doca_flow_monitor *monitor,
				   uint32_t priority,
				   struct doca_flow_fwd *fwd,
				   struct entries_status *status,
				   struct doca_flow_pipe_entry **entry)
{
	return doca_flow_pipe_control_add_entry(0, root, match, mask, NULL, NULL, NULL, NULL, monitor, priority, fwd,
						status, entry);
}

static doca_error_t create_root(struct doca_flow_port *port,
				struct doca_flow_pipe *udp,
				struct doca_flow_pipe *icmp,
				struct entries_status *status,
				struct doca_flow_pipe **root,
				struct doca_flow_pipe_entry **syn_entry,
				struct doca_flow_pipe_entry **tcp_entry,
				struct doca_flow_pipe_entry **icmp_entry)
{
	struct doca_flow_match match, mask;
	struct doca_flow_monitor monitor;
	struct doca_flow_fwd fwd;
	struct doca_flow_pipe_cfg *cfg;
	struct doca_flow_pipe_entry *entry;
	doca_error_t result;

	result = new_pipe_cfg(port, "ROOT", DOCA_FLOW_PIPE_CONTROL, true, &cfg);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_create(cfg, NULL, NULL, root);
	doca_flow_pipe_cfg_destroy(cfg);
	if (result != DOCA_SUCCESS)
		return result;

	memset(&match, 0, sizeof(match));
	memset(&fwd, 0, sizeof(fwd));
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
	fwd.type = DOCA_FLOW_FWD_PIPE;
	fwd.next_pipe = udp;
	result = add_root_entry(*root, &match, NULL, NULL, 0, &fwd, status, &entry);
	if (result != DOCA_SUCCESS)
		return result;

	/* The catch-all for TCP first: priority, not insertion order, decides. */
	memset(&match, 0, sizeof(match));
	memset(&monitor, 0, sizeof(monitor));
	memset(&fwd, 0, sizeof(fwd));
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_TCP;
	monitor.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.type = DOCA_FLOW_FWD_PORT;
	fwd.port_id = 0;
	result = add_root_entry(*root, &match, NULL, &monitor, 3, &fwd, status, tcp_entry);
	if (result != DOCA_SUCCESS)
		return result;

	memset(&match, 0, sizeof(match));
	memset(&mask, 0, sizeof(mask));
	memset(&monitor, 0, sizeof(monitor));
	memset(&fwd, 0, sizeof(fwd));
	match.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	match.outer.ip4.next_proto = DOCA_FLOW_PROTO_TCP;
	match.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_TCP;
	match.outer.tcp.flags = DOCA_FLOW_MATCH_TCP_FLAG_SYN;
	mask.outer.ip4.next_proto = 0xff;
	mask.outer.tcp.flags = DOCA_FLOW_MATCH_TCP_FLAG_SYN;
	monitor.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.type = DOCA_FLOW_FWD_DROP;
	result = add_root_entry(*root, &match, &mask, &monitor, 1, &fwd, status, syn_entry);
	if (result != DOCA_SUCCESS)
		return result;

	memset(&match, 0, sizeof(match));
	memset(&monitor, 0, sizeof(monitor));
	memset(&fwd, 0, sizeof(fwd));
	match.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_ICMP;
	monitor.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.type = DOCA_FLOW_FWD_HASH_PIPE;
	fwd.hash_pipe.pipe = icmp;
	fwd.hash_pipe.algorithm = DOCA_FLOW_PIPE_HASH_MAP_ALGORITHM_HASH;
	return add_root_entry(*root, &match, NULL, &monitor, 2, &fwd, status, icmp_entry);
}

/* Requests the runtime cannot honour must be refused, not ignored. */
static int check_refusals(struct doca_flow_port *port, struct doca_flow_pipe *root)
{
	struct doca_flow_pipe_cfg *cfg;
	struct doca_flow_pipe *pipe = NULL;
	struct doca_flow_monitor meter;
	struct doca_flow_match_condition cond;
	struct doca_flow_match match;
	struct doca_flow_fwd fwd;
	struct doca_flow_pipe_entry *entry = NULL;
	doca_error_t result;

	if (new_pipe_cfg(port, "LPM", DOCA_FLOW_PIPE_LPM, false, &cfg) != DOCA_SUCCESS)
		return 1;
	result = doca_flow_pipe_create(cfg, NULL, NULL, &pipe);
	doca_flow_pipe_cfg_destroy(cfg);
	if (result != DOCA_ERROR_NOT_SUPPORTED) {
		DOCA_LOG_ERR("LPM pipe: %s", doca_error_get_name(result));
		return 1;
	}
	if (new_pipe_cfg(port, "METERED", DOCA_FLOW_PIPE_BASIC, false, &cfg) != DOCA_SUCCESS)
		return 1;
	memset(&meter, 0, sizeof(meter));
	meter.meter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	result = doca_flow_pipe_cfg_set_monitor(cfg, &meter);
	doca_flow_pipe_cfg_destroy(cfg);
	if (result != DOCA_ERROR_NOT_SUPPORTED) {
		DOCA_LOG_ERR("meter: %s", doca_error_get_name(result));
		return 1;
	}
	memset(&cond, 0, sizeof(cond));
	memset(&match, 0, sizeof(match));
	memset(&fwd, 0, sizeof(fwd));
	fwd.type = DOCA_FLOW_FWD_DROP;
	result = doca_flow_pipe_control_add_entry(0, root, &match, NULL, &cond, NULL, NULL, NULL, NULL, 9, &fwd, NULL,
						  &entry);
	if (result != DOCA_ERROR_NOT_SUPPORTED) {
		DOCA_LOG_ERR("match condition: %s", doca_error_get_name(result));
		return 1;
	}
	result = doca_flow_crypto_psp_master_key_rotate(port);
	if (result != DOCA_ERROR_NOT_SUPPORTED) {
		DOCA_LOG_ERR("PSP: %s", doca_error_get_name(result));
		return 1;
	}
	return 0;
}

/* Packets counted so far on one entry, or on a pipe's misses (entry NULL). */
static uint64_t packets(struct doca_flow_pipe_entry *entry, struct doca_flow_pipe *missed)
{
	struct doca_flow_resource_query stats;
	doca_error_t result;

	memset(&stats, 0, sizeof(stats));
	if (entry != NULL)
		result = doca_flow_resource_query_entry(entry, &stats);
	else
		result = doca_flow_resource_query_pipe_miss(missed, &stats);
	return result == DOCA_SUCCESS ? stats.counter.total_pkts : 0;
}

/* Waits until the counters account for `frames` frames: UDP (rewritten or missed), SYN
 * (dropped), other TCP, ICMP. */
static int wait_for_frames(struct doca_flow_pipe_entry *const counted[4], struct doca_flow_pipe *udp, int frames)
{
	struct timespec pause = {0, 10 * 1000 * 1000};
	uint64_t seen = 0;
	int i, j;

	for (i = 0; i < WAIT_SECONDS * 100; i++) {
		seen = packets(NULL, udp);
		for (j = 0; j < 4; j++)
			seen += packets(counted[j], NULL);
		if (seen >= (uint64_t)frames)
			return 0;
		nanosleep(&pause, NULL);
	}
	DOCA_LOG_ERR("only %llu of %d frames counted", (unsigned long long)seen, frames);
	return 1;
}

int main(int argc, char **argv)
{
	struct app_cfg app;
	struct entries_status status;
	struct doca_log_backend *sdk_log;
	struct doca_dev *dev = NULL;
	struct doca_flow_port *port = NULL;
	struct doca_flow_pipe *icmp, *udp, *root;
	struct doca_flow_pipe_entry *udp_entry, *syn_entry, *tcp_entry, *icmp_entry, *extra;
	struct doca_flow_pipe_entry *counted[4];
	struct doca_flow_match match, probe;
	struct doca_flow_fwd fwd;
	doca_error_t result;
	uint32_t hash;
	int nb_entries = NB_HASH_ENTRIES + 1 + 4;
	int exit_status = EXIT_FAILURE;
	int i;

	memset(&app, 0, sizeof(app));
	memset(&status, 0, sizeof(status));
	if (doca_log_backend_create_standard() != DOCA_SUCCESS)
		return EXIT_FAILURE;
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk_log) != DOCA_SUCCESS)
		return EXIT_FAILURE;
	doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);

	result = doca_argp_init(NULL, &app);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	if (register_params() != DOCA_SUCCESS || doca_argp_start(argc, argv) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse the command line");
		goto argp_cleanup;
	}
	if (open_port_device(app.iface, &dev) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No device %s", app.iface);
		goto argp_cleanup;
	}
	if (init_flow(1) != DOCA_SUCCESS || start_port(dev, &port) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start Flow");
		goto flow_cleanup;
	}
	result = create_icmp_spread(port, &status, &icmp);
	if (result == DOCA_SUCCESS)
		result = create_udp_rewrite(port, &status, &udp, &udp_entry);
	if (result == DOCA_SUCCESS)
		result = create_root(port, udp, icmp, &status, &root, &syn_entry, &tcp_entry, &icmp_entry);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create the pipes: %s", doca_error_get_descr(result));
		goto flow_cleanup;
	}
	result = doca_flow_entries_process(port, 0, 10000, nb_entries);
	if (result != DOCA_SUCCESS || status.nb_processed != nb_entries || status.failure ||
	    status.nb_add != nb_entries) {
		DOCA_LOG_ERR("Entries: %d processed, %d added, failure %d", status.nb_processed, status.nb_add,
			     status.failure);
		goto flow_cleanup;
	}
	if (doca_flow_pipe_entry_get_status(udp_entry) != DOCA_FLOW_ENTRY_STATUS_SUCCESS)
		goto flow_cleanup;

	/* An entry added and removed again completes as ADD then DEL. */
	memset(&match, 0, sizeof(match));
	memset(&fwd, 0, sizeof(fwd));
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_ESP;
	fwd.type = DOCA_FLOW_FWD_DROP;
	if (add_root_entry(root, &match, NULL, NULL, 5, &fwd, &status, &extra) != DOCA_SUCCESS ||
	    doca_flow_pipe_remove_entry(0, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, extra) != DOCA_SUCCESS ||
	    doca_flow_entries_process(port, 0, 10000, 2) != DOCA_SUCCESS || status.nb_del != 1 ||
	    status.nb_add != nb_entries + 1 || status.failure) {
		DOCA_LOG_ERR("ADD/DEL completions wrong");
		goto flow_cleanup;
	}
	if (check_refusals(port, root) != 0)
		goto flow_cleanup;

	/* Where each ICMP source lands: the hash the pipe computes, modulo its entries. */
	for (i = 1; i <= NB_HASH_ENTRIES; i++) {
		memset(&probe, 0, sizeof(probe));
		probe.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
		probe.outer.ip4.src_ip = DOCA_HTOBE32(0x0a000000u + (uint32_t)i);
		if (doca_flow_pipe_calc_hash(icmp, &probe, &hash) != DOCA_SUCCESS)
			goto flow_cleanup;
		printf("slot 10.0.0.%d %u\n", i, hash % NB_HASH_ENTRIES);
	}

	counted[0] = udp_entry;
	counted[1] = syn_entry;
	counted[2] = tcp_entry;
	counted[3] = icmp_entry;
	if (wait_for_frames(counted, udp, app.frames) != 0)
		goto flow_cleanup;
	printf("udp_entry %llu\n", (unsigned long long)packets(udp_entry, NULL));
	printf("udp_miss %llu\n", (unsigned long long)packets(NULL, udp));
	printf("syn_drop %llu\n", (unsigned long long)packets(syn_entry, NULL));
	printf("tcp_other %llu\n", (unsigned long long)packets(tcp_entry, NULL));
	printf("icmp %llu\n", (unsigned long long)packets(icmp_entry, NULL));
	exit_status = EXIT_SUCCESS;

flow_cleanup:
	if (port != NULL) {
		doca_flow_port_pipes_flush(port);
		if (doca_flow_port_stop(port) != DOCA_SUCCESS)
			exit_status = EXIT_FAILURE;
	}
	doca_flow_destroy();
	if (dev != NULL)
		doca_dev_close(dev);
	if (exit_status == EXIT_SUCCESS && pipe_events != 3) {
		DOCA_LOG_ERR("%d DESTROYED events, expected 3", pipe_events);
		exit_status = EXIT_FAILURE;
	}
argp_cleanup:
	doca_argp_destroy();
	if (exit_status == EXIT_SUCCESS)
		printf("flow pipeline ok\n");
	return exit_status;
}
