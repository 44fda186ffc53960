/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: command-line parsing for DOCA programs.
 *
 * A program describes each flag with a doca_argp_param (names, type, callback), registers
 * it, then calls doca_argp_start. Each callback receives a pointer to the parsed value
 * (char *, int *, bool *, double *) and the config pointer given to doca_argp_init.
 * The general flags -h/--help, -l/--log-level and --sdk-log-level are always there.
 */
#ifndef DOCA_ARGP_H_
#define DOCA_ARGP_H_

#include <stdarg.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_log.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_argp_param;

/* Type of a flag's value. */
enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING,
	DOCA_ARGP_TYPE_INT,
	DOCA_ARGP_TYPE_BOOLEAN,
	DOCA_ARGP_TYPE_DEVICE,
	DOCA_ARGP_TYPE_DEVICE_REP,
	DOCA_ARGP_TYPE_DOUBLE,
};

/* Receives the parsed value and the program config. */
typedef doca_error_t (*doca_argp_param_cb_t)(void *param, void *config);

/* Checks the whole config after parsing. */
typedef doca_error_t (*doca_argp_validation_cb_t)(void *config);

/* Start a parser for program_name; program_config is passed to every callback. */
DOCA_STABLE
doca_error_t doca_argp_init(const char *program_name, void *program_config);

DOCA_STABLE
doca_error_t doca_argp_param_create(struct doca_argp_param **param);

/* Only for a parameter that was never registered. */
DOCA_STABLE
doca_error_t doca_argp_param_destroy(struct doca_argp_param *param);

/* Single-letter flag name, without the dash. */
DOCA_STABLE
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);

/* Long flag name, without the dashes. */
DOCA_STABLE
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);

/* Name of the value in the usage text, e.g. "<PCI address>". */
DOCA_STABLE
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);

DOCA_STABLE
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);

DOCA_STABLE
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback);

DOCA_STABLE
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);

/* Parsing fails when a mandatory flag is missing. */
DOCA_STABLE
void doca_argp_param_set_mandatory(struct doca_argp_param *param);

/* Accept the flag only on the command line. */
DOCA_STABLE
void doca_argp_param_set_cli_only(struct doca_argp_param *param);

/* Allow the flag more than once (the callback runs for each). */
DOCA_STABLE
void doca_argp_param_set_multiplicity(struct doca_argp_param *param);

/* Hand a configured parameter to the parser, which then owns it. */
DOCA_STABLE
doca_error_t doca_argp_register_param(struct doca_argp_param *input_param);

/* Called for --version. */
DOCA_STABLE
doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback);

/* Called once after every flag was parsed. */
DOCA_STABLE
doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback);

/* Parse argv and run the callbacks. */
DOCA_STABLE
doca_error_t doca_argp_start(int argc, char **argv);

/* Free the parser and every registered parameter. */
DOCA_STABLE
doca_error_t doca_argp_destroy(void);

/* Print the usage text. */
DOCA_STABLE
void doca_argp_usage(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ARGP_H_ */
