/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Adversarial cases of doca_argp: parameters registered twice or destroyed after
 * registration, stale and bogus parameter pointers, calls out of order, hostile command
 * lines. See adversarial.h for the harness.
 */
#include <doca_argp.h>

#include "adversarial.h"

static doca_error_t take_string(void *param, void *config)
{
	(void)config;
	return param != NULL ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

/* A complete string parameter named name. */
static struct doca_argp_param *string_param(const char *name)
{
	struct doca_argp_param *p = NULL;

	if (doca_argp_param_create(&p) != DOCA_SUCCESS)
		return NULL;
	doca_argp_param_set_long_name(p, name);
	doca_argp_param_set_description(p, "a string");
	doca_argp_param_set_callback(p, take_string);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	return p;
}

static int register_twice_is_an_error(void)
{
	struct doca_argp_param *p;

	ADV_EXPECT(doca_argp_init("adv", NULL), DOCA_SUCCESS);
	p = string_param("name");
	ADV_CHECK(p != NULL);
	ADV_EXPECT(doca_argp_register_param(p), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_register_param(p), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_argp_destroy(), DOCA_SUCCESS);
	return 0;
}

static int destroy_of_a_registered_param_is_an_error(void)
{
	struct doca_argp_param *p;

	ADV_EXPECT(doca_argp_init("adv", NULL), DOCA_SUCCESS);
	p = string_param("name");
	ADV_CHECK(p != NULL);
	ADV_EXPECT(doca_argp_register_param(p), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_param_destroy(p), DOCA_ERROR_BAD_STATE);
	/* Setters on it are ignored (logged): argp owns it. */
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_INT);
	ADV_EXPECT(doca_argp_destroy(), DOCA_SUCCESS);
	/* The parser freed it with itself. */
	ADV_EXPECT(doca_argp_param_destroy(p), DOCA_ERROR_INVALID_VALUE);
	return 0;
}

static int stale_and_bogus_params(void)
{
	struct doca_argp_param *p = NULL;

	ADV_EXPECT(doca_argp_param_create(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_param_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_register_param(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_param_create(&p), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_param_destroy(p), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_param_destroy(p), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_register_param(p), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_param_destroy((struct doca_argp_param *)ADV_BOGUS), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_register_param((struct doca_argp_param *)ADV_BOGUS), DOCA_ERROR_INVALID_VALUE);
	doca_argp_param_set_long_name((struct doca_argp_param *)ADV_BOGUS, "x"); /* logged */
	doca_argp_param_set_long_name(NULL, "x");                                  /* logged */
	return 0;
}

static int calls_out_of_order(void)
{
	char prog[] = "adv";
	char *argv[] = {prog, NULL};

	ADV_EXPECT(doca_argp_start(1, argv), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_argp_register_validation_callback(NULL), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_argp_init(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_init("adv", NULL), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_init("adv", NULL), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_argp_register_validation_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_register_version_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_destroy(), DOCA_SUCCESS);
	return 0;
}

static int hostile_command_lines(void)
{
	char prog[] = "adv", opt[] = "--name", unknown[] = "--no-such-flag", empty[] = "";
	char *with_null[] = {prog, NULL, NULL};
	char *dangling[] = {prog, opt, NULL};
	char *bad[] = {prog, unknown, empty, NULL};
	struct doca_argp_param *p;

	ADV_EXPECT(doca_argp_init("adv", NULL), DOCA_SUCCESS);
	p = string_param("name");
	ADV_CHECK(p != NULL);
	ADV_EXPECT(doca_argp_register_param(p), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_start(-1, with_null), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_start(1, NULL), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_start(2, dangling), DOCA_ERROR_INVALID_VALUE); /* value missing */
	ADV_EXPECT(doca_argp_start(3, bad), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_start(2, with_null), DOCA_ERROR_INVALID_VALUE); /* NULL entry */
	ADV_EXPECT(doca_argp_destroy(), DOCA_SUCCESS);
	return 0;
}

static int duplicate_and_incomplete_params(void)
{
	struct doca_argp_param *a, *b, *c = NULL;

	ADV_EXPECT(doca_argp_init("adv", NULL), DOCA_SUCCESS);
	a = string_param("same");
	b = string_param("same");
	ADV_CHECK(a != NULL && b != NULL);
	ADV_EXPECT(doca_argp_register_param(a), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_register_param(b), DOCA_ERROR_INVALID_VALUE);
	ADV_EXPECT(doca_argp_param_create(&c), DOCA_SUCCESS);
	ADV_EXPECT(doca_argp_register_param(c), DOCA_ERROR_INVALID_VALUE); /* no name or callback */
	/* Both refused parameters belong to argp now; destroy frees them once. */
	ADV_EXPECT(doca_argp_param_destroy(b), DOCA_ERROR_BAD_STATE);
	ADV_EXPECT(doca_argp_destroy(), DOCA_SUCCESS);
	return 0;
}

static const struct adv_case cases[] = {
	ADV_CASE(register_twice_is_an_error),
	ADV_CASE(destroy_of_a_registered_param_is_an_error),
	ADV_CASE(stale_and_bogus_params),
	ADV_CASE(calls_out_of_order),
	ADV_CASE(hostile_command_lines),
	ADV_CASE(duplicate_and_incomplete_params),
};

ADV_MAIN(cases)
