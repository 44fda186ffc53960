/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A program that relies on the system headers DOCA 3.3's headers include: each section
 * includes ONE DOCA header and uses what that header brings in with it (no system header
 * of its own), as programs written against the real SDK do. Built as C and as C++ by
 * tests/header_includes.rs, once per section (-DSECTION_<NAME>) and once with every header
 * (no SECTION_ macro), then run: the exit status is 0 only if every check holds.
 *
 * Needs no library: only header macros and inline helpers are used.
 */

#if defined(SECTION_COMPAT)
/* doca_compat.h: assert.h stdint.h stdlib.h string.h */
#include <doca_compat.h>
static int check(void)
{
	uint32_t *words = (uint32_t *)calloc(4, sizeof(*words));
	uint32_t src[4] = {1, 2, 3, 4};
	char text[8] = {'a', 'b', '\0', 'x', 'x', 'x', 'x', 'x'};
	int bad;

	assert(words != NULL);
	if (words == NULL)
		return 1;
	memcpy(words, src, sizeof(src));
	bad = words[3] != 4 || strnlen(text, 2) != 2 || strnlen(text, sizeof(text)) != 2;
	free(words);
	return bad;
}

#elif defined(SECTION_PE)
/* doca_pe.h: stdint.h stdlib.h */
#include <doca_pe.h>
static int check(void)
{
	uint8_t *bytes = (uint8_t *)malloc(16);
	int bad;

	if (bytes == NULL)
		return 1;
	bytes[15] = UINT8_MAX;
	bad = bytes[15] != 255;
	free(bytes);
	return bad;
}

#elif defined(SECTION_ARGP)
/* doca_argp.h: stdarg.h */
#include <doca_argp.h>
static int sum(int n, ...)
{
	va_list ap;
	int total = 0;

	va_start(ap, n);
	while (n-- > 0)
		total += va_arg(ap, int);
	va_end(ap);
	return total;
}
static int check(void)
{
	return sum(3, 1, 2, 3) != 6;
}

#elif defined(SECTION_BITFIELD)
/* doca_bitfield.h: arpa/inet.h */
#include <doca_bitfield.h>
static int check(void)
{
	uint16_t port = htons(0x1234);
	uint32_t addr = htonl(0x0a000001u);

	return ntohs(port) != 0x1234 || ntohl(addr) != 0x0a000001u ||
	       ((const unsigned char *)&port)[0] != 0x12 || ((const unsigned char *)&addr)[3] != 0x01;
}

#elif defined(SECTION_FLOW)
/* doca_flow.h: stdbool.h stdint.h stdio.h */
#include <doca_flow.h>
static int check(void)
{
	bool yes = true;
	char text[16];
	FILE *out = stdout;
	uint16_t queue = 7;

	snprintf(text, sizeof(text), "q%u", (unsigned)queue);
	return !yes || out == NULL || text[0] != 'q' || text[1] != '7' || text[2] != '\0';
}

#elif defined(SECTION_FLOW_NET)
/* doca_flow_net.h: stdbool.h stdint.h (and doca_types.h: linux/types.h) */
#include <doca_flow_net.h>
static int check(void)
{
	bool no = false;
	uint32_t word = UINT32_MAX;
	__u16 kernel_half = 0xffff;

	return no || word != 0xffffffffu || kernel_half != 0xffff;
}

#elif defined(SECTION_GPUNETIO)
/* doca_gpunetio.h: inttypes.h stddef.h */
#include <doca_gpunetio.h>
struct pair {
	char c;
	uint64_t v;
};
static int check(void)
{
	const char *fmt = "%" PRIu64 " %" PRIx32;
	size_t off = offsetof(struct pair, v);
	uint64_t x = 5;

	DOCA_GPUNETIO_VOLATILE(x) = 6;
	return fmt[0] != '%' || off != 8 || x != 6;
}

#elif defined(SECTION_ETH_DEF)
/* doca_gpunetio_eth_def.h: stdio.h stdint.h assert.h and rdma-core's infiniband/mlx5dv.h
 * (which brings pthread.h, errno.h, inttypes.h and the mlx5 structs). */
#include <doca_gpunetio_eth_def.h>
static int check(void)
{
	struct mlx5_cqe64 cqe;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	const char *fmt = "%" PRIu64;
	FILE *err = stderr;
	int code = EINVAL;
	size_t i;

	for (i = 0; i < sizeof(cqe); i++)
		((unsigned char *)&cqe)[i] = 0;
	cqe.op_own = 0xf1;
	assert(cqe.op_own == 0xf1);
	(void)lock;
	return sizeof(cqe) != 64 || cqe.op_own != 0xf1 || fmt[0] != '%' || err == NULL || code == 0;
}

#elif defined(SECTION_LOG)
/* doca_log.h: stddef.h stdint.h stdio.h */
#include <doca_log.h>
static int check(void)
{
	char text[8];
	size_t n = sizeof(text);
	int64_t v = -3;
	FILE *out = stdout;

	snprintf(text, n, "%d", (int)v);
	return out == NULL || text[0] != '-' || text[1] != '3';
}

#elif defined(SECTION_TYPES)
/* doca_types.h: linux/types.h stdint.h */
#include <doca_types.h>
static int check(void)
{
	__u32 k32 = 0x01020304u;
	__be64 big = 0;
	doca_be16_t be16 = 0;
	uint64_t wide = UINT64_MAX;

	return k32 != 0x01020304u || big != 0 || be16 != 0 || wide != 0xffffffffffffffffull ||
	       sizeof(doca_be64_t) != 8;
}

#elif defined(SECTION_VERSION)
/* doca_version.h: stddef.h */
#include <doca_version.h>
struct two {
	char a;
	int b;
};
static int check(void)
{
	size_t off = offsetof(struct two, b);
	const char *v = doca_version();

	return off != sizeof(int) || v == NULL || v[0] != '3';
}

#else
/* Every header at once: the declarations coexist and the inherited names are all there. */
#include <doca_argp.h>
#include <doca_bitfield.h>
#include <doca_buf.h>
#include <doca_buf_array.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_gpu_data_path.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_gpu_data_path.h>
#include <doca_flow.h>
#include <doca_flow_net.h>
#include <doca_gpunetio.h>
#include <doca_gpunetio_eth_def.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_rdma_bridge.h>
#include <doca_types.h>
#include <doca_uar.h>
#include <doca_umem.h>
#include <doca_verbs.h>
#include <doca_verbs_bridge.h>
#include <doca_version.h>
static int first_arg(int n, ...)
{
	va_list ap;
	int v;

	va_start(ap, n);
	v = va_arg(ap, int);
	va_end(ap);
	return v;
}
static int check(void)
{
	char *copy = (char *)calloc(8, 1);
	const char *fmt = "%" PRIu64;
	bool ok;
	FILE *out = stdout;
	__u32 k = 1;
	struct ibv_pd *pd = NULL;
	struct rdma_cm_id *cm = NULL;

	assert(copy != NULL);
	if (copy == NULL)
		return 1;
	memcpy(copy, "doca", 5);
	ok = strnlen(copy, 8) == 4 && ntohs(htons(0x0800)) == 0x0800 && first_arg(1, 42) == 42 &&
	     fmt[0] == '%' && out != NULL && k == 1 && pd == NULL && cm == NULL;
	free(copy);
	return !ok;
}
#endif

int main(void)
{
	return check() == 0 ? 0 : 1;
}
