/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A UROM host program in C against doca_urom.h and libdoca_soft.so: service, worker,
 * one command to the worker_echo_c plugin, a get-workers-by-gid task, teardown.
 * Usage: urom_host_smoke <iface>   (needs DOCA_UROM_SERVICE_FILE and a daemon)
 * Exit status 0 and "c host: ok" on success.
 */
#include <stdio.h>
#include <string.h>

#include "doca_dev.h"
#include "doca_urom.h"

#define CHECK(expr)                                                                                \
	do {                                                                                       \
		doca_error_t r_ = (expr);                                                          \
		if (r_ != DOCA_SUCCESS) {                                                          \
			fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #expr, (int)r_);   \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

static int cmd_done;
static doca_error_t cmd_status;
static uint64_t cmd_echo;
static int gid_done;
static size_t gid_count;
static uint64_t gid_first;

static void on_cmd(struct doca_urom_worker_cmd_task *task, union doca_data ud, union doca_data cud)
{
	struct doca_buf *resp = doca_urom_worker_cmd_task_get_response(task);
	void *data = NULL;
	size_t len = 0;

	(void)ud;
	(void)cud;
	cmd_status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	doca_buf_get_data(resp, &data);
	doca_buf_get_data_len(resp, &len);
	if (len == 16)
		memcpy(&cmd_echo, (char *)data + 8, 8);
	doca_urom_worker_cmd_task_release(task);
	cmd_done = 1;
}

static void on_gid(struct doca_urom_service_get_workers_by_gid_task *task, union doca_data ud, union doca_data cud)
{
	(void)ud;
	(void)cud;
	gid_count = doca_urom_service_get_workers_by_gid_task_get_workers_count(task);
	if (gid_count > 0)
		gid_first = doca_urom_service_get_workers_by_gid_task_get_worker_ids(task)[0];
	doca_urom_service_get_workers_by_gid_task_release(task);
	gid_done = 1;
}

static struct doca_dev *open_iface(const char *name)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++) {
		char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];

		if (doca_devinfo_get_iface_name(list[i], iface, sizeof(iface)) == DOCA_SUCCESS && strcmp(iface, name) == 0)
			doca_dev_open(list[i], &dev);
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

int main(int argc, char **argv)
{
	struct doca_dev *dev = open_iface(argc > 1 ? argv[1] : "lo");
	struct doca_pe *pe;
	struct doca_urom_service *svc;
	struct doca_urom_worker *w;
	struct doca_urom_worker_cmd_task *task;
	struct doca_urom_service_get_workers_by_gid_task *gtask;
	const struct doca_urom_service_plugin_info *plugins;
	enum doca_ctx_states state;
	uint64_t plugin = 0, cmd[2] = {0, 0x5eed};
	size_t nplugins = 0, cap = 0;
	void *payload;

	if (dev == NULL) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	CHECK(doca_pe_create(&pe));
	CHECK(doca_urom_service_create(&svc));
	CHECK(doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)));
	CHECK(doca_urom_service_set_max_workers(svc, 2));
	CHECK(doca_urom_service_set_dev(svc, dev));
	CHECK(doca_ctx_start(doca_urom_service_as_ctx(svc)));
	CHECK(doca_urom_service_get_plugins_list(svc, &plugins, &nplugins));
	for (size_t i = 0; i < nplugins; i++)
		if (strcmp(plugins[i].plugin_name, "worker_echo_c") == 0)
			plugin = plugins[i].id;
	if (plugin == 0)
		return 1;

	CHECK(doca_urom_worker_create(&w));
	CHECK(doca_urom_worker_set_service(w, svc));
	CHECK(doca_pe_connect_ctx(pe, doca_urom_worker_as_ctx(w)));
	CHECK(doca_urom_worker_set_id(w, 3));
	CHECK(doca_urom_worker_set_max_inflight_tasks(w, 4));
	CHECK(doca_urom_worker_set_plugins(w, plugin));
	if (doca_ctx_start(doca_urom_worker_as_ctx(w)) != DOCA_ERROR_IN_PROGRESS)
		return 1;
	do {
		doca_pe_progress(pe);
		doca_ctx_get_state(doca_urom_worker_as_ctx(w), &state);
	} while (state == DOCA_CTX_STATE_STARTING);
	if (state != DOCA_CTX_STATE_RUNNING)
		return 1;

	CHECK(doca_urom_worker_cmd_task_allocate_init(w, plugin, &task));
	CHECK(doca_buf_get_data(doca_urom_worker_cmd_task_get_payload(task), &payload));
	CHECK(doca_buf_get_data_len(doca_urom_worker_cmd_task_get_payload(task), &cap));
	if (cap < sizeof(cmd))
		return 1;
	memcpy(payload, cmd, sizeof(cmd));
	CHECK(doca_buf_set_data(doca_urom_worker_cmd_task_get_payload(task), payload, sizeof(cmd)));
	doca_urom_worker_cmd_task_set_cb(task, on_cmd);
	CHECK(doca_task_submit(doca_urom_worker_cmd_task_as_task(task)));
	while (!cmd_done)
		doca_pe_progress(pe);
	if (cmd_status != DOCA_SUCCESS || cmd_echo != 0x5eed)
		return 1;

	CHECK(doca_urom_service_get_workers_by_gid_task_allocate_init(svc, 0, on_gid, &gtask));
	CHECK(doca_task_submit(doca_urom_service_get_workers_by_gid_task_as_task(gtask)));
	while (!gid_done)
		doca_pe_progress(pe);
	if (gid_count != 1 || gid_first != 3)
		return 1;

	if (doca_ctx_stop(doca_urom_worker_as_ctx(w)) != DOCA_ERROR_IN_PROGRESS)
		return 1;
	do {
		doca_pe_progress(pe);
		doca_ctx_get_state(doca_urom_worker_as_ctx(w), &state);
	} while (state != DOCA_CTX_STATE_IDLE);
	CHECK(doca_urom_worker_destroy(w));
	CHECK(doca_ctx_stop(doca_urom_service_as_ctx(svc)));
	CHECK(doca_urom_service_destroy(svc));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_dev_close(dev));
	printf("c host: ok\n");
	return 0;
}
