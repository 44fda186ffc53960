/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A program shaped like the DOCA samples and their shared helper code, written for
 * doca-soft's tests: log backends set up first, argp flags with callbacks, a version
 * check, opening a NIC by PCI address through the devinfo list, listing representors,
 * and a memory map carved into buffers from a buffer inventory. Built with
 * -Wall -Wextra -Werror against the pkg-config flags, as sample programs are.
 *
 *   sample_like -p <PCI address> [-c <buffers>] [-d]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_types.h>
#include <doca_version.h>

DOCA_LOG_REGISTER(SAMPLE_LIKE);

#define MAX_BUFS 16
#define BUF_SIZE 64

struct sample_cfg {
	char pci_addr[DOCA_DEVINFO_PCI_ADDR_SIZE];
	int num_bufs;
	bool verbose;
};

/* Optional capability filter of the open helper; NULL accepts every device. */
typedef doca_error_t (*dev_cap_check_t)(struct doca_devinfo *devinfo);

static doca_error_t pci_addr_callback(void *param, void *config)
{
	struct sample_cfg *cfg = (struct sample_cfg *)config;
	const char *addr = (const char *)param;

	if (strnlen(addr, sizeof(cfg->pci_addr)) >= sizeof(cfg->pci_addr)) {
		DOCA_LOG_ERR("PCI address %s is too long", addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->pci_addr, addr);
	return DOCA_SUCCESS;
}

static doca_error_t num_bufs_callback(void *param, void *config)
{
	struct sample_cfg *cfg = (struct sample_cfg *)config;
	int value = *(int *)param;

	if (value < 1 || value > MAX_BUFS) {
		DOCA_LOG_ERR("buffer count %d is outside 1..%d", value, MAX_BUFS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->num_bufs = value;
	return DOCA_SUCCESS;
}

static doca_error_t verbose_callback(void *param, void *config)
{
	struct sample_cfg *cfg = (struct sample_cfg *)config;

	cfg->verbose = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t register_param(const char *short_name,
				   const char *long_name,
				   const char *arguments,
				   const char *description,
				   enum doca_argp_type type,
				   bool mandatory,
				   doca_argp_param_cb_t callback)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create ARGP param: %s", doca_error_get_descr(result));
		return result;
	}
	doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	if (arguments != NULL)
		doca_argp_param_set_arguments(param, arguments);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, callback);
	doca_argp_param_set_type(param, type);
	if (mandatory)
		doca_argp_param_set_mandatory(param);
	result = doca_argp_register_param(param);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to register program param %s: %s", long_name, doca_error_get_descr(result));
	return result;
}

static doca_error_t register_sample_params(void)
{
	doca_error_t result;

	result = register_param("p", "pci-addr", "<PCI-ADDRESS>", "NIC PCI address", DOCA_ARGP_TYPE_STRING, true,
				pci_addr_callback);
	if (result != DOCA_SUCCESS)
		return result;
	result = register_param("c", "count", "<N>", "Buffers to carve (1-16)", DOCA_ARGP_TYPE_INT, false,
				num_bufs_callback);
	if (result != DOCA_SUCCESS)
		return result;
	return register_param("d", "dump", NULL, "Print every buffer", DOCA_ARGP_TYPE_BOOLEAN, false,
			      verbose_callback);
}

/* First device at pci_addr that passes the capability check, opened. */
static doca_error_t open_doca_device_with_pci(const char *pci_addr, dev_cap_check_t cap_check, struct doca_dev **dev)
{
	struct doca_devinfo **dev_list;
	uint32_t nb_devs, i;
	uint8_t is_equal;
	doca_error_t result;

	*dev = NULL;
	result = doca_devinfo_create_list(&dev_list, &nb_devs);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to load doca devices list: %s", doca_error_get_descr(result));
		return result;
	}
	for (i = 0; i < nb_devs; i++) {
		result = doca_devinfo_is_equal_pci_addr(dev_list[i], pci_addr, &is_equal);
		if (result != DOCA_SUCCESS || !is_equal)
			continue;
		if (cap_check != NULL && cap_check(dev_list[i]) != DOCA_SUCCESS)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		if (result == DOCA_SUCCESS)
			break;
		DOCA_LOG_WARN("Failed to open device %s: %s", pci_addr, doca_error_get_descr(result));
	}
	doca_devinfo_destroy_list(dev_list);
	if (*dev == NULL) {
		DOCA_LOG_ERR("No usable device at PCI address %s", pci_addr);
		return DOCA_ERROR_NOT_FOUND;
	}
	return DOCA_SUCCESS;
}

/* Any device with a non-empty interface name passes. */
static doca_error_t has_iface(struct doca_devinfo *devinfo)
{
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	doca_error_t result = doca_devinfo_get_iface_name(devinfo, iface, sizeof(iface));

	if (result != DOCA_SUCCESS)
		return result;
	return iface[0] != '\0' ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t list_representors(struct doca_dev *dev)
{
	struct doca_devinfo_rep **reps;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint32_t nb_reps = 0, i;
	doca_error_t result;

	result = doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &nb_reps);
	if (result == DOCA_ERROR_NOT_SUPPORTED) {
		printf("representors: not supported\n");
		return DOCA_SUCCESS;
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to list representors: %s", doca_error_get_descr(result));
		return result;
	}
	printf("representors: %u\n", nb_reps);
	for (i = 0; i < nb_reps; i++) {
		if (doca_devinfo_rep_get_pci_addr_str(reps[i], pci) == DOCA_SUCCESS)
			printf("  representor %u at %s\n", i, pci);
	}
	return doca_devinfo_rep_destroy_list(reps);
}

/* Carve a host buffer registered with dev into cfg->num_bufs doca_bufs and check them. */
static doca_error_t carve_buffers(struct doca_dev *dev, const struct sample_cfg *cfg)
{
	static uint8_t memory[MAX_BUFS * BUF_SIZE];
	struct doca_buf *bufs[MAX_BUFS];
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inventory = NULL;
	struct doca_buf *next, *last;
	void *head, *data;
	size_t len, data_len;
	int i, got = 0, walked;
	doca_error_t result, tmp;

	result = doca_mmap_create(&mmap);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_mmap_set_memrange(mmap, memory, sizeof(memory));
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_add_dev(mmap, dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(mmap);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_create((size_t)cfg->num_bufs, &inventory);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_start(inventory);
	for (i = 0; result == DOCA_SUCCESS && i < cfg->num_bufs; i++) {
		result = doca_buf_inventory_buf_get_by_addr(inventory, mmap, memory + i * BUF_SIZE, BUF_SIZE, &bufs[i]);
		if (result != DOCA_SUCCESS)
			break;
		got++;
		/* Fresh buffer: whole range, empty data section at its start. */
		result = doca_buf_get_head(bufs[i], &head);
		DOCA_ERROR_PROPAGATE(result, doca_buf_get_len(bufs[i], &len));
		DOCA_ERROR_PROPAGATE(result, doca_buf_get_data_len(bufs[i], &data_len));
		if (result == DOCA_SUCCESS &&
		    (head != (void *)(memory + i * BUF_SIZE) || len != BUF_SIZE || data_len != 0)) {
			DOCA_LOG_ERR("buffer %d: head %p len %zu data_len %zu", i, head, len, data_len);
			result = DOCA_ERROR_UNEXPECTED;
		}
		/* Put 16 bytes of data 8 bytes in. */
		DOCA_ERROR_PROPAGATE(result, doca_buf_set_data(bufs[i], memory + i * BUF_SIZE + 8, 16));
		DOCA_ERROR_PROPAGATE(result, doca_buf_get_data(bufs[i], &data));
		DOCA_ERROR_PROPAGATE(result, doca_buf_get_data_len(bufs[i], &data_len));
		if (result == DOCA_SUCCESS && (data != (void *)(memory + i * BUF_SIZE + 8) || data_len != 16)) {
			DOCA_LOG_ERR("buffer %d: data %p data_len %zu after set_data", i, data, data_len);
			result = DOCA_ERROR_UNEXPECTED;
		}
		/* Data past the end of the buffer is refused. */
		if (result == DOCA_SUCCESS &&
		    doca_buf_set_data(bufs[i], memory + i * BUF_SIZE + 60, 16) != DOCA_ERROR_INVALID_VALUE) {
			DOCA_LOG_ERR("buffer %d: set_data past its end was accepted", i);
			result = DOCA_ERROR_UNEXPECTED;
		}
		if (result == DOCA_SUCCESS && cfg->verbose)
			printf("  buffer %d at offset %d\n", i, i * BUF_SIZE);
	}
	/* Chain them all behind the first and walk the list. */
	for (i = 1; result == DOCA_SUCCESS && i < got; i++)
		result = doca_buf_chain_list(bufs[0], bufs[i]);
	if (result == DOCA_SUCCESS && got > 0) {
		walked = 1;
		next = bufs[0];
		while (result == DOCA_SUCCESS && walked <= got) {
			result = doca_buf_get_next_in_list(next, &next);
			if (next == NULL)
				break;
			if (next != bufs[walked]) {
				DOCA_LOG_ERR("list element %d is not buffer %d", walked, walked);
				result = DOCA_ERROR_UNEXPECTED;
			}
			walked++;
		}
		DOCA_ERROR_PROPAGATE(result, doca_buf_get_last_in_list(bufs[0], &last));
		if (result == DOCA_SUCCESS && (walked != got || last != bufs[got - 1])) {
			DOCA_LOG_ERR("list walk found %d of %d buffers", walked, got);
			result = DOCA_ERROR_UNEXPECTED;
		}
		if (result == DOCA_SUCCESS)
			printf("buffers: %d carved and chained\n", got);
	}
	/* Releasing the head returns the whole list to the inventory. */
	if (got > 0) {
		if (result == DOCA_SUCCESS)
			tmp = doca_buf_dec_refcount(bufs[0], NULL);
		else
			for (i = 0, tmp = DOCA_SUCCESS; i < got; i++)
				DOCA_ERROR_PROPAGATE(tmp, doca_buf_dec_refcount(bufs[i], NULL));
		DOCA_ERROR_PROPAGATE(result, tmp);
	}
	if (inventory != NULL) {
		DOCA_ERROR_PROPAGATE(result, doca_buf_inventory_stop(inventory));
		DOCA_ERROR_PROPAGATE(result, doca_buf_inventory_destroy(inventory));
	}
	if (mmap != NULL) {
		tmp = doca_mmap_stop(mmap);
		/* A map that never started cannot be stopped; that is not a new failure. */
		if (tmp != DOCA_ERROR_BAD_STATE)
			DOCA_ERROR_PROPAGATE(result, tmp);
		DOCA_ERROR_PROPAGATE(result, doca_mmap_destroy(mmap));
	}
	return result;
}

int main(int argc, char **argv)
{
	struct sample_cfg cfg;
	struct doca_log_backend *sdk_log;
	struct doca_dev *dev = NULL;
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	const char *runtime;
	doca_error_t result;
	int exit_status = EXIT_FAILURE;

	memset(&cfg, 0, sizeof(cfg));
	cfg.num_bufs = 4;

	/* Application messages to the standard streams, library messages from WARNING up. */
	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_log_backend_create_with_file_sdk(stderr, &sdk_log);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;

	DOCA_LOG_INFO("Starting the sample");

	result = doca_argp_init("doca_sample_like", &cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to init ARGP resources: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	result = register_sample_params();
	if (result != DOCA_SUCCESS)
		goto argp_cleanup;
	result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_error_get_descr(result));
		goto argp_cleanup;
	}

	/* The headers and the library must be the same major.minor. */
	runtime = doca_version_runtime();
	printf("version: headers %s, runtime %s\n", doca_version(), runtime);
	if (runtime == NULL || strncmp(runtime, DOCA_VERSION_TEXT(DOCA_VERSION_MAJOR) "." DOCA_VERSION_TEXT(DOCA_VERSION_MINOR) ".", 4) != 0) {
		DOCA_LOG_ERR("Runtime version %s does not match headers %s", runtime, DOCA_VERSION_STRING);
		goto argp_cleanup;
	}

	result = open_doca_device_with_pci(cfg.pci_addr, has_iface, &dev);
	if (result != DOCA_SUCCESS)
		goto argp_cleanup;
	result = doca_devinfo_get_iface_name(doca_dev_as_devinfo(dev), iface, sizeof(iface));
	if (result != DOCA_SUCCESS)
		goto dev_cleanup;
	printf("opened %s (%s)\n", cfg.pci_addr, iface);

	result = list_representors(dev);
	if (result != DOCA_SUCCESS)
		goto dev_cleanup;
	result = carve_buffers(dev, &cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Buffer checks failed: %s", doca_error_get_descr(result));
		goto dev_cleanup;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	exit_status = EXIT_SUCCESS;

dev_cleanup:
	result = doca_dev_close(dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to close device: %s", doca_error_get_descr(result));
		exit_status = EXIT_FAILURE;
	}
argp_cleanup:
	doca_argp_destroy();
	return exit_status;
}
