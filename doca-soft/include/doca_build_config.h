/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * doca-soft: options the runtime was built with.
 *
 * DOCA 3.3's doca_compat.h includes a header of this name; programs never read it
 * directly. doca-soft has no build options a program could test, so it only marks which
 * runtime the headers belong to.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

/* The headers come from the software runtime (see also DOCA_SOFT in doca_config.h). */
#ifndef DOCA_SOFT_BUILD_CONFIG
#define DOCA_SOFT_BUILD_CONFIG 1
#endif

#endif /* DOCA_BUILD_CONFIG_H_ */
