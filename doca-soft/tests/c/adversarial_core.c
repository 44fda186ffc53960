/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Adversarial cases of the core family: doca_error, doca_log, doca_dev/devinfo, doca_pe and
 * doca_ctx under out-of-range codes and levels, undersized buffers, unknown devices and
 * wrong states. See adversarial.h for the harness.
 */
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_eth_rxq.h>
#include <doca_log.h>
#include <doca_pe.h>

#include "adversarial.h"

static int error_names_of_any_code(void)
{
	uint32_t codes[] = {0, 1, 7, 31, 32, 33, 100, 1000, 0x7fffffff, 0xffffffff};
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		ADV_CHECK(doca_error_get_name((doca_error_t)codes[i]) != NULL);
		ADV_CHECK(doca_error_get_descr((doca_error_t)codes[i]) != NULL);
	}
	return 0;
}

static int log_levels_out_of_range(void)
{
	struct doca_log_backend *b = NULL;
	uint32_t level;

	ADV_EXPECT(doca_log_level_set_global_lower_limit(99), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_log_level_set_global_upper_limit(UINT32_MAX), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_log_level_set_global_sdk_limit(7), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_log_backend_create_with_fd(-1, &b), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_log_backend_create_with_fd_sdk(1, &b), DOCA_SUCCESS);
	ADV_EXPECT(doca_log_backend_set_sdk_level(b, 1000), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_log_backend_set_sdk_level(NULL, DOCA_LOG_LEVEL_INFO), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_log_backend_get_sdk_level(b, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_log_backend_get_sdk_level(b, &level), DOCA_SUCCESS);
	ADV_EXPECT(doca_log_backend_set_level_lower_limit(b, 1000), DOCA_ERROR_INVALID_VALUE);
	return 0;
}

static int devinfo_undersized_buffers_and_bad_addresses(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	char tiny[1];
	uint8_t mac[6], equal = 2;

	ADV_EXPECT(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	ADV_CHECK(n > 0);
	ADV_EXPECT(doca_devinfo_get_iface_name(list[0], tiny, 0), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_devinfo_get_iface_name(list[0], NULL, 64), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_devinfo_get_ibdev_name(list[0], tiny, sizeof(tiny)), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_devinfo_get_mac_addr(list[0], mac, 0), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_devinfo_get_pci_addr_str(list[0], NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_devinfo_is_equal_pci_addr(list[0], NULL, &equal), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_devinfo_is_equal_pci_addr(list[0], "00:00.0", NULL), DOCA_ERROR_INVALID_VALUE);
	/* Samples compare every device with the user's string: no match, not an error. */
	ADV_EXPECT(doca_devinfo_is_equal_pci_addr(list[0], "not a pci address at all", &equal),
		   DOCA_SUCCESS);
	ADV_CHECK(equal == 0);
	ADV_EXPECT(doca_devinfo_is_equal_pci_addr(list[0], "", &equal), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	return 0;
}

static int device_lists_come_and_go(void)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev;
	uint32_t n = 0;
	int i;

	for (i = 0; i < 2000; i++) {
		ADV_EXPECT(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
		ADV_EXPECT(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	}
	for (i = 0; i < 200; i++) {
		dev = adv_open_iface("adv0");
		ADV_CHECK(dev != NULL);
		ADV_EXPECT(doca_dev_close(dev), DOCA_SUCCESS);
	}
	return 0;
}

static int pe_and_ctx_wrong_states(void)
{
	struct doca_dev *dev = adv_open_iface("adv0");
	struct doca_eth_rxq *rxq = NULL;
	struct doca_pe *pe = NULL;
	struct doca_ctx *ctx;
	enum doca_ctx_states state;
	int i;

	ADV_CHECK(dev != NULL);
	ADV_EXPECT(doca_pe_create(&pe), DOCA_SUCCESS);
	for (i = 0; i < 1000; i++)
		ADV_CHECK(doca_pe_progress(pe) == 0);
	ADV_EXPECT(doca_eth_rxq_create(dev, 32, 1600, &rxq), DOCA_SUCCESS);
	ctx = doca_eth_rxq_as_doca_ctx(rxq);
	ADV_CHECK(ctx != NULL);
	ADV_EXPECT(doca_ctx_get_state(ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_ctx_get_state(ctx, &state), DOCA_SUCCESS);
	ADV_CHECK(state == DOCA_CTX_STATE_IDLE);
	ADV_EXPECT(doca_ctx_stop(ctx), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_pe_connect_ctx(pe, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_pe_connect_ctx(NULL, ctx), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	ADV_EXPECT(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	ADV_EXPECT(doca_eth_rxq_destroy(rxq), DOCA_SUCCESS);
	ADV_EXPECT(doca_pe_destroy(pe), DOCA_SUCCESS);
	ADV_EXPECT(doca_dev_close(dev), DOCA_SUCCESS);
	return 0;
}

static int unknown_devices(void)
{
	struct doca_dev *dev = NULL;

	ADV_CHECK(adv_open_iface("no-such-iface") == NULL);
	ADV_CHECK(doca_dev_as_devinfo(NULL) == NULL);
	ADV_EXPECT(doca_dev_open(NULL, &dev), DOCA_ERROR_INVALID_VALUE);
	return 0;
}

static const struct adv_case cases[] = {
	ADV_CASE(error_names_of_any_code),
	ADV_CASE(log_levels_out_of_range),
	ADV_CASE(devinfo_undersized_buffers_and_bad_addresses),
	ADV_CASE(device_lists_come_and_go),
	ADV_CASE(pe_and_ctx_wrong_states),
	ADV_CASE(unknown_devices),
};

ADV_MAIN(cases)
