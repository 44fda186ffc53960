/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Adversarial cases of the memory family: doca_mmap, doca_buf_inventory, doca_buf and
 * doca_buf_arr under NULL arguments, wrong states, windows outside the memory, and sizes
 * too large to allocate. See adversarial.h for the harness.
 */
#include <doca_buf.h>
#include <doca_buf_array.h>
#include <doca_buf_inventory.h>
#include <doca_mmap.h>

#include "adversarial.h"

/* Exported by the runtime (an inventory grows by num_elements); not in doca_buf_inventory.h. */
doca_error_t doca_buf_inventory_expand(struct doca_buf_inventory *inventory, uint32_t num_elements);

static char memory[4096];

/* A started mmap over memory. */
static struct doca_mmap *started_mmap(void)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(&m) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(m, memory, sizeof(memory)) != DOCA_SUCCESS ||
	    doca_mmap_start(m) != DOCA_SUCCESS)
		return NULL;
	return m;
}

/* Creates and starts an inventory of n buffers; 0 on success. */
static int start_inventory(uint32_t n, struct doca_buf_inventory **inv)
{
	ADV_EXPECT(doca_buf_inventory_create(n, inv), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_start(*inv), DOCA_SUCCESS);
	return 0;
}

/* Stops and destroys inv, then destroys m: a case's last step (0 when all succeed). */
static int stop_inventory_and_mmap(struct doca_buf_inventory *inv, struct doca_mmap *m)
{
	ADV_EXPECT(doca_buf_inventory_stop(inv), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_destroy(inv), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_destroy(m), DOCA_SUCCESS);
	return 0;
}

static int mmap_null_arguments(void)
{
	struct doca_mmap *m = NULL;
	void *addr;
	size_t len;

	ADV_EXPECT(doca_mmap_create(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_start(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_create(&m), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_set_memrange(m, NULL, 64), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_set_memrange(m, memory, 0), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_get_memrange(m, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_get_memrange(m, &addr, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_add_dev(m, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_destroy(m), DOCA_SUCCESS);
	return 0;
}

static int mmap_wrong_states(void)
{
	struct doca_mmap *m = NULL;

	ADV_EXPECT(doca_mmap_create(&m), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_start(m), DOCA_ERROR_BAD_STATE); /* no memory range */
	ADV_EXPECT(doca_mmap_stop(m), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_mmap_set_memrange(m, memory, sizeof(memory)), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_start(m), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_start(m), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_mmap_set_memrange(m, memory, 16), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_mmap_destroy(m), DOCA_SUCCESS);
	return 0;
}

static int mmap_range_wrapping_the_address_space(void)
{
	struct doca_mmap *m = NULL;

	ADV_EXPECT(doca_mmap_create(&m), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_set_memrange(m, (void *)(uintptr_t)(UINTPTR_MAX - 15), 64),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_set_memrange(m, memory, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_mmap_destroy(m), DOCA_SUCCESS);
	return 0;
}

static int inventory_null_and_zero(void)
{
	struct doca_buf_inventory *inv = NULL;
	uint32_t n;

	ADV_EXPECT(doca_buf_inventory_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_create(0, &inv), DOCA_ERROR_INVALID_VALUE);
	ADV_CHECK(inv == NULL);
	ADV_EXPECT(doca_buf_inventory_create((size_t)UINT32_MAX + 1, &inv), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_start(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_expand(NULL, 4), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_get_num_elements(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_create(4, &inv), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_get_num_elements(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_get_num_free_elements(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_expand(inv, 0), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_destroy(inv), DOCA_SUCCESS);
	return 0;
}

/* Sizes a caller controls must fail with NO_MEMORY, never abort the process. */
static int inventory_too_large_to_allocate(void)
{
	struct doca_buf_inventory *inv = NULL;
	doca_error_t r;
	uint32_t n = 0;

	r = doca_buf_inventory_create(((size_t)1 << 31) - 1, &inv);
	if (r == DOCA_SUCCESS) {
		/* A machine with that much memory: it must work, then go. */
		ADV_EXPECT(doca_buf_inventory_start(inv), DOCA_SUCCESS);
		ADV_EXPECT(doca_buf_inventory_stop(inv), DOCA_SUCCESS);
		ADV_EXPECT(doca_buf_inventory_destroy(inv), DOCA_SUCCESS);
	} else {
		ADV_EXPECT(r, DOCA_ERROR_NO_MEMORY);
		ADV_CHECK(inv == NULL);
	}
	ADV_CHECK(start_inventory(8, &inv) == 0);
	ADV_EXPECT(doca_buf_inventory_expand(inv, UINT32_MAX), DOCA_ERROR_NO_MEMORY);
	ADV_EXPECT(doca_buf_inventory_get_num_elements(inv, &n), DOCA_SUCCESS);
	ADV_CHECK(n == 8);
	ADV_EXPECT(doca_buf_inventory_stop(inv), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_destroy(inv), DOCA_SUCCESS);
	return 0;
}

static int inventory_wrong_states(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *m = started_mmap();
	struct doca_buf *b = NULL;

	ADV_CHECK(m != NULL);
	ADV_EXPECT(doca_buf_inventory_create(2, &inv), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_stop(inv), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, 16, &b), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_buf_inventory_start(inv), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_start(inv), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, 16, &b), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_stop(inv), DOCA_ERROR_IN_USE);
	ADV_EXPECT(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);
	ADV_EXPECT(doca_buf_dec_refcount(b, NULL), DOCA_SUCCESS);
	return stop_inventory_and_mmap(inv, m);
}

static int inventory_windows_outside_the_mmap(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *m = started_mmap();
	struct doca_buf *b = NULL;

	ADV_CHECK(m != NULL);
	ADV_CHECK(start_inventory(2, &inv) == 0);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory + 4000, 200, &b),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, SIZE_MAX, &b),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_args(inv, m, memory, 64, memory + 32, 64, &b),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, 16, NULL),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, NULL, memory, 16, &b),
		   DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(NULL, m, memory, 16, &b),
		   DOCA_ERROR_INVALID_VALUE);
	return stop_inventory_and_mmap(inv, m);
}

static int inventory_runs_out(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *m = started_mmap();
	struct doca_buf *a = NULL, *b = NULL;

	ADV_CHECK(m != NULL);
	ADV_CHECK(start_inventory(1, &inv) == 0);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, 16, &a), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, 16, &b), DOCA_ERROR_NO_MEMORY);
	ADV_EXPECT(doca_buf_inventory_expand(inv, 1), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, 16, &b), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_dec_refcount(a, NULL), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_dec_refcount(b, NULL), DOCA_SUCCESS);
	return stop_inventory_and_mmap(inv, m);
}

static int buf_null_and_bad_data(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *m = started_mmap();
	struct doca_buf *b = NULL;
	size_t len;
	void *p;
	uint16_t rc;

	ADV_EXPECT(doca_buf_get_len(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_get_data(NULL, &p), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_dec_refcount(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_inc_refcount(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
	ADV_CHECK(m != NULL);
	ADV_CHECK(start_inventory(2, &inv) == 0);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_args(inv, m, memory, 64, memory, 8, &b), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_get_len(b, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_set_data_len(b, 65), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_set_data_len(b, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_set_data(b, memory + 60, 8), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_set_data(b, memory, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_set_data(b, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_chain_list(b, b), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_chain_list(b, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_dec_refcount(b, &rc), DOCA_SUCCESS);
	ADV_CHECK(rc == 0);
	return stop_inventory_and_mmap(inv, m);
}

static int buf_refcount_saturates(void)
{
	struct doca_buf_inventory *inv = NULL;
	struct doca_mmap *m = started_mmap();
	struct doca_buf *b = NULL;
	uint16_t rc = 0;
	uint32_t i;

	ADV_CHECK(m != NULL);
	ADV_CHECK(start_inventory(1, &inv) == 0);
	ADV_EXPECT(doca_buf_inventory_buf_get_by_data(inv, m, memory, 16, &b), DOCA_SUCCESS);
	for (i = 1; i < UINT16_MAX; i++)
		ADV_EXPECT(doca_buf_inc_refcount(b, &rc), DOCA_SUCCESS);
	ADV_CHECK(rc == UINT16_MAX);
	/* One more would wrap the 16-bit count to 0 and free a buffer still in use. */
	ADV_CHECK(doca_buf_inc_refcount(b, &rc) != DOCA_SUCCESS);
	for (i = 0; i < UINT16_MAX; i++)
		ADV_EXPECT(doca_buf_dec_refcount(b, &rc), DOCA_SUCCESS);
	ADV_CHECK(rc == 0);
	return stop_inventory_and_mmap(inv, m);
}

static int buf_arr_bad_parameters(void)
{
	struct doca_buf_arr *arr = NULL;
	struct doca_mmap *m = started_mmap();
	struct doca_gpu_buf_arr *g = NULL;

	ADV_CHECK(m != NULL);
	ADV_EXPECT(doca_buf_arr_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_arr_create(0, &arr), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_arr_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_arr_start(NULL), DOCA_ERROR_INVALID_VALUE);
	/* The elements are checked against the memory at start: SIZE_MAX elements of 64 bytes
	 * overflow, which must be refused, not wrapped. */
	ADV_EXPECT(doca_buf_arr_create(SIZE_MAX, &arr), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_arr_set_params(arr, m, 64, 0), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
	arr = NULL;
	ADV_EXPECT(doca_buf_arr_create(4, &arr), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE); /* no params */
	ADV_EXPECT(doca_buf_arr_set_params(arr, NULL, 64, 0), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_arr_set_params(arr, m, SIZE_MAX, 0), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_arr_set_params(arr, m, 2048, UINT64_MAX), DOCA_SUCCESS);
	ADV_EXPECT(doca_buf_arr_start(arr), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_buf_arr_get_gpu_handle(arr, &g), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
	ADV_EXPECT(doca_mmap_destroy(m), DOCA_SUCCESS);
	return 0;
}

static const struct adv_case cases[] = {
	ADV_CASE(mmap_null_arguments),
	ADV_CASE(mmap_wrong_states),
	ADV_CASE(mmap_range_wrapping_the_address_space),
	ADV_CASE(inventory_null_and_zero),
	ADV_CASE(inventory_too_large_to_allocate),
	ADV_CASE(inventory_wrong_states),
	ADV_CASE(inventory_windows_outside_the_mmap),
	ADV_CASE(inventory_runs_out),
	ADV_CASE(buf_null_and_bad_data),
	ADV_CASE(buf_refcount_saturates),
	ADV_CASE(buf_arr_bad_parameters),
};

ADV_MAIN(cases)
