/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Checks, at compile time, that the core headers carry the values the reference facts
 * give (gpunetio-api.md 2.1, 2.2, 9.5; urom-api.md 2.6), and, at run time, that the
 * header-only macros behave. Built as C and as C++ by tests/headers.rs; needs no library.
 */
#include <stdio.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_bitfield.h>
#include <doca_buf_inventory.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_gpunetio.h>
#include <doca_log.h>
#include <doca_types.h>
#include <doca_version.h>

#ifdef __cplusplus
#define FACT(cond) static_assert(cond, #cond)
#else
#define FACT(cond) _Static_assert(cond, #cond)
#endif

FACT(DOCA_SUCCESS == 0);
FACT(DOCA_ERROR_UNKNOWN == 1);
FACT(DOCA_ERROR_NOT_PERMITTED == 2);
FACT(DOCA_ERROR_IN_USE == 3);
FACT(DOCA_ERROR_NOT_SUPPORTED == 4);
FACT(DOCA_ERROR_AGAIN == 5);
FACT(DOCA_ERROR_INVALID_VALUE == 6);
FACT(DOCA_ERROR_NO_MEMORY == 7);
FACT(DOCA_ERROR_INITIALIZATION == 8);
FACT(DOCA_ERROR_TIME_OUT == 9);
FACT(DOCA_ERROR_SHUTDOWN == 10);
FACT(DOCA_ERROR_CONNECTION_RESET == 11);
FACT(DOCA_ERROR_CONNECTION_ABORTED == 12);
FACT(DOCA_ERROR_CONNECTION_INPROGRESS == 13);
FACT(DOCA_ERROR_NOT_CONNECTED == 14);
FACT(DOCA_ERROR_NO_LOCK == 15);
FACT(DOCA_ERROR_NOT_FOUND == 16);
FACT(DOCA_ERROR_IO_FAILED == 17);
FACT(DOCA_ERROR_BAD_STATE == 18);
FACT(DOCA_ERROR_UNSUPPORTED_VERSION == 19);
FACT(DOCA_ERROR_OPERATING_SYSTEM == 20);
FACT(DOCA_ERROR_DRIVER == 21);
FACT(DOCA_ERROR_UNEXPECTED == 22);
FACT(DOCA_ERROR_ALREADY_EXIST == 23);
FACT(DOCA_ERROR_FULL == 24);
FACT(DOCA_ERROR_EMPTY == 25);
FACT(DOCA_ERROR_IN_PROGRESS == 26);
FACT(DOCA_ERROR_TOO_BIG == 27);
FACT(DOCA_ERROR_AUTHENTICATION == 28);
FACT(DOCA_ERROR_BAD_CONFIG == 29);
FACT(DOCA_ERROR_SKIPPED == 30);
FACT(DOCA_ERROR_DEVICE_FATAL_ERROR == 31);
FACT(sizeof(doca_error_t) == 4);

FACT(DOCA_GPU_MEM_TYPE_GPU == 0 && DOCA_GPU_MEM_TYPE_GPU_CPU == 1 && DOCA_GPU_MEM_TYPE_CPU_GPU == 2);
FACT(DOCA_ACCESS_FLAG_LOCAL_READ_ONLY == 0 && DOCA_ACCESS_FLAG_LOCAL_READ_WRITE == 1);
FACT(DOCA_ACCESS_FLAG_RDMA_READ == 2 && DOCA_ACCESS_FLAG_RDMA_WRITE == 4 && DOCA_ACCESS_FLAG_RDMA_ATOMIC == 8);
FACT(DOCA_ACCESS_FLAG_PCI_READ_ONLY == 16 && DOCA_ACCESS_FLAG_PCI_READ_WRITE == 32);
FACT(DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING == 64);
FACT(DOCA_PCI_FUNC_TYPE_PF == 0 && DOCA_PCI_FUNC_TYPE_VF == 1 && DOCA_PCI_FUNC_TYPE_SF == 2);
FACT(DOCA_CTX_STATE_IDLE == 0 && DOCA_CTX_STATE_STARTING == 1);
FACT(DOCA_CTX_STATE_RUNNING == 2 && DOCA_CTX_STATE_STOPPING == 3);
FACT(DOCA_LOG_LEVEL_DISABLE == 10 && DOCA_LOG_LEVEL_CRIT == 20 && DOCA_LOG_LEVEL_ERROR == 30);
FACT(DOCA_LOG_LEVEL_WARNING == 40 && DOCA_LOG_LEVEL_INFO == 50);
FACT(DOCA_LOG_LEVEL_DEBUG == 60 && DOCA_LOG_LEVEL_TRACE == 70);
FACT(DOCA_ARGP_TYPE_UNKNOWN == 0 && DOCA_ARGP_TYPE_STRING == 1 && DOCA_ARGP_TYPE_INT == 2);
FACT(DOCA_ARGP_TYPE_BOOLEAN == 3 && DOCA_ARGP_TYPE_DEVICE == 4 && DOCA_ARGP_TYPE_DEVICE_REP == 5);
FACT(DOCA_ARGP_TYPE_DOUBLE == 6);
FACT(DOCA_GPU_SEMAPHORE_STATUS_FREE == 0 && DOCA_GPU_SEMAPHORE_STATUS_READY == 1);
FACT(DOCA_GPU_SEMAPHORE_STATUS_DONE == 2 && DOCA_GPU_SEMAPHORE_STATUS_HOLD == 3);
FACT(DOCA_GPU_SEMAPHORE_STATUS_ERROR == 4 && DOCA_GPU_SEMAPHORE_STATUS_EXIT == 5);
FACT(DOCA_DEVINFO_PCI_ADDR_SIZE == 13 && DOCA_DEVINFO_IBDEV_NAME_SIZE == 64);
FACT(DOCA_DEVINFO_IFACE_NAME_SIZE == 256 && DOCA_DEVINFO_MAC_ADDR_SIZE == 6);
FACT(DOCA_DEVINFO_IPV4_ADDR_SIZE == 4 && DOCA_DEVINFO_REP_VUID_SIZE == 128);
FACT(DOCA_DEVINFO_REP_FILTER_ALL == 0 && DOCA_DEVINFO_REP_FILTER_NET == 2);
FACT(DOCA_DEVINFO_REP_FILTER_EMULATED == 4);
FACT(DOCA_VERSION_MAJOR == 3 && DOCA_VERSION_MINOR == 3);
FACT(DOCA_VERSION_EXACT == ((3u << 24) | (3u << 16) | DOCA_VERSION_PATCH));
FACT(DOCA_VERSION_LTE_CURRENT(3, 0, 0) && !DOCA_VERSION_LTE_CURRENT(3, 4, 0));
FACT(sizeof(union doca_data) == 8);
FACT(sizeof(doca_be16_t) == 2 && sizeof(doca_be32_t) == 4 && sizeof(doca_be64_t) == 8);
FACT(DOCA_HTOBE16(0x0800) == 0x0008);
FACT(DOCA_HTOBE32(0x01020304u) == 0x04030201u);
FACT(DOCA_BETOH64(DOCA_HTOBE64(0x0102030405060708ull)) == 0x0102030405060708ull);
FACT(DOCA_BITFIELD_GET(0xabcdu, 4, 8) == 0xbc);
FACT(DOCA_BITFIELD_SET(0xabcdu, 4, 8, 0x12) == 0xa12d);
FACT(DOCA_BITFIELD_SET(0, 0, 4, 0xff) == 0xf);

/* A struct versioned the way UROM plugin interfaces are. */
struct versioned {
	DOCA_STRUCT_START;
	uint64_t payload;
};
FACT(sizeof(struct versioned) == 16);

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "FAIL: %s\n", what);
		failures++;
	}
}

static doca_error_t first_failure(doca_error_t a, doca_error_t b, doca_error_t c)
{
	doca_error_t result = DOCA_SUCCESS;

	DOCA_ERROR_PROPAGATE(result, a);
	DOCA_ERROR_PROPAGATE(result, b);
	DOCA_ERROR_PROPAGATE(result, c);
	return result;
}

int main(void)
{
	struct versioned v;
	uint8_t bytes[3] = {0, 0, 0};
	int shared = 41;

	check(first_failure(DOCA_SUCCESS, DOCA_ERROR_AGAIN, DOCA_ERROR_FULL) == DOCA_ERROR_AGAIN,
	      "DOCA_ERROR_PROPAGATE keeps the first failure");
	check(first_failure(DOCA_SUCCESS, DOCA_SUCCESS, DOCA_SUCCESS) == DOCA_SUCCESS,
	      "DOCA_ERROR_PROPAGATE keeps success");
	check(DOCA_IS_ERROR(DOCA_ERROR_BAD_STATE) && !DOCA_IS_ERROR(DOCA_SUCCESS), "DOCA_IS_ERROR");

	memset(&v, 0, sizeof(v));
	DOCA_STRUCT_CTOR(v);
	check(v.__doca_api_version == DOCA_VERSION_EXACT, "DOCA_STRUCT_CTOR stamps the version");

	check(strcmp(doca_version(), DOCA_VERSION_STRING) == 0, "doca_version() is DOCA_VERSION_STRING");
	check(strncmp(doca_version(), "3.3.", 4) == 0, "doca_version() starts with 3.3.");

	DOCA_BITFIELD_BYTE_SET(bytes, 9, 1);
	DOCA_BITFIELD_BYTE_SET(bytes, 17, 1);
	DOCA_BITFIELD_BYTE_SET(bytes, 17, 0);
	check(bytes[0] == 0 && bytes[1] == 2 && bytes[2] == 0, "DOCA_BITFIELD_BYTE_SET");
	check(DOCA_BITFIELD_BYTE_GET(bytes, 9) == 1 && DOCA_BITFIELD_BYTE_GET(bytes, 8) == 0,
	      "DOCA_BITFIELD_BYTE_GET");

	DOCA_GPUNETIO_VOLATILE(shared) = DOCA_GPUNETIO_VOLATILE(shared) + 1;
	check(shared == 42, "DOCA_GPUNETIO_VOLATILE reads and writes");

	if (failures != 0)
		return 1;
	printf("header facts: all checks passed\n");
	return 0;
}
