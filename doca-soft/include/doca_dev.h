/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: device discovery and opening.
 *
 * In the software runtime every Linux network interface (and every port named in
 * DOCA_SOFT_PORTS) is a device with a stable synthetic PCI address.
 */
#ifndef DOCA_DEV_H_
#define DOCA_DEV_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_devinfo_rep;
struct doca_dev;
struct doca_dev_rep;

/* Buffer sizes for the devinfo getters (text sizes include the terminating NUL). */
#define DOCA_DEVINFO_PCI_ADDR_SIZE 13
#define DOCA_DEVINFO_PCI_BDF_SIZE 8
#define DOCA_DEVINFO_IBDEV_NAME_SIZE 64
#define DOCA_DEVINFO_IFACE_NAME_SIZE 256
#define DOCA_DEVINFO_MAC_ADDR_SIZE 6
#define DOCA_DEVINFO_IPV4_ADDR_SIZE 4
#define DOCA_DEVINFO_IPV6_ADDR_SIZE 16
#define DOCA_DEVINFO_VUID_SIZE 128
#define DOCA_DEVINFO_REP_VUID_SIZE 128
#define DOCA_DEVINFO_REP_PCI_ADDR_SIZE DOCA_DEVINFO_PCI_ADDR_SIZE

/* Which representors doca_devinfo_rep_create_list returns (bits). */
enum doca_devinfo_rep_filter {
	DOCA_DEVINFO_REP_FILTER_ALL = 0,
	DOCA_DEVINFO_REP_FILTER_NET = (1 << 1),
	DOCA_DEVINFO_REP_FILTER_EMULATED = (1 << 2),
};

/* All devices; free the array with doca_devinfo_destroy_list. */
DOCA_STABLE
doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

DOCA_STABLE
doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list);

/* pci_addr_str: "BB:DD.F" or "DDDD:BB:DD.F"; *is_equal is 1 on a match, else 0. */
DOCA_STABLE
doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo,
					    const char *pci_addr_str,
					    uint8_t *is_equal);

/* Writes "DDDD:BB:DD.F" into a buffer of DOCA_DEVINFO_PCI_ADDR_SIZE bytes. */
DOCA_STABLE
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);

DOCA_STABLE
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size);

DOCA_STABLE
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size);

DOCA_STABLE
doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size);

/* Network byte order; DOCA_ERROR_NOT_FOUND when the interface has no IPv4 address. */
DOCA_STABLE
doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size);

DOCA_STABLE
doca_error_t doca_devinfo_get_pci_func_type(const struct doca_devinfo *devinfo,
					    enum doca_pci_func_type *pci_func_type);

/* Index of a sub-function; fails for devices that are not SFs. */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index);

DOCA_STABLE
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

DOCA_STABLE
doca_error_t doca_dev_close(struct doca_dev *dev);

/* Description of an open device (owned by the device). */
DOCA_STABLE
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);

/* Representors of a device, filtered by enum doca_devinfo_rep_filter bits. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev,
					  int filter,
					  struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep);

DOCA_STABLE
doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep);

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size);

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str);

DOCA_STABLE
doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep,
						const char *pci_addr_str,
						uint8_t *is_equal);

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type);

DOCA_STABLE
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo_rep, struct doca_dev_rep **dev_rep);

DOCA_STABLE
doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev_rep);

DOCA_STABLE
struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H_ */
