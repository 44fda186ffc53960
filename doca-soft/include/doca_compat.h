/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: API stability markers and versioned-struct helpers.
 *
 * Every public prototype is preceded by DOCA_STABLE or DOCA_EXPERIMENTAL. Experimental
 * calls are usable only when DOCA_ALLOW_EXPERIMENTAL_API is defined; otherwise using one
 * produces a deprecation warning naming that macro.
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DOCA_SOFT_EXPORT_ __attribute__((visibility("default")))
#else
#define DOCA_SOFT_EXPORT_
#endif

#ifndef DOCA_STABLE
#define DOCA_STABLE DOCA_SOFT_EXPORT_
#endif

#ifndef DOCA_EXPERIMENTAL
#if defined(DOCA_ALLOW_EXPERIMENTAL_API) || !(defined(__GNUC__) || defined(__clang__))
#define DOCA_EXPERIMENTAL DOCA_SOFT_EXPORT_
#else
#define DOCA_EXPERIMENTAL                                                                          \
	DOCA_SOFT_EXPORT_ __attribute__((deprecated("experimental DOCA API: define DOCA_ALLOW_EXPERIMENTAL_API")))
#endif
#endif

/* Spelling used by some 2.x programs. */
#ifndef __DOCA_EXPERIMENTAL
#define __DOCA_EXPERIMENTAL DOCA_EXPERIMENTAL
#endif

#ifdef DOCA_COMPAT_HELPERS
/*
 * First member of a struct whose layout may grow between versions: it records the API
 * version the caller was built with (DOCA_VERSION_EXACT), so the library can tell.
 */
#define DOCA_STRUCT_START size_t __doca_api_version
/* Stamp a struct declared with DOCA_STRUCT_START (an lvalue) with this API version. */
#define DOCA_STRUCT_CTOR(obj) ((obj).__doca_api_version = DOCA_VERSION_EXACT)
#endif

#ifdef __cplusplus
}
#endif

/* DOCA_VERSION_EXACT, used by DOCA_STRUCT_CTOR, lives here. */
#include "doca_version.h"

#endif /* DOCA_COMPAT_H_ */
