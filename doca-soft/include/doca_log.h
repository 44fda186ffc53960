/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: logging.
 *
 * Messages have a level and a source (a name registered per C file with
 * DOCA_LOG_REGISTER). Backends (stdout/stderr, a FILE *) each keep a level window for
 * application messages and a level for the library's own (SDK) messages; global limits
 * apply on top.
 *
 * doca_log is a library function, as in DOCA 3.3: programs that take its address, and
 * libraries built against these headers, link to the symbol. The library also takes
 * finished messages through doca_soft_log_emit.
 *
 * DOCA_LOG_TRC compiles to nothing unless the program defines DOCA_LOGGING_ALLOW_TRACE
 * before including this header, as in DOCA 3.3.
 */
#ifndef DOCA_LOG_H_
#define DOCA_LOG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_log_backend;

/*
 * Severity; a smaller number is more severe. A backend prints level L when
 * upper_limit <= L <= lower_limit: the lower limit is the least severe level it shows
 * (default INFO), the upper limit the most severe (default CRIT).
 */
enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10,
	DOCA_LOG_LEVEL_CRIT = 20,
	DOCA_LOG_LEVEL_ERROR = 30,
	DOCA_LOG_LEVEL_WARNING = 40,
	DOCA_LOG_LEVEL_INFO = 50,
	DOCA_LOG_LEVEL_DEBUG = 60,
	DOCA_LOG_LEVEL_TRACE = 70,
};

/* Longest formatted message, in bytes with the NUL; longer ones are cut. */
#define DOCA_LOG_MAX_MSG_SIZE 2048

/* Application messages to stdout (and errors to stderr). */
DOCA_STABLE
doca_error_t doca_log_backend_create_standard(void);

/* Application messages to an open FILE. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend);

/* The library's own messages to an open FILE. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);

/* Application messages to an open file descriptor. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend);

/* The library's own messages to an open file descriptor. */
DOCA_STABLE
doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend);

/* Level of library messages a backend prints. */
DOCA_STABLE
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);

DOCA_STABLE
doca_error_t doca_log_backend_get_sdk_level(const struct doca_log_backend *backend, uint32_t *level);

/* Window of application levels a backend prints. */
DOCA_STABLE
doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t lower_level);

DOCA_STABLE
doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_level);

/* Global limits, applied to every backend. */
DOCA_STABLE
doca_error_t doca_log_level_set_global_sdk_limit(uint32_t log_level);

DOCA_STABLE
doca_error_t doca_log_level_set_global_lower_limit(uint32_t log_level);

DOCA_STABLE
doca_error_t doca_log_level_set_global_upper_limit(uint32_t log_level);

DOCA_STABLE
uint32_t doca_log_level_get_global_sdk_limit(void);

DOCA_STABLE
uint32_t doca_log_level_get_global_lower_limit(void);

DOCA_STABLE
uint32_t doca_log_level_get_global_upper_limit(void);

/* Register a source name; *source receives its id for doca_log. */
DOCA_STABLE
doca_error_t doca_log_register_source(const char *source_name, int *source);

DOCA_STABLE
doca_error_t doca_log_unregister_source(int source);

/* Prints one message already formatted (what doca_log does once it has formatted). */
DOCA_STABLE
void doca_soft_log_emit(uint32_t level, int source, const char *file, int line, const char *func, const char *msg);

#if defined(__GNUC__) || defined(__clang__)
#define DOCA_LOG_PRINTF_ATTR_(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define DOCA_LOG_PRINTF_ATTR_(fmt_idx, arg_idx)
#endif

/* Format and print one message from `source` (usually through the DOCA_LOG_* macros). */
DOCA_STABLE
doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func, const char *format, ...)
	DOCA_LOG_PRINTF_ATTR_(6, 7);

/*
 * Register this file's log source under the name SOURCE (any tokens, e.g. APP or
 * APP::MAIN; only its spelling is used). Defines the file-static `log_source` the
 * DOCA_LOG_* macros use and a constructor that registers it before main. Use once per
 * file, at file scope, followed by a semicolon.
 */
#define DOCA_LOG_REGISTER(SOURCE)                                                                  \
	static int log_source = -1;                                                                \
	static void __attribute__((constructor)) doca_log_register_this_file_(void)                \
	{                                                                                          \
		(void)doca_log_register_source(#SOURCE, &log_source);                              \
	}                                                                                          \
	extern int doca_log_register_needs_a_semicolon_

/* Print at `level` (a DOCA_LOG_LEVEL_* value) from this file's source. */
#define DOCA_LOG(level, format, ...)                                                               \
	doca_log(level, log_source, __FILE__, __LINE__, __func__, format, ##__VA_ARGS__)

#define DOCA_LOG_CRIT(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_ERR(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_WARN(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_INFO(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_DBG(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_DEBUG, format, ##__VA_ARGS__)

/*
 * Trace messages cost a call on hot paths, so they exist only in programs that ask for them
 * by defining DOCA_LOGGING_ALLOW_TRACE; otherwise the macro and its arguments vanish.
 */
#ifdef DOCA_LOGGING_ALLOW_TRACE
#define DOCA_LOG_TRC(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_TRACE, format, ##__VA_ARGS__)
#else
#define DOCA_LOG_TRC(format, ...)                                                                  \
	do {                                                                                       \
	} while (0)
#endif

/* Rate-limited variants: this runtime prints every message (no limiting). */
#define DOCA_LOG_RATE_LIMIT_CRIT(format, ...) DOCA_LOG_CRIT(format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_ERR(format, ...) DOCA_LOG_ERR(format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_WARN(format, ...) DOCA_LOG_WARN(format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_INFO(format, ...) DOCA_LOG_INFO(format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_DBG(format, ...) DOCA_LOG_DBG(format, ##__VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_TRC(format, ...) DOCA_LOG_TRC(format, ##__VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
