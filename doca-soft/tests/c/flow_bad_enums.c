/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Out-of-range enum values handed to every DOCA Flow call that takes an enum, directly or
 * inside a struct, on live objects: each must answer DOCA_ERROR_INVALID_VALUE, and the
 * object must stay usable (a valid value is accepted right after). Built as C and C++
 * (-Wall -Wextra -Werror) by tests/flow_bad_input.rs; prints "ok <check>" per check and
 * "FAIL <check>: <error name>" otherwise; exits 0 only when every check passed.
 *
 *   flow_bad_enums <interface>
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_flow.h>

#define BAD 77

static int failures;

static void expect(const char *what, doca_error_t got, doca_error_t want)
{
	if (got == want) {
		printf("ok %s\n", what);
	} else {
		printf("FAIL %s: %s (expected %s)\n", what, doca_error_get_name(got), doca_error_get_name(want));
		failures++;
	}
}

static doca_error_t open_device(const char *iface, struct doca_dev **dev)
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
		if (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, iface) == 0)
			result = doca_dev_open(list[i], dev);
	}
	doca_devinfo_destroy_list(list);
	return *dev == NULL ? DOCA_ERROR_NOT_FOUND : result;
}

static doca_error_t init_flow(enum doca_flow_resource_mode mode)
{
	struct doca_flow_cfg *cfg;
	doca_error_t result;

	result = doca_flow_cfg_create(&cfg);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_flow_cfg_set_pipe_queues(cfg, 2);
	if (result == DOCA_SUCCESS)
		result = doca_flow_cfg_set_mode_args(cfg, "vnf,hws");
	if (result == DOCA_SUCCESS)
		result = doca_flow_cfg_set_resource_mode(cfg, mode);
	if (result == DOCA_SUCCESS && mode == DOCA_FLOW_RESOURCE_MODE_SYSTEM) {
		result = doca_flow_cfg_set_nr_shared_resource(cfg, 4, DOCA_FLOW_SHARED_RESOURCE_COUNTER);
		if (result == DOCA_SUCCESS)
			result = doca_flow_cfg_set_nr_counters(cfg, 64);
	}
	if (result == DOCA_SUCCESS)
		result = doca_flow_init(cfg);
	doca_flow_cfg_destroy(cfg);
	return result;
}

static doca_error_t start_port(struct doca_dev *dev, enum doca_flow_resource_mode mode, struct doca_flow_port **port)
{
	struct doca_flow_port_cfg *cfg;
	doca_error_t result;

	result = doca_flow_port_cfg_create(&cfg);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_flow_port_cfg_set_port_id(cfg, 0);
	if (result == DOCA_SUCCESS)
		result = doca_flow_port_cfg_set_dev(cfg, dev);
	if (result == DOCA_SUCCESS && mode == DOCA_FLOW_RESOURCE_MODE_PORT)
		result = doca_flow_port_cfg_set_nr_resources(cfg, DOCA_FLOW_RESOURCE_COUNTER, 4);
	if (result == DOCA_SUCCESS)
		result = doca_flow_port_start(cfg, port);
	doca_flow_port_cfg_destroy(cfg);
	return result;
}

/* The configuration objects: global, tune, port. */
static void check_cfg_setters(struct doca_dev *dev)
{
	struct doca_flow_cfg *cfg;
	struct doca_flow_tune_cfg *tune;
	struct doca_flow_port_cfg *port_cfg;

	if (doca_flow_cfg_create(&cfg) != DOCA_SUCCESS || doca_flow_tune_cfg_create(&tune) != DOCA_SUCCESS ||
	    doca_flow_port_cfg_create(&port_cfg) != DOCA_SUCCESS) {
		expect("configuration objects", DOCA_ERROR_NO_MEMORY, DOCA_SUCCESS);
		return;
	}
	expect("cfg_set_resource_mode",
	       doca_flow_cfg_set_resource_mode(cfg, (enum doca_flow_resource_mode)BAD),
	       DOCA_ERROR_INVALID_VALUE);
	expect("cfg_set_resource_mode valid",
	       doca_flow_cfg_set_resource_mode(cfg, DOCA_FLOW_RESOURCE_MODE_PORT),
	       DOCA_SUCCESS);
	expect("cfg_set_nr_shared_resource",
	       doca_flow_cfg_set_nr_shared_resource(cfg, 8, (enum doca_flow_shared_resource_type)BAD),
	       DOCA_ERROR_INVALID_VALUE);
	expect("cfg_set_nr_shared_resource valid",
	       doca_flow_cfg_set_nr_shared_resource(cfg, 8, DOCA_FLOW_SHARED_RESOURCE_RSS),
	       DOCA_SUCCESS);
	expect("tune_cfg_set_profile",
	       doca_flow_tune_cfg_set_profile(tune, (enum doca_flow_tune_profile)BAD),
	       DOCA_ERROR_INVALID_VALUE);
	expect("tune_cfg_set_profile valid", doca_flow_tune_cfg_set_profile(tune, DOCA_FLOW_TUNE_PROFILE_NONE), DOCA_SUCCESS);
	expect("port_cfg_set_nr_resources",
	       doca_flow_port_cfg_set_nr_resources(port_cfg, (enum doca_flow_resource)BAD, 8),
	       DOCA_ERROR_INVALID_VALUE);
	expect("port_cfg_set_nr_resources valid",
	       doca_flow_port_cfg_set_nr_resources(port_cfg, DOCA_FLOW_RESOURCE_COUNTER, 8),
	       DOCA_SUCCESS);
	expect("port_cfg_set_operation_state",
	       doca_flow_port_cfg_set_operation_state(port_cfg, (enum doca_flow_port_operation_state)BAD),
	       DOCA_ERROR_INVALID_VALUE);
	expect("port_cfg_set_operation_state valid",
	       doca_flow_port_cfg_set_operation_state(port_cfg, DOCA_FLOW_PORT_OPERATION_STATE_ACTIVE),
	       DOCA_SUCCESS);
	expect("port_cfg_set_dev", doca_flow_port_cfg_set_dev(port_cfg, dev), DOCA_SUCCESS);
	doca_flow_port_cfg_destroy(port_cfg);
	doca_flow_tune_cfg_destroy(tune);
	doca_flow_cfg_destroy(cfg);
}

/* A port and its pipes, in SYSTEM mode. */
static void check_port_and_pipes(struct doca_flow_port *port)
{
	struct doca_flow_target *target = NULL;
	struct doca_flow_pipe_cfg *cfg;
	struct doca_flow_pipe *pipe = NULL, *hash = NULL;
	struct doca_flow_pipe_entry *entry = NULL;
	struct doca_flow_match match;
	struct doca_flow_actions actions, *actions_arr[1];
	struct doca_flow_action_desc desc;
	struct doca_flow_action_descs descs, *descs_arr[1];
	struct doca_flow_monitor monitor;
	struct doca_flow_fwd fwd;
	struct doca_flow_shared_resource_cfg shared_cfg;
	struct doca_flow_resource_query query;
	uint32_t ids[1] = {0};

	expect("port_operation_state_modify",
	       doca_flow_port_operation_state_modify(port, (enum doca_flow_port_operation_state)BAD),
	       DOCA_ERROR_INVALID_VALUE);
	expect("port_update_default_miss",
	       doca_flow_port_update_default_miss(port, (enum doca_flow_port_default_miss_type)BAD, false),
	       DOCA_ERROR_INVALID_VALUE);
	expect("get_target", doca_flow_get_target((enum doca_flow_target_type)BAD, &target), DOCA_ERROR_INVALID_VALUE);
	expect("get_target valid", doca_flow_get_target(DOCA_FLOW_TARGET_KERNEL, &target), DOCA_SUCCESS);

	memset(&shared_cfg, 0, sizeof(shared_cfg));
	memset(&query, 0, sizeof(query));
	expect("shared_resource_set_cfg",
	       doca_flow_shared_resource_set_cfg((enum doca_flow_shared_resource_type)BAD, 0, &shared_cfg),
	       DOCA_ERROR_INVALID_VALUE);
	expect("shared_resources_bind",
	       doca_flow_shared_resources_bind((enum doca_flow_shared_resource_type)BAD, ids, 1, port),
	       DOCA_ERROR_INVALID_VALUE);
	expect("shared_resources_query",
	       doca_flow_shared_resources_query((enum doca_flow_shared_resource_type)BAD, ids, &query, 1),
	       DOCA_ERROR_INVALID_VALUE);
	expect("shared_resource_set_cfg valid",
	       doca_flow_shared_resource_set_cfg(DOCA_FLOW_SHARED_RESOURCE_COUNTER, 0, &shared_cfg),
	       DOCA_SUCCESS);

	if (doca_flow_pipe_cfg_create(&cfg, port) != DOCA_SUCCESS) {
		expect("pipe_cfg_create", DOCA_ERROR_NO_MEMORY, DOCA_SUCCESS);
		return;
	}
	expect("pipe_cfg_set_type", doca_flow_pipe_cfg_set_type(cfg, (enum doca_flow_pipe_type)BAD), DOCA_ERROR_INVALID_VALUE);
	expect("pipe_cfg_set_domain",
	       doca_flow_pipe_cfg_set_domain(cfg, (enum doca_flow_pipe_domain)BAD),
	       DOCA_ERROR_INVALID_VALUE);
	doca_flow_pipe_cfg_set_name(cfg, "BASIC");
	expect("pipe_cfg_set_type valid", doca_flow_pipe_cfg_set_type(cfg, DOCA_FLOW_PIPE_BASIC), DOCA_SUCCESS);

	/* Struct members: match selectors and parser types, actions, descriptors, monitors. */
	memset(&match, 0, sizeof(match));
	match.parser_meta.outer_l3_type = (enum doca_flow_l3_meta)BAD;
	expect("match parser_meta.outer_l3_type", doca_flow_pipe_cfg_set_match(cfg, &match, NULL), DOCA_ERROR_INVALID_VALUE);
	memset(&match, 0, sizeof(match));
	match.outer.l4_type_ext = (enum doca_flow_l4_type_ext)BAD;
	expect("match outer.l4_type_ext", doca_flow_pipe_cfg_set_match(cfg, &match, NULL), DOCA_ERROR_INVALID_VALUE);
	memset(&match, 0, sizeof(match));
	match.tun.type = (enum doca_flow_tun_type)BAD;
	expect("match tun.type", doca_flow_pipe_cfg_set_match(cfg, &match, NULL), DOCA_ERROR_INVALID_VALUE);
	memset(&match, 0, sizeof(match));
	match.outer.l4_type_ext = DOCA_FLOW_L4_TYPE_EXT_UDP;
	match.outer.udp.l4_port.dst_port = 0xffff;
	expect("match valid", doca_flow_pipe_cfg_set_match(cfg, &match, NULL), DOCA_SUCCESS);

	memset(&actions, 0, sizeof(actions));
	actions_arr[0] = &actions;
	actions.outer.l3_type = (enum doca_flow_l3_type)BAD;
	expect("actions outer.l3_type",
	       doca_flow_pipe_cfg_set_actions(cfg, actions_arr, NULL, NULL, 1),
	       DOCA_ERROR_INVALID_VALUE);
	memset(&actions, 0, sizeof(actions));
	actions.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	actions.outer.ip4.ttl = 0xff;
	memset(&desc, 0, sizeof(desc));
	desc.type = (enum doca_flow_action_type)BAD;
	desc.field_op.dst.field_string = "outer.ipv4.ttl";
	desc.field_op.width = 8;
	descs.nb_action_desc = 1;
	descs.desc_array = &desc;
	descs_arr[0] = &descs;
	expect("action_desc type",
	       doca_flow_pipe_cfg_set_actions(cfg, actions_arr, NULL, descs_arr, 1),
	       DOCA_ERROR_INVALID_VALUE);
	desc.type = DOCA_FLOW_ACTION_ADD;
	expect("actions valid", doca_flow_pipe_cfg_set_actions(cfg, actions_arr, NULL, descs_arr, 1), DOCA_SUCCESS);

	memset(&monitor, 0, sizeof(monitor));
	monitor.counter_type = (enum doca_flow_resource_type)BAD;
	expect("monitor counter_type", doca_flow_pipe_cfg_set_monitor(cfg, &monitor), DOCA_ERROR_INVALID_VALUE);
	monitor.counter_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	expect("monitor valid", doca_flow_pipe_cfg_set_monitor(cfg, &monitor), DOCA_SUCCESS);

	/* Forwards. */
	memset(&fwd, 0, sizeof(fwd));
	fwd.type = (enum doca_flow_fwd_type)BAD;
	expect("fwd type", doca_flow_pipe_create(cfg, &fwd, NULL, &pipe), DOCA_ERROR_INVALID_VALUE);
	memset(&fwd, 0, sizeof(fwd));
	fwd.type = DOCA_FLOW_FWD_RSS;
	fwd.rss_type = (enum doca_flow_resource_type)BAD;
	expect("fwd rss_type", doca_flow_pipe_create(cfg, &fwd, NULL, &pipe), DOCA_ERROR_INVALID_VALUE);
	memset(&fwd, 0, sizeof(fwd));
	fwd.type = DOCA_FLOW_FWD_DROP;
	expect("pipe_create valid", doca_flow_pipe_create(cfg, &fwd, NULL, &pipe), DOCA_SUCCESS);
	doca_flow_pipe_cfg_destroy(cfg);

	/* Entries: flags with both bits, a queue past the last one, then a good one. */
	memset(&match, 0, sizeof(match));
	match.outer.udp.l4_port.dst_port = 0x1234;
	expect("entry flags",
	       doca_flow_pipe_basic_add_entry(0, pipe, &match, 0, NULL, NULL, NULL,
					      (uint32_t)(DOCA_FLOW_ENTRY_FLAGS_NO_WAIT | DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH),
					      NULL, &entry),
	       DOCA_ERROR_INVALID_VALUE);
	expect("entry queue",
	       doca_flow_pipe_basic_add_entry(2, pipe, &match, 0, NULL, NULL, NULL, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL,
					      &entry),
	       DOCA_ERROR_INVALID_VALUE);
	expect("entries_process queue", doca_flow_entries_process(port, 2, 0, 0), DOCA_ERROR_INVALID_VALUE);
	expect("entry valid",
	       doca_flow_pipe_basic_add_entry(1, pipe, &match, 0, NULL, NULL, NULL, DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, NULL,
					      &entry),
	       DOCA_SUCCESS);
	expect("entries_process valid", doca_flow_entries_process(port, 1, 0, 0), DOCA_SUCCESS);

	/* A hash pipe with an unknown map algorithm in the forward to it. */
	if (doca_flow_pipe_cfg_create(&cfg, port) != DOCA_SUCCESS)
		return;
	doca_flow_pipe_cfg_set_name(cfg, "HASH");
	doca_flow_pipe_cfg_set_type(cfg, DOCA_FLOW_PIPE_HASH);
	memset(&match, 0, sizeof(match));
	match.outer.l3_type = DOCA_FLOW_L3_TYPE_IP4;
	match.outer.ip4.src_ip = 0xffffffff;
	doca_flow_pipe_cfg_set_match(cfg, NULL, &match);
	doca_flow_pipe_cfg_set_nr_entries(cfg, 2);
	memset(&fwd, 0, sizeof(fwd));
	fwd.type = DOCA_FLOW_FWD_DROP;
	expect("hash pipe valid", doca_flow_pipe_create(cfg, &fwd, NULL, &hash), DOCA_SUCCESS);
	doca_flow_pipe_cfg_destroy(cfg);
	if (doca_flow_pipe_cfg_create(&cfg, port) != DOCA_SUCCESS)
		return;
	doca_flow_pipe_cfg_set_name(cfg, "TO_HASH");
	doca_flow_pipe_cfg_set_type(cfg, DOCA_FLOW_PIPE_BASIC);
	memset(&fwd, 0, sizeof(fwd));
	fwd.type = DOCA_FLOW_FWD_HASH_PIPE;
	fwd.hash_pipe.pipe = hash;
	fwd.hash_pipe.algorithm = (enum doca_flow_pipe_hash_map_algorithm)(1u << 20);
	expect("fwd hash_pipe.algorithm", doca_flow_pipe_create(cfg, &fwd, NULL, &pipe), DOCA_ERROR_INVALID_VALUE);
	doca_flow_pipe_cfg_destroy(cfg);
}

/* Per-port shared resources, in PORT mode. */
static void check_port_shared(struct doca_flow_port *port)
{
	struct doca_flow_shared_resource_cfg shared_cfg;
	struct doca_flow_resource_query query;
	uint32_t id = 0;

	memset(&shared_cfg, 0, sizeof(shared_cfg));
	expect("port_shared_resource_get",
	       doca_flow_port_shared_resource_get(port, (enum doca_flow_shared_resource_type)BAD, &id),
	       DOCA_ERROR_INVALID_VALUE);
	expect("port_shared_resource_get valid",
	       doca_flow_port_shared_resource_get(port, DOCA_FLOW_SHARED_RESOURCE_COUNTER, &id),
	       DOCA_SUCCESS);
	expect("port_shared_resource_set_cfg",
	       doca_flow_port_shared_resource_set_cfg(port, (enum doca_flow_shared_resource_type)BAD, id, &shared_cfg),
	       DOCA_ERROR_INVALID_VALUE);
	expect("port_shared_resources_query",
	       doca_flow_port_shared_resources_query(port, (enum doca_flow_shared_resource_type)BAD, &id, &query, 1),
	       DOCA_ERROR_INVALID_VALUE);
	expect("port_shared_resource_put",
	       doca_flow_port_shared_resource_put(port, (enum doca_flow_shared_resource_type)BAD, id),
	       DOCA_ERROR_INVALID_VALUE);
	expect("port_shared_resource_put valid",
	       doca_flow_port_shared_resource_put(port, DOCA_FLOW_SHARED_RESOURCE_COUNTER, id),
	       DOCA_SUCCESS);
}

int main(int argc, char **argv)
{
	struct doca_dev *dev;
	struct doca_flow_port *port;

	if (argc != 2 || open_device(argv[1], &dev) != DOCA_SUCCESS) {
		printf("FAIL no device\n");
		return 1;
	}
	check_cfg_setters(dev);

	if (init_flow(DOCA_FLOW_RESOURCE_MODE_SYSTEM) != DOCA_SUCCESS ||
	    start_port(dev, DOCA_FLOW_RESOURCE_MODE_SYSTEM, &port) != DOCA_SUCCESS) {
		printf("FAIL SYSTEM mode start\n");
		return 1;
	}
	check_port_and_pipes(port);
	expect("port_stop", doca_flow_port_stop(port), DOCA_SUCCESS);
	doca_flow_destroy();

	if (init_flow(DOCA_FLOW_RESOURCE_MODE_PORT) != DOCA_SUCCESS ||
	    start_port(dev, DOCA_FLOW_RESOURCE_MODE_PORT, &port) != DOCA_SUCCESS) {
		printf("FAIL PORT mode start\n");
		return 1;
	}
	check_port_shared(port);
	expect("port_stop", doca_flow_port_stop(port), DOCA_SUCCESS);
	doca_flow_destroy();
	doca_dev_close(dev);
	printf("%d failures\n", failures);
	return failures == 0 ? 0 : 1;
}
