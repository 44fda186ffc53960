/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: UROM host API. A service context talks to the UROM daemon; worker contexts
 * each drive one worker process (plugins selected by id bit mask); a domain context joins
 * workers of several host processes through an out-of-band allgather.
 */
#ifndef DOCA_UROM_H_
#define DOCA_UROM_H_

#include <stddef.h>
#include <stdint.h>

#include <ucs/type/cpu_set.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"
#include "doca_pe.h"
#include "doca_types.h"
#include "doca_urom_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_urom_service;
struct doca_urom_service_get_workers_by_gid_task;
struct doca_urom_worker;
struct doca_urom_worker_cmd_task;
struct doca_urom_domain;

typedef ucs_cpu_set_t doca_cpu_set_t;
#define DOCA_CPU_ZERO(cpusetp) UCS_CPU_ZERO(cpusetp)
#define DOCA_CPU_SET(cpu, cpusetp) UCS_CPU_SET(cpu, cpusetp)
#define doca_cpu_is_set(cpu, cpusetp) ucs_cpu_is_set(cpu, cpusetp)

/* Let the service pick a free worker id. */
#define DOCA_UROM_WORKER_ID_ANY (-1ULL)
/* Longest plugin name, terminating NUL included. */
#define DOCA_UROM_PLUGIN_NAME_MAX_LEN 48

/* A plugin offered by the service. */
struct doca_urom_service_plugin_info {
	uint64_t id;
	uint64_t version;
	char plugin_name[DOCA_UROM_PLUGIN_NAME_MAX_LEN];
};

typedef void (*doca_urom_service_get_workers_by_gid_task_completion_cb_t)(
	struct doca_urom_service_get_workers_by_gid_task *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

typedef void (*doca_urom_worker_cmd_task_completion_cb_t)(struct doca_urom_worker_cmd_task *task,
							   union doca_data task_user_data,
							   union doca_data ctx_user_data);

typedef doca_error_t (*doca_urom_domain_allgather_cb_t)(void *sbuf, void *rbuf, size_t msglen, void *coll_info,
							 void **req);
typedef doca_error_t (*doca_urom_domain_req_test_cb_t)(void *req);
typedef doca_error_t (*doca_urom_domain_req_free_cb_t)(void *req);

/* Out-of-band collective the domain uses to exchange worker information. */
struct doca_urom_domain_oob_coll {
	doca_urom_domain_allgather_cb_t allgather;
	doca_urom_domain_req_test_cb_t req_test;
	doca_urom_domain_req_free_cb_t req_free;
	void *coll_info;
	uint32_t n_oob_indexes;
	uint32_t oob_index;
};

/* Service */
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_create(struct doca_urom_service **service_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_destroy(struct doca_urom_service *service_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_set_max_comm_msg_size(struct doca_urom_service *service_ctx,
									size_t msg_size);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_set_max_workers(struct doca_urom_service *service_ctx,
								  uint32_t max_workers);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_set_dev(struct doca_urom_service *service_ctx, struct doca_dev *dev);
DOCA_EXPERIMENTAL struct doca_ctx *doca_urom_service_as_ctx(struct doca_urom_service *service_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_get_plugins_list(struct doca_urom_service *service_ctx,
								   const struct doca_urom_service_plugin_info **plugins,
								   size_t *plugins_count);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_get_cpuset(struct doca_urom_service *service_ctx,
							     doca_cpu_set_t *cpuset);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_get_workers_by_gid_task_allocate(
	struct doca_urom_service *service_ctx, struct doca_urom_service_get_workers_by_gid_task **task);
DOCA_EXPERIMENTAL doca_error_t doca_urom_service_get_workers_by_gid_task_allocate_init(
	struct doca_urom_service *service_ctx, uint32_t gid, doca_urom_service_get_workers_by_gid_task_completion_cb_t cb,
	struct doca_urom_service_get_workers_by_gid_task **task);
DOCA_EXPERIMENTAL doca_error_t
doca_urom_service_get_workers_by_gid_task_release(struct doca_urom_service_get_workers_by_gid_task *task);
DOCA_EXPERIMENTAL void doca_urom_service_get_workers_by_gid_task_set_gid(struct doca_urom_service_get_workers_by_gid_task *task,
									  uint32_t gid);
DOCA_EXPERIMENTAL void doca_urom_service_get_workers_by_gid_task_set_cb(
	struct doca_urom_service_get_workers_by_gid_task *task, doca_urom_service_get_workers_by_gid_task_completion_cb_t cb);
DOCA_EXPERIMENTAL struct doca_task *
doca_urom_service_get_workers_by_gid_task_as_task(struct doca_urom_service_get_workers_by_gid_task *task);
DOCA_EXPERIMENTAL size_t
doca_urom_service_get_workers_by_gid_task_get_workers_count(struct doca_urom_service_get_workers_by_gid_task *task);
DOCA_EXPERIMENTAL const uint64_t *
doca_urom_service_get_workers_by_gid_task_get_worker_ids(struct doca_urom_service_get_workers_by_gid_task *task);

/* Worker */
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_create(struct doca_urom_worker **worker_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_destroy(struct doca_urom_worker *worker_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_set_service(struct doca_urom_worker *worker_ctx,
							     struct doca_urom_service *service_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_set_id(struct doca_urom_worker *worker_ctx, uint64_t worker_id);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_set_plugins(struct doca_urom_worker *worker_ctx, uint64_t plugins);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_set_cpuset(struct doca_urom_worker *worker_ctx, doca_cpu_set_t cpuset);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_set_gid(struct doca_urom_worker *worker_ctx, uint32_t gid);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_set_max_inflight_tasks(struct doca_urom_worker *worker_ctx,
									uint32_t max_tasks);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_set_env(struct doca_urom_worker *worker_ctx, char *const env[],
							 size_t count);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_get_id(struct doca_urom_worker *worker_ctx, uint64_t *worker_id);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_get_gid(struct doca_urom_worker *worker_ctx, uint32_t *worker_gid);
DOCA_EXPERIMENTAL struct doca_ctx *doca_urom_worker_as_ctx(struct doca_urom_worker *worker_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_cmd_task_allocate(struct doca_urom_worker *worker_ctx,
								   struct doca_urom_worker_cmd_task **task);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_cmd_task_allocate_init(struct doca_urom_worker *worker_ctx,
									uint64_t plugin,
									struct doca_urom_worker_cmd_task **task);
DOCA_EXPERIMENTAL doca_error_t doca_urom_worker_cmd_task_release(struct doca_urom_worker_cmd_task *task);
DOCA_EXPERIMENTAL void doca_urom_worker_cmd_task_set_plugin(struct doca_urom_worker_cmd_task *task, uint64_t plugin);
DOCA_EXPERIMENTAL void doca_urom_worker_cmd_task_set_cb(struct doca_urom_worker_cmd_task *task,
							 doca_urom_worker_cmd_task_completion_cb_t cb);
DOCA_EXPERIMENTAL struct doca_buf *doca_urom_worker_cmd_task_get_payload(struct doca_urom_worker_cmd_task *task);
DOCA_EXPERIMENTAL struct doca_buf *doca_urom_worker_cmd_task_get_response(struct doca_urom_worker_cmd_task *task);
DOCA_EXPERIMENTAL void *doca_urom_worker_cmd_task_get_user_data(struct doca_urom_worker_cmd_task *task);
DOCA_EXPERIMENTAL struct doca_task *doca_urom_worker_cmd_task_as_task(struct doca_urom_worker_cmd_task *task);

/* Domain */
DOCA_EXPERIMENTAL doca_error_t doca_urom_domain_create(struct doca_urom_domain **domain_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_domain_destroy(struct doca_urom_domain *domain_ctx);
DOCA_EXPERIMENTAL doca_error_t doca_urom_domain_set_buffers_count(struct doca_urom_domain *domain_ctx,
								   size_t buffers_cnt);
DOCA_EXPERIMENTAL doca_error_t doca_urom_domain_add_buffer(struct doca_urom_domain *domain_ctx, void *buffer,
							    size_t buf_len, void *memh, size_t memh_len, void *mkey,
							    size_t mkey_len);
DOCA_EXPERIMENTAL doca_error_t doca_urom_domain_set_oob(struct doca_urom_domain *domain_ctx,
							 struct doca_urom_domain_oob_coll *oob);
DOCA_EXPERIMENTAL doca_error_t doca_urom_domain_set_workers(struct doca_urom_domain *domain_ctx,
							     uint64_t *domain_worker_ids,
							     struct doca_urom_worker **workers, size_t workers_cnt);
DOCA_EXPERIMENTAL struct doca_ctx *doca_urom_domain_as_ctx(struct doca_urom_domain *domain_ctx);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_UROM_H_ */
