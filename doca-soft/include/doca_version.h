/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: API version this header set describes, and the runtime's version.
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>

#include "doca_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_VERSION_MAJOR 3
#define DOCA_VERSION_MINOR 3
#define DOCA_VERSION_PATCH 0

/* Turns the numeric parts into text without repeating them. */
#define DOCA_VERSION_TEXT_(x) #x
#define DOCA_VERSION_TEXT(x) DOCA_VERSION_TEXT_(x)

/* "MAJOR.MINOR.PATCH" of the headers in use. */
#define DOCA_VERSION_STRING                                                                        \
	DOCA_VERSION_TEXT(DOCA_VERSION_MAJOR)                                                      \
	"." DOCA_VERSION_TEXT(DOCA_VERSION_MINOR) "." DOCA_VERSION_TEXT(DOCA_VERSION_PATCH)

/* One number ordering versions: major in bits 24-31, minor in 16-23, patch in 0-15. */
#define DOCA_VERSION_NUMBER(major, minor, patch)                                                   \
	((size_t)(((size_t)(major) << 24) | ((size_t)(minor) << 16) | (size_t)(patch)))
#define DOCA_VERSION_EXACT DOCA_VERSION_NUMBER(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)

/* Compile-time comparisons against the headers' version. */
#define DOCA_VERSION_EQ_CURRENT(major, minor, patch)                                               \
	(DOCA_VERSION_NUMBER(major, minor, patch) == DOCA_VERSION_EXACT)
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch)                                              \
	(DOCA_VERSION_NUMBER(major, minor, patch) <= DOCA_VERSION_EXACT)

/* Version of the headers the program was compiled with. */
static inline const char *doca_version(void)
{
	return DOCA_VERSION_STRING;
}

/* Version of the library the program runs with. */
DOCA_STABLE
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
