/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: plain types shared by the whole DOCA API.
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#ifdef __linux__
#include <linux/types.h>
#endif
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Integers holding big-endian values (header fields, memory keys). On Linux they are the
 * kernel's __be types, so sparse-style checks treat them as such.
 */
#ifdef __linux__
typedef __be16 doca_be16_t;
typedef __be32 doca_be32_t;
typedef __be64 doca_be64_t;
#else
typedef uint16_t doca_be16_t;
typedef uint32_t doca_be32_t;
typedef uint64_t doca_be64_t;
#endif

/* Bytes of an RDMA global identifier (GID). */
#define DOCA_GID_BYTE_LENGTH 16

/* Opaque objects used across several headers. */
struct doca_devinfo;
struct doca_devinfo_rep;
struct doca_dev;
struct doca_dev_rep;
struct doca_buf;
struct doca_mmap;
struct doca_ctx;
struct doca_pe;
struct doca_task;
struct doca_gpu;

/* Caller data carried through the API and handed back in callbacks. */
union doca_data {
	void *ptr;
	uint64_t u64;
};

/* Where memory from doca_gpu_mem_alloc lives and who can reach it. */
enum doca_gpu_mem_type {
	/* Device memory; the CPU pointer is NULL. */
	DOCA_GPU_MEM_TYPE_GPU = 0,
	/* Device memory with a CPU mapping. */
	DOCA_GPU_MEM_TYPE_GPU_CPU = 1,
	/* Pinned host memory mapped into the device. */
	DOCA_GPU_MEM_TYPE_CPU_GPU = 2,
};

/* Access rights of a memory registration (bits, OR them together). */
enum doca_access_flag {
	DOCA_ACCESS_FLAG_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE = (1 << 0),
	DOCA_ACCESS_FLAG_RDMA_READ = (1 << 1),
	DOCA_ACCESS_FLAG_RDMA_WRITE = (1 << 2),
	DOCA_ACCESS_FLAG_RDMA_ATOMIC = (1 << 3),
	DOCA_ACCESS_FLAG_PCI_READ_ONLY = (1 << 4),
	DOCA_ACCESS_FLAG_PCI_READ_WRITE = (1 << 5),
	DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING = (1 << 6),
};

/* Path MTU of an RDMA connection (RAW_ETHERNET: the port's Ethernet MTU). */
enum doca_mtu_size {
	DOCA_MTU_SIZE_256_BYTES = 0,
	DOCA_MTU_SIZE_512_BYTES = 1,
	DOCA_MTU_SIZE_1K_BYTES = 2,
	DOCA_MTU_SIZE_2K_BYTES = 3,
	DOCA_MTU_SIZE_4K_BYTES = 4,
	DOCA_MTU_SIZE_RAW_ETHERNET = 5,
};

/* Kind of PCI function a device is. */
enum doca_pci_func_type {
	DOCA_PCI_FUNC_TYPE_PF = 0,
	DOCA_PCI_FUNC_TYPE_VF = 1,
	DOCA_PCI_FUNC_TYPE_SF = 2,
};

/* OS handle a program can wait on (a file descriptor on Linux). */
typedef int doca_event_handle_t;
/* Value of a doca_event_handle_t that refers to nothing. */
#define doca_event_invalid_handle -1
/* Handle a progress engine signals when it has work (a file descriptor on Linux). */
typedef doca_event_handle_t doca_notification_handle_t;

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
