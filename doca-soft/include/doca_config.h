/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: build configuration of the software DOCA runtime.
 *
 * Turning on DOCA_COMPAT_HELPERS makes the versioned-struct helpers of doca_compat.h
 * (DOCA_STRUCT_START / DOCA_STRUCT_CTOR) available, as DOCA 3.x does.
 */
#ifndef DOCA_CONFIG_H_
#define DOCA_CONFIG_H_

#ifndef DOCA_COMPAT_HELPERS
#define DOCA_COMPAT_HELPERS 1
#endif

/* This runtime is built from Rust, not from the SDK: programs can test for it. */
#ifndef DOCA_SOFT
#define DOCA_SOFT 1
#endif

#endif /* DOCA_CONFIG_H_ */
