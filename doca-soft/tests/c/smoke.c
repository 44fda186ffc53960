/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * C smoke test of libdoca_soft.so, built the way DOCA programs are built:
 *   cc smoke.c $(pkg-config --cflags --libs doca-common doca-gpunetio)
 * Every group of checks prints "ok: <group>" when all its checks held; any failed check
 * prints "FAIL: ..." and makes the exit status 1. tests/c_smoke.rs runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_gpunetio.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_types.h>
#include <doca_version.h>

DOCA_LOG_REGISTER(SMOKE);

static int failures;
static int group_failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: %s:%d: %s\n", __func__, __LINE__, #cond);                    \
			group_failures++;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_RESULT(call, expected)                                                               \
	do {                                                                                       \
		doca_error_t got_ = (call);                                                        \
		if (got_ != (expected)) {                                                          \
			printf("FAIL: %s:%d: %s returned %s, expected %s\n", __func__, __LINE__,   \
			       #call, doca_error_get_name(got_), doca_error_get_name(expected));   \
			group_failures++;                                                          \
		}                                                                                  \
	} while (0)

static void end_group(const char *name)
{
	if (group_failures == 0)
		printf("ok: %s\n", name);
	failures += group_failures;
	group_failures = 0;
}

/* The devinfo whose interface name is iface, or NULL. */
static struct doca_devinfo *find_by_iface(struct doca_devinfo **list, uint32_t n, const char *iface)
{
	char name[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_iface_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, iface) == 0)
			return list[i];
	}
	return NULL;
}

/* The devinfo at a PCI address, or NULL (the samples' lookup). */
static struct doca_devinfo *find_by_pci(struct doca_devinfo **list, uint32_t n, const char *pci)
{
	uint8_t equal;
	uint32_t i;

	for (i = 0; i < n; i++) {
		equal = 0;
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &equal) == DOCA_SUCCESS && equal)
			return list[i];
	}
	return NULL;
}

/* The samples' open-by-PCI helper: NOT_FOUND when no device has that address. */
static doca_error_t open_with_pci(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	struct doca_devinfo *info;
	uint32_t n;
	doca_error_t result;

	result = doca_devinfo_create_list(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	info = find_by_pci(list, n, pci);
	result = info == NULL ? DOCA_ERROR_NOT_FOUND : doca_dev_open(info, dev);
	doca_devinfo_destroy_list(list);
	return result;
}

static int is_pci_addr(const char *s)
{
	unsigned int dom, bus, devn, fn;
	char end;

	return strlen(s) == DOCA_DEVINFO_PCI_ADDR_SIZE - 1 &&
	       sscanf(s, "%4x:%2x:%2x.%1x%c", &dom, &bus, &devn, &fn, &end) == 4;
}

static void check_devices(void)
{
	struct doca_devinfo **list = NULL;
	struct doca_devinfo *lo, *again;
	struct doca_dev *dev = NULL;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE] = "";
	char pci2[DOCA_DEVINFO_PCI_ADDR_SIZE] = "";
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE] = "";
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";
	char tiny[2];
	uint8_t ipv4[DOCA_DEVINFO_IPV4_ADDR_SIZE] = {0, 0, 0, 0};
	uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE];
	uint8_t equal = 0;
	enum doca_pci_func_type func = DOCA_PCI_FUNC_TYPE_SF;
	uint32_t n = 0;

	CHECK_RESULT(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	if (list == NULL) {
		printf("FAIL: no device list\n");
		group_failures++;
		end_group("devinfo");
		return;
	}
	CHECK(n >= 1);
	lo = find_by_iface(list, n, "lo");
	CHECK(lo != NULL);
	if (lo != NULL) {
		/* Address, in the long form, and both forms compare equal. */
		CHECK_RESULT(doca_devinfo_get_pci_addr_str(lo, pci), DOCA_SUCCESS);
		CHECK(is_pci_addr(pci));
		printf("lo pci=%s\n", pci);
		CHECK_RESULT(doca_devinfo_is_equal_pci_addr(lo, pci, &equal), DOCA_SUCCESS);
		CHECK(equal == 1);
		equal = 0;
		CHECK_RESULT(doca_devinfo_is_equal_pci_addr(lo, pci + 5, &equal), DOCA_SUCCESS);
		CHECK(equal == 1);
		/* Round trip: iface -> pci -> the same devinfo. */
		again = find_by_pci(list, n, pci);
		CHECK(again == lo);
		CHECK_RESULT(doca_devinfo_get_iface_name(lo, iface, sizeof(iface)), DOCA_SUCCESS);
		CHECK(strcmp(iface, "lo") == 0);
		CHECK_RESULT(doca_devinfo_get_ibdev_name(lo, ibdev, sizeof(ibdev)), DOCA_SUCCESS);
		CHECK(ibdev[0] != '\0');
		CHECK_RESULT(doca_devinfo_get_mac_addr(lo, mac, sizeof(mac)), DOCA_SUCCESS);
		CHECK_RESULT(doca_devinfo_get_ipv4_addr(lo, ipv4, sizeof(ipv4)), DOCA_SUCCESS);
		CHECK(ipv4[0] == 127 && ipv4[1] == 0 && ipv4[2] == 0 && ipv4[3] == 1);
		CHECK_RESULT(doca_devinfo_get_pci_func_type(lo, &func), DOCA_SUCCESS);
		CHECK(func == DOCA_PCI_FUNC_TYPE_PF);
		/* Buffers too small for the answer are refused, not overrun. */
		CHECK_RESULT(doca_devinfo_get_iface_name(lo, tiny, sizeof(tiny)), DOCA_ERROR_INVALID_VALUE);
		CHECK_RESULT(doca_devinfo_get_mac_addr(lo, mac, 2), DOCA_ERROR_INVALID_VALUE);
	}
	CHECK_RESULT(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	end_group("devinfo");

	/* Open by PCI address the way samples do; the open device describes the same port. */
	if (pci[0] != '\0') {
		CHECK_RESULT(open_with_pci(pci, &dev), DOCA_SUCCESS);
		CHECK(dev != NULL);
		if (dev != NULL) {
			lo = doca_dev_as_devinfo(dev);
			CHECK(lo != NULL);
			if (lo != NULL) {
				CHECK_RESULT(doca_devinfo_get_iface_name(lo, iface, sizeof(iface)), DOCA_SUCCESS);
				CHECK(strcmp(iface, "lo") == 0);
				CHECK_RESULT(doca_devinfo_get_pci_addr_str(lo, pci2), DOCA_SUCCESS);
				CHECK(strcmp(pci, pci2) == 0);
			}
			CHECK_RESULT(doca_dev_close(dev), DOCA_SUCCESS);
		}
	} else {
		printf("FAIL: lo has no PCI address to open\n");
		group_failures++;
	}
	end_group("dev open/close");

	/* An address no device has. */
	dev = NULL;
	CHECK_RESULT(open_with_pci("fe:1f.7", &dev), DOCA_ERROR_NOT_FOUND);
	CHECK(dev == NULL);
	end_group("unknown pci");
}

static void check_pe(void)
{
	struct doca_pe *pe = NULL;

	CHECK_RESULT(doca_pe_create(&pe), DOCA_SUCCESS);
	CHECK(pe != NULL);
	if (pe != NULL) {
		CHECK(doca_pe_progress(pe) == 0);
		CHECK(doca_pe_progress(pe) == 0);
		CHECK_RESULT(doca_pe_destroy(pe), DOCA_SUCCESS);
	}
	end_group("pe");
}

static void check_errors(void)
{
	const char *names[32];
	uint32_t code, other;

	CHECK(strcmp(doca_error_get_name(DOCA_ERROR_BAD_STATE), "DOCA_ERROR_BAD_STATE") == 0);
	CHECK(strcmp(doca_error_get_name((doca_error_t)18), "DOCA_ERROR_BAD_STATE") == 0);
	CHECK(strcmp(doca_error_get_name(DOCA_SUCCESS), "DOCA_SUCCESS") == 0);
	CHECK(strcmp(doca_error_get_name(DOCA_ERROR_NOT_FOUND), "DOCA_ERROR_NOT_FOUND") == 0);
	for (code = 0; code < 32; code++) {
		names[code] = doca_error_get_name((doca_error_t)code);
		CHECK(names[code] != NULL && strncmp(names[code], "DOCA_", 5) == 0);
		CHECK(doca_error_get_descr((doca_error_t)code) != NULL &&
		      doca_error_get_descr((doca_error_t)code)[0] != '\0');
		for (other = 0; names[code] != NULL && other < code; other++)
			CHECK(names[other] == NULL || strcmp(names[code], names[other]) != 0);
	}
	/* Unknown codes get some text, not a crash. */
	CHECK(doca_error_get_name((doca_error_t)32) != NULL);
	CHECK(doca_error_get_name((doca_error_t)1000) != NULL);
	CHECK(doca_error_get_descr((doca_error_t)0x7fffffff) != NULL);
	end_group("error strings");
}

static void check_null_arguments(void)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	enum doca_ctx_states state;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint32_t n = 0;
	uint8_t equal;
	int source;

	CHECK_RESULT(doca_devinfo_create_list(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_devinfo_create_list(&list, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_devinfo_destroy_list(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_devinfo_get_pci_addr_str(NULL, pci), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_devinfo_is_equal_pci_addr(NULL, "00:00.0", &equal), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_dev_open(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_dev_close(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_dev_as_devinfo(NULL) == NULL);
	CHECK_RESULT(doca_pe_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_pe_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_pe_connect_ctx(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_pe_progress(NULL) == 0);
	CHECK_RESULT(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_ctx_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_ctx_get_state(NULL, &state), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_log_register_source(NULL, &source), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_log_backend_create_with_file(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	end_group("null arguments");
}

/* Everything written to f so far. */
static void read_all(FILE *f, char *buf, size_t size)
{
	size_t len;

	fflush(f);
	rewind(f);
	len = fread(buf, 1, size - 1, f);
	buf[len] = '\0';
}

static void check_logging(void)
{
	struct doca_log_backend *backend = NULL;
	FILE *f = tmpfile();
	static char text[16384];

	CHECK(f != NULL);
	if (f == NULL) {
		end_group("log levels");
		return;
	}
	CHECK_RESULT(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	CHECK_RESULT(doca_log_backend_create_with_file(f, &backend), DOCA_SUCCESS);
	CHECK(backend != NULL);
	if (backend != NULL) {
		CHECK_RESULT(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
		DOCA_LOG_ERR("smoke-marker-err %d", 1);
		DOCA_LOG_DBG("smoke-marker-dbg %s", "two");
		DOCA_LOG_TRC("smoke-marker-trc");
		read_all(f, text, sizeof(text));
		CHECK(strstr(text, "smoke-marker-err 1") != NULL);
		CHECK(strstr(text, "smoke-marker-dbg two") != NULL);
		CHECK(strstr(text, "smoke-marker-trc") == NULL);
		/* The source registered by DOCA_LOG_REGISTER appears with the message. */
		CHECK(strstr(text, "SMOKE") != NULL);

		/* Narrow the window: INFO is now below it, WARNING still passes. */
		CHECK_RESULT(doca_log_backend_set_level_lower_limit(backend, DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);
		DOCA_LOG_INFO("smoke-marker-info");
		DOCA_LOG_WARN("smoke-marker-warn");
		read_all(f, text, sizeof(text));
		CHECK(strstr(text, "smoke-marker-info") == NULL);
		CHECK(strstr(text, "smoke-marker-warn") != NULL);
	}
	if (group_failures != 0)
		printf("log file contents:\n%s\n", text);
	end_group("log levels");
}

/* GPU calls refuse bad arguments, and an unknown GPU, without needing a GPU. */
static void check_gpu_arguments(void)
{
	struct doca_gpu *gpu = NULL;
	void *gpu_ptr = NULL, *cpu_ptr = NULL;
	doca_error_t result;

	CHECK_RESULT(doca_gpu_create(NULL, &gpu), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_gpu_create("fe:1f.7", NULL), DOCA_ERROR_INVALID_VALUE);
	/* No such GPU: NOT_FOUND, or DRIVER on a machine without a CUDA driver. */
	result = doca_gpu_create("fe:1f.7", &gpu);
	CHECK(result == DOCA_ERROR_NOT_FOUND || result == DOCA_ERROR_DRIVER);
	CHECK(gpu == NULL);
	CHECK_RESULT(doca_gpu_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_gpu_mem_alloc(NULL, 4096, 0, DOCA_GPU_MEM_TYPE_GPU, &gpu_ptr, &cpu_ptr),
		     DOCA_ERROR_INVALID_VALUE);
	CHECK_RESULT(doca_gpu_mem_free(NULL, gpu_ptr), DOCA_ERROR_INVALID_VALUE);
	end_group("gpu arguments");
}

static void check_version(void)
{
	const char *runtime = doca_version_runtime();

	CHECK(runtime != NULL);
	if (runtime != NULL) {
		printf("version: headers %s, runtime %s\n", doca_version(), runtime);
		CHECK(strncmp(runtime, "3.3", 3) == 0);
	}
	end_group("version");
}

int main(void)
{
	CHECK_RESULT(doca_log_backend_create_standard(), DOCA_SUCCESS);
	end_group("standard log backend");
	check_errors();
	check_null_arguments();
	check_pe();
	check_devices();
	check_logging();
	check_gpu_arguments();
	check_version();
	if (failures != 0) {
		printf("smoke: %d checks failed\n", failures);
		return 1;
	}
	printf("smoke: all checks passed\n");
	return 0;
}
