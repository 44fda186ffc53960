/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: API stability markers and versioned-struct helpers.
 *
 * Every public prototype is preceded by DOCA_STABLE, DOCA_EXPERIMENTAL or DOCA_DEPRECATED.
 * Experimental calls are usable only when DOCA_ALLOW_EXPERIMENTAL_API is defined, deprecated
 * ones only with DOCA_ALLOW_DEPRECATED_API; otherwise using one produces a deprecation
 * warning naming that macro.
 *
 * The system headers included here are the ones DOCA 3.3's doca_compat.h includes, so
 * programs that rely on them (assert, calloc/free, memcpy/strnlen, fixed-width integers)
 * compile unchanged.
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doca_config.h"
#include "doca_build_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
/* Exported and kept even when unreferenced (as 3.3 marks every public symbol). */
#define DOCA_SOFT_EXPORT_ __attribute__((visibility("default"), used))
/* Experimental and deprecated symbols live in their own text sections, as in 3.3. */
#define DOCA_SOFT_SECTION_(name) __attribute__((section(name)))
#define DOCA_SOFT_WARN_(msg) __attribute__((deprecated(msg)))
#else
#define DOCA_SOFT_EXPORT_
#define DOCA_SOFT_SECTION_(name)
#define DOCA_SOFT_WARN_(msg)
#endif

#ifndef DOCA_STABLE
#define DOCA_STABLE DOCA_SOFT_EXPORT_
#endif

#ifndef DOCA_EXPERIMENTAL
#ifdef DOCA_ALLOW_EXPERIMENTAL_API
#define DOCA_EXPERIMENTAL DOCA_SOFT_SECTION_(".text.experimental") DOCA_SOFT_EXPORT_
#else
#define DOCA_EXPERIMENTAL                                                                          \
	DOCA_SOFT_SECTION_(".text.experimental")                                                   \
	DOCA_SOFT_EXPORT_ DOCA_SOFT_WARN_("experimental DOCA API: define DOCA_ALLOW_EXPERIMENTAL_API")
#endif
#endif

#ifndef DOCA_DEPRECATED
#ifdef DOCA_ALLOW_DEPRECATED_API
#define DOCA_DEPRECATED DOCA_SOFT_SECTION_(".text.deprecated") DOCA_SOFT_EXPORT_
#else
#define DOCA_DEPRECATED                                                                            \
	DOCA_SOFT_SECTION_(".text.deprecated")                                                     \
	DOCA_SOFT_EXPORT_ DOCA_SOFT_WARN_("deprecated DOCA API: define DOCA_ALLOW_DEPRECATED_API")
#endif
#endif

/* Marks an enumerator that is going away (warns unless DOCA_ALLOW_DEPRECATED_API). */
#ifndef DOCA_DEPRECATED_ENUM
#ifdef DOCA_ALLOW_DEPRECATED_API
#define DOCA_DEPRECATED_ENUM
#else
#define DOCA_DEPRECATED_ENUM DOCA_SOFT_WARN_("deprecated DOCA enumerator: define DOCA_ALLOW_DEPRECATED_API")
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
